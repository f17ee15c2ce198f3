"""The web UI's runtime and event handlers: the advisor, background warm-up, backend health, and one
handler per user action (ask, new chat, vote, comment, open a source, recommend, export, library).

``Runtime`` holds the ``Advisor`` and starts the answering (``app.web.answering``: answer workers, one
per core, or this process) in a background thread so the page is usable at once. Handlers are thin: the
ones that compute (ask, recommend, library, open a source) are async and await the answering, so no
thread waits for a worker; they hand the results to ``app.web.answer_view`` /
``app.web.panels`` / ``app.web.render`` (which escape every user or document string). The conversation lives in the
browser (``gr.BrowserState``) as ``{"messages", "turns", "answers"}``: chat messages, the ``Turn`` list
passed to the advisor as history, and per assistant message its id and ``Answer`` (for 👍/👎, export and
the source panel). A question over the length limit, or one more than the UI accepts at once
(``web.max_pending``), is answered at once with a message, and the input keeps its text.

Deliberately left out: layout and wiring (``app.web.ui``), answer logic (``app.pipeline``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import gradio as gr

from app.llm.backends import Health, LLMUnavailable, check_backend
from app.models import Answer, Citation, Profile, Recommendation, Turn
from app.pipeline import Advisor, QuestionError
from app.web import panels as web_panels
from app.web import render
from app.web.answer_view import answer_markdown, answer_plain, stopped_markdown
from app.web.answering import WARM_UP_WAIT_S, Answering, until_stopped, worker_count
from app.web.feedback_db import LazyStore
from app.web.feedback_ui import FeedbackHandlers
from app.web.i18n import UNSET, form_facets, t
from app.web.source_panel import panel_html
from app.web.stages import StageLog, Stages
from core.settings import Settings
from ingest.store import IndexUnavailable

log = logging.getLogger(__name__)

HEALTH_TTL_S = 20.0  # backend health is re-checked at most this often
_SHOWN_QUESTION_CHARS = 600  # an over-long question is echoed shortened; the error states the limit
Conversation = dict[str, Any]


def empty_conversation() -> Conversation:
    return {"messages": [], "turns": [], "answers": {}}


def _session(request: gr.Request | None) -> str:
    return str(getattr(request, "session_hash", None) or "")


def _shown(question: str) -> str:
    """A question as echoed in the chat: an over-long one is cut (the error states its length)."""
    return question if len(question) <= _SHOWN_QUESTION_CHARS else question[:_SHOWN_QUESTION_CHARS] + " …"


def backend_label(backend: str, lang: str, health: Health | None = None) -> str:
    names = {"extractive": ("Extractive (offline)", "抽出型（オフライン）"), "openai": ("OpenAI-compatible",) * 2}
    en, ja = names.get(backend, ("Ollama", "Ollama"))
    label = ja if lang == "ja" else en
    return label if health is None or health.ok else f"{label} — {t('unavailable', lang)}"


class Runtime(FeedbackHandlers):
    """The advisor, where it answers, and whether its models are loaded (set by the background warm-up).

    ``workers``: answer worker processes; ``None`` = ``web.answer_workers`` (default one per core).
    """

    def __init__(self, settings: Settings, advisor: Advisor, workers: int | None = None) -> None:
        self.settings = settings
        self.advisor = advisor
        self.answering = Answering(settings, advisor, worker_count(settings) if workers is None else workers)
        self.ready = threading.Event()
        self.model_error: str | None = None
        self._health: dict[str, tuple[float, Health]] = {}
        # sessions with an answer on its way: their Stop, and the loop it waits on
        self._running: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}
        self._discarded: set[str] = set()  # ...of which these were cleared (New chat): nothing more is shown
        self.stages = StageLog(settings.web.stage_log)
        self.feedback = LazyStore(settings)
        threading.Thread(target=self._warm_up, name="advisor-warm-up", daemon=True).start()

    def _warm_up(self) -> None:
        try:
            self.answering.start()
            log.info("answering: %s", self.answering.mode)
        except IndexUnavailable:
            pass  # the models loaded; only the index is missing, which the status line reports itself
        except Exception as exc:
            log.exception("warm-up failed")
            self.model_error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ready.set()

    async def _until_ready(self) -> None:
        """Wait for the warm-up without holding a thread (it only waits while the models load)."""
        deadline = time.monotonic() + WARM_UP_WAIT_S
        while not self.ready.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)

    def close(self) -> None:
        """Stop the answer workers (the UI's process ends them too, by closing their pipes as it exits)."""
        self.answering.close()
        self.feedback.close()

    # --- status and backends ---------------------------------------------------------------------
    def status(self, lang: str = "en") -> str:
        if not self.ready.is_set():
            return render.status_line(None, loading=True, lang=lang)
        if self.model_error:
            return render.status_error(f"the models failed to load ({self.model_error}); see the server log", lang)
        try:
            return render.status_line(self.advisor.status(), lang=lang)
        except IndexUnavailable as exc:
            return render.status_error(str(exc), lang)
        except Exception:
            log.exception("status failed")
            return render.internal_error(lang)

    def health(self, backend: str) -> Health:
        now = time.monotonic()
        cached = self._health.get(backend)
        if cached is None or now - cached[0] > HEALTH_TTL_S:
            cached = (now, check_backend(self.settings, backend))
            self._health[backend] = cached
        return cached[1]

    def backend_choices(self, lang: str, check: bool = True, chosen: str | None = None) -> list[tuple[str, str]]:
        """(label, value) per backend offered: the extractive one always, an LLM backend while its server
        answers its health check. ``chosen`` (the user's or the configured one) stays listed, marked
        unavailable, so the choice stays valid; its answer then says what to do. ``check=False`` (the page as
        built, which API clients call with any backend): all, unchecked; the page's load narrows them."""
        if not check:
            return [(backend_label(b, lang), b) for b in ("extractive", "openai", "ollama")]
        offered = []
        for b in ("extractive", "openai", "ollama"):
            health = self.health(b) if check and b != "extractive" else None
            if b == "extractive" or (health is not None and health.ok):
                offered.append((backend_label(b, lang), b))
            elif b == chosen:
                offered.append((backend_label(b, lang, health), b))
        return offered

    def backend_update(self, lang: str, chosen: str | None = None) -> Any:
        return gr.update(choices=self.backend_choices(lang, chosen=chosen))

    # --- chat ------------------------------------------------------------------------------------
    def stop(self, request: gr.Request | None = None, *, discard: bool = False) -> None:
        """Stop the session's running answer at once: what arrived is kept and marked stopped (``discard``:
        New chat, nothing more of it is shown). Safe from any thread: the event is set on its own loop."""
        session = _session(request)
        running = self._running.get(session)
        if running is not None:
            if discard:
                self._discarded.add(session)
            loop, event = running
            loop.call_soon_threadsafe(event.set)

    async def respond(
        self,
        question: str,
        backend: str,
        k: float,
        lang: str,
        conv: Conversation | None,
        request: gr.Request | None = None,
    ) -> AsyncGenerator[Any, None]:
        """Chat handler: yields (textbox, chatbot, passages, feedback note, conversation) as the answer streams.

        The conversation is updated with every partial answer, so a stopped answer stays in it. A question
        over the limit, or one the UI has no room for, is answered with a message at once, and the textbox
        keeps it. Stop (``stop``) ends the answer at once, without Gradio's cancel (which leaves the outputs
        in an error state): the part in flight is not waited for, what arrived stays, marked stopped, and
        the question goes back into the box.
        """
        session = _session(request)
        self._discarded.discard(session)
        self._running[session] = (asyncio.get_running_loop(), asyncio.Event())
        try:
            async with aclosing(
                self._respond(question, backend, k, lang, conv or empty_conversation(), session)
            ) as out:
                async for update in out:
                    yield update
        finally:
            self._running.pop(session, None)
            self._discarded.discard(session)

    async def _respond(
        self, question: str, backend: str, k: float, lang: str, conv: Conversation, session: str
    ) -> AsyncGenerator[Any, None]:
        question = question or ""
        if not question.strip():
            yield (gr.skip(),) * 5
            return
        messages = [*conv["messages"], {"role": "user", "content": render.question_markdown(_shown(question))}]
        refused = self._refusal(question, lang)
        if refused is not None:
            messages.append({"role": "assistant", "content": render.unrated(f"⚠️ {refused}")})
            yield gr.skip(), messages, gr.skip(), "", {**conv, "messages": messages}
            return
        try:
            async with aclosing(self._answer(question, backend, int(k), lang, conv, messages, session)) as out:
                async for update in out:
                    yield update
        finally:
            self.answering.release()

    def _refusal(self, question: str, lang: str) -> str | None:
        """Why a question is answered with a message instead (too long, or no room); else it is admitted."""
        n = len(question.strip())
        if n > self._limit:
            return t("too_long", lang, n=f"{n:,}", limit=f"{self._limit:,}")
        if not self.answering.admit():
            return t("busy", lang, n=self.answering.pending)
        return None

    async def _answer(
        self, question: str, backend: str, k: int, lang: str, conv: Conversation, messages: list[Any], session: str
    ) -> AsyncGenerator[Any, None]:
        key = f"a{len(messages)}"
        waiting = "…" if self.ready.is_set() else t("waiting", lang)
        messages.append({"role": "assistant", "content": render.unrated(waiting)})
        yield "", messages, gr.skip(), "", {**conv, "messages": messages}
        stop = self._running[session][1] if session in self._running else asyncio.Event()
        stages = self.stages.begin(session)
        final: Answer | None = None
        try:
            history = [Turn.model_validate(turn) for turn in conv["turns"]]
            parts = until_stopped(self._answers(question, history, backend, k, stages), stop)
            async with aclosing(parts) as out:
                async for partial in out:
                    final = partial
                    if backend == "extractive" or stop.is_set():
                        continue  # one answer, shown whole below
                    with stages.timing("render_ms"):
                        content = answer_markdown(partial, key, partial=True, lang=lang)
                    messages[-1] = {"role": "assistant", "content": content}
                    yield "", messages, gr.skip(), gr.skip(), {**conv, "messages": messages}
        except Exception as exc:
            final, messages[-1]["content"] = None, render.unrated(self._error(exc, lang))
        if session in self._discarded:
            return
        if stop.is_set():  # what arrived stays, marked stopped; the question goes back into the box
            messages[-1] = {"role": "assistant", "content": stopped_markdown(final, key, lang)}
            yield question, messages, gr.skip(), gr.skip(), {**conv, "messages": messages}
            return
        if final is None:
            yield "", messages, gr.skip(), gr.skip(), {**conv, "messages": messages}
            return
        with stages.timing("render_ms"):
            markdown = answer_markdown(final, key, lang=lang)
            content = render.with_copy_text(markdown, answer_plain(final, lang))
            passages = render.passages_markdown(final.passages, lang)
        messages[-1] = {"role": "assistant", "content": content}
        turns = [*conv["turns"], {"role": "user", "content": question}, {"role": "assistant", "content": final.answer}]
        stored = final.model_dump(exclude={"passages"})
        answers = {**conv["answers"], str(len(messages) - 1): {"id": uuid.uuid4().hex, "answer": stored}}
        new_conv = {"messages": messages, "turns": turns, "answers": answers}
        self.stages.write(stages)
        yield "", messages, passages, gr.skip(), new_conv

    async def _answers(
        self, question: str, history: list[Turn], backend: str, k: int, stages: Stages
    ) -> AsyncGenerator[Answer, None]:
        """The extractive answer (CPU-bound: a worker), or an LLM backend's stream (from this process)."""
        await self._until_ready()
        if backend == "extractive":
            yield await self.answering.ask(question, history, k, stages)
            return
        async with aclosing(self.answering.stream(question, history, backend, k, stages)) as stream:
            async for partial in stream:
                yield partial

    def _error(self, exc: Exception, lang: str) -> str:
        """The chat message for a failed answer; only expected errors show their (user-facing) message."""
        if isinstance(exc, QuestionError):
            return render.question_error(str(exc), self._limit, lang)
        if isinstance(exc, IndexUnavailable):
            return render.index_error(str(exc), lang)
        if isinstance(exc, LLMUnavailable):
            log.warning("LLM backend unavailable: %s", exc)
            return render.llm_error(lang)
        log.error("answering failed", exc_info=exc)
        return render.internal_error(lang)

    @property
    def _limit(self) -> int:
        return self.settings.answer.max_question_chars

    # --- the source panel ---------------------------------------------------------------------------
    async def open_source(
        self, request: str, conv: Conversation | None, rec: dict[str, Any] | None, lang: str
    ) -> tuple[Any, str]:
        """``"a5:2"`` (source 2 of the answer in message 5) or ``"rec:1"`` → the panel, opened, with that section."""
        key, _, n = (request or "").partition(":")
        citations: list[Citation] = []
        if key == "rec" and rec:
            citations = Recommendation.model_validate(rec).citations
        elif key.startswith("a") and key[1:].isdigit():
            entry = (conv or empty_conversation())["answers"].get(key[1:])
            if entry is not None:
                answer = Answer.model_validate(entry["answer"])
                citations, lang = answer.citations, render.frame_lang(answer, lang)
        citation = next((c for c in citations if str(c.n) == n), None)
        if citation is None:
            return gr.update(visible=True), f"<p>{render.esc(t('source_gone', lang))}</p>"
        original = citation.original
        wanted = [(citation.doc_id, citation.section)]
        if original is not None:
            wanted.append((original.doc_id, original.section))
        try:
            await self._until_ready()
            chunks, *originals = await self.answering.run("sections", wanted)
        except IndexUnavailable as exc:  # the index went away: the message says what to do
            return gr.update(visible=True), f"<p>⚠️ {render.esc(str(exc))}</p>"
        except Exception:
            log.exception("opening a source failed")
            return gr.update(visible=True), f"<p>{render.esc(render.internal_error(lang))}</p>"
        return gr.update(visible=True), panel_html(citation, chunks, originals[0] if originals else [], lang)

    # --- questionnaire, library, rules -------------------------------------------------------------
    async def recommend(self, lang: str, *values: str) -> AsyncGenerator[tuple[str, Any], None]:
        """Questionnaire answers (one per facet, "unset" = not sure) → the rendered recommendation."""
        # One value per question of the form, in the form's order (app.web.i18n.form_facets: Profile fields).
        chosen = {f: (None if v in (UNSET, None) else v) for f, v in zip(form_facets(), values, strict=True)}
        if not self.ready.is_set():
            yield t("waiting", lang), gr.skip()
            await self._until_ready()
        try:
            rec = await self.answering.run("recommend", Profile.model_validate({**chosen, "lang": lang}))
        except IndexUnavailable as exc:
            yield render.index_error(str(exc), lang), None
            return
        except Exception:
            log.exception("recommendation failed")
            yield render.internal_error(lang), None
            return
        yield web_panels.recommendation_markdown(rec, lang), rec.model_dump()

    async def rerecommend(
        self, lang: str, rec: dict[str, Any] | None, *values: str
    ) -> AsyncGenerator[tuple[str, Any], None]:
        """A changed answer or UI language: the recommendation again, once there is one to update."""
        if not rec:
            yield gr.skip(), gr.skip()
            return
        async with aclosing(self.recommend(lang, *values)) as updates:
            async for update in updates:
                yield update

    async def library(self, lang: str) -> tuple[str, str]:
        """(library table, decision rules) from the advisor; errors become a line in the panel."""
        try:
            await self._until_ready()
            docs, info, rules = await self.answering.run("library")
        except IndexUnavailable as exc:
            return render.status_error(str(exc), lang), ""
        except Exception:
            log.exception("library failed")
            return render.internal_error(lang), ""
        return web_panels.library_markdown(docs, info, lang), web_panels.rules_markdown(rules, docs, lang)
