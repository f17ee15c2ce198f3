"""The web UI's runtime and event handlers: the advisor, background warm-up, backend health, and one
handler per user action (ask, new chat, vote, comment, open a source, recommend, export, library).

``Runtime`` holds the ``Advisor`` and loads its models in a background thread so the page is usable at
once. Handlers are thin: they call the advisor and hand its results to ``app.web.answer_view`` /
``app.web.panels`` / ``app.web.render`` (which escape every user or document string). The conversation lives in the
browser (``gr.BrowserState``) as ``{"messages", "turns", "answers"}``: chat messages, the ``Turn`` list
passed to the advisor as history, and per assistant message its id and ``Answer`` (for 👍/👎, export and
the source panel). A question over the length limit is refused before anything else happens, and the
input keeps its text so it can be shortened.

Deliberately left out: layout and wiring (``app.web.ui``), answer logic (``app.pipeline``).
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
import uuid
from collections.abc import Generator, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import gradio as gr

from app.llm.backends import Health, LLMUnavailable, check_backend
from app.models import Answer, Citation, Profile, Recommendation, Turn
from app.pipeline import Advisor, QuestionError
from app.web import panels as web_panels
from app.web import render
from app.web.answer_view import answer_markdown, answer_plain
from app.web.feedback import Rating, record_feedback
from app.web.i18n import UNSET, form_facets, t
from app.web.source_panel import panel_html
from core.settings import Settings
from ingest.store import IndexUnavailable

log = logging.getLogger(__name__)

WARM_UP_WAIT_S = 300.0  # a question waits this long for the models before giving up
HEALTH_TTL_S = 20.0  # backend health is re-checked at most this often
_SHOWN_QUESTION_CHARS = 600  # an over-long question is echoed shortened; the error states the limit
Conversation = dict[str, Any]


def empty_conversation() -> Conversation:
    return {"messages": [], "turns": [], "answers": {}}


def _closable(stream: Iterator[Answer]) -> Generator[Answer, None, None]:
    """The advisor's stream as the generator it is (``closing`` needs ``close``)."""
    if isinstance(stream, Generator):
        return stream
    return (answer for answer in stream)


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


class Runtime:
    """The advisor plus whether its models are loaded (set by the background warm-up)."""

    def __init__(self, settings: Settings, advisor: Advisor) -> None:
        self.settings = settings
        self.advisor = advisor
        self.ready = threading.Event()
        self.model_error: str | None = None
        self._health: dict[str, tuple[float, Health]] = {}
        self._running: set[str] = set()  # sessions with an answer on its way
        self._stopped: set[str] = set()  # ...of which these were stopped
        threading.Thread(target=self._warm_up, name="advisor-warm-up", daemon=True).start()

    def _warm_up(self) -> None:
        try:
            self.advisor.warm_up()
        except IndexUnavailable:
            pass  # the models loaded; only the index is missing, which the status line reports itself
        except Exception as exc:
            log.exception("warm-up failed")
            self.model_error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ready.set()

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
        except Exception as exc:
            log.exception("status failed")
            return render.status_error(type(exc).__name__, lang)

    def health(self, backend: str) -> Health:
        now = time.monotonic()
        cached = self._health.get(backend)
        if cached is None or now - cached[0] > HEALTH_TTL_S:
            cached = (now, check_backend(self.settings, backend))
            self._health[backend] = cached
        return cached[1]

    def backend_choices(self, lang: str, check: bool = True) -> list[tuple[str, str]]:
        """(label, value) per backend; a backend whose server fails its health check is marked unavailable."""
        return [
            (backend_label(b, lang, self.health(b) if check else None), b) for b in ("extractive", "openai", "ollama")
        ]

    def backend_update(self, lang: str) -> Any:
        return gr.update(choices=self.backend_choices(lang))

    # --- chat ------------------------------------------------------------------------------------
    def stop(self, request: gr.Request | None = None) -> None:
        """Stop the session's running answer: no further part of it reaches the page."""
        session = _session(request)
        if session in self._running:
            self._stopped.add(session)

    def respond(
        self,
        question: str,
        backend: str,
        k: float,
        lang: str,
        conv: Conversation | None,
        request: gr.Request | None = None,
    ) -> Iterator[Any]:
        """Chat handler: yields (textbox, chatbot, passages, feedback note, conversation) as the answer streams.

        The conversation is updated with every partial answer, so a stopped answer stays in it. A question
        over the limit is answered with an error at once, and the textbox keeps it. Stop (``stop``) ends
        the stream at the next part: Gradio's cancel alone still lets the part in flight through.
        """
        session = _session(request)
        self._stopped.discard(session)
        self._running.add(session)
        try:
            yield from self._respond(question, backend, k, lang, conv or empty_conversation(), session)
        finally:
            self._running.discard(session)
            self._stopped.discard(session)

    def _respond(
        self, question: str, backend: str, k: float, lang: str, conv: Conversation, session: str
    ) -> Iterator[Any]:
        question = question or ""
        if not question.strip():
            yield (gr.skip(),) * 5
            return
        messages = [*conv["messages"], {"role": "user", "content": render.question_markdown(_shown(question))}]
        too_long = len(question.strip()) > self._limit
        if too_long:
            error = t("too_long", lang, n=f"{len(question.strip()):,}", limit=f"{self._limit:,}")
            messages.append({"role": "assistant", "content": render.unrated(f"⚠️ {error}")})
            yield gr.skip(), messages, gr.skip(), "", {**conv, "messages": messages}
            return
        key = f"a{len(messages)}"
        waiting = "…" if self.ready.is_set() else t("waiting", lang)
        messages.append({"role": "assistant", "content": render.unrated(waiting)})
        yield "", messages, gr.skip(), "", {**conv, "messages": messages}
        self.ready.wait(WARM_UP_WAIT_S)
        final: Answer | None = None
        try:
            history = [Turn.model_validate(turn) for turn in conv["turns"]]
            # Closing the stream as soon as the loop ends hangs up on an LLM server that is still sending.
            with closing(_closable(self.advisor.stream(question, history, backend=backend, k=int(k)))) as stream:
                for partial in stream:
                    if session in self._stopped:
                        return
                    final = partial
                    content = answer_markdown(partial, key, partial=True, lang=lang)
                    messages[-1] = {"role": "assistant", "content": content}
                    yield "", messages, gr.skip(), gr.skip(), {**conv, "messages": messages}
        except Exception as exc:
            final, messages[-1]["content"] = None, render.unrated(self._error(exc, lang))
        if session in self._stopped:
            return
        if final is None:
            yield "", messages, gr.skip(), gr.skip(), {**conv, "messages": messages}
            return
        markdown = answer_markdown(final, key, lang=lang)
        messages[-1] = {
            "role": "assistant",
            "content": render.with_copy_text(markdown, answer_plain(final, lang)),
        }
        turns = [*conv["turns"], {"role": "user", "content": question}, {"role": "assistant", "content": final.answer}]
        stored = final.model_dump(exclude={"passages"})
        answers = {**conv["answers"], str(len(messages) - 1): {"id": uuid.uuid4().hex, "answer": stored}}
        new_conv = {"messages": messages, "turns": turns, "answers": answers}
        yield "", messages, render.passages_markdown(final.passages, lang), gr.skip(), new_conv

    def _error(self, exc: Exception, lang: str) -> str:
        """The chat message for a failed answer; only expected errors show their (user-facing) message."""
        if isinstance(exc, QuestionError):
            return render.question_error(str(exc), self._limit, lang)
        if isinstance(exc, IndexUnavailable):
            return render.index_error(str(exc), lang)
        if isinstance(exc, LLMUnavailable):
            return render.llm_error(str(exc), lang)
        log.error("answering failed", exc_info=exc)
        return render.internal_error(exc, lang)

    @property
    def _limit(self) -> int:
        return self.settings.answer.max_question_chars

    # --- feedback --------------------------------------------------------------------------------
    def vote(self, conv: Conversation | None, lang: str, like: gr.LikeData) -> tuple[Any, str, Any]:
        """A 👍/👎 on one answer: stored (replacing an earlier vote on it); opens the comment box by it."""
        index = like.index if isinstance(like.index, int) else like.index[0]
        entry = (conv or empty_conversation())["answers"].get(str(index))
        if entry is None or like.liked not in (True, False):
            return gr.skip(), t("vote_first", lang), gr.skip()
        rating: Rating = "up" if like.liked else "down"
        answer = Answer.model_validate(entry["answer"])
        record_feedback(self.settings.web.feedback_path, answer, rating, message_id=entry["id"])
        return gr.update(visible=True), t("vote_saved", lang), {"index": index, "rating": rating}

    def comment(self, text: str, conv: Conversation | None, voted: dict[str, Any] | None, lang: str) -> tuple[str, Any]:
        if not voted:
            return t("vote_first", lang), gr.skip()
        entry = (conv or empty_conversation())["answers"].get(str(voted["index"]))
        if entry is None:
            return t("vote_first", lang), gr.skip()
        answer = Answer.model_validate(entry["answer"])
        record_feedback(self.settings.web.feedback_path, answer, voted["rating"], text or "", message_id=entry["id"])
        return t("comment_saved", lang), ""

    # --- the source panel ---------------------------------------------------------------------------
    def open_source(
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
        try:
            snap = self.advisor.retriever.snapshot()
        except Exception as exc:  # the index went away: the message says what to do
            return gr.update(visible=True), f"<p>⚠️ {render.esc(str(exc) or type(exc).__name__)}</p>"
        chunks = snap.section_chunks(citation.doc_id, citation.section)
        original = citation.original
        originals = snap.section_chunks(original.doc_id, original.section) if original is not None else []
        return gr.update(visible=True), panel_html(citation, chunks, originals, lang)

    # --- exports ---------------------------------------------------------------------------------
    def export_conversation(self, conv: Conversation | None, lang: str) -> Any:
        conv = conv or empty_conversation()
        questions = [turn["content"] for turn in conv["turns"] if turn["role"] == "user"]
        answers = [
            Answer.model_validate(a["answer"]) for _, a in sorted(conv["answers"].items(), key=lambda x: int(x[0]))
        ]
        if not questions:
            return gr.update(value=None, visible=False)
        return gr.update(
            value=_write("conversation.md", web_panels.conversation_export(questions, answers, lang)), visible=True
        )

    # --- questionnaire, library, rules -------------------------------------------------------------
    def recommend(self, lang: str, *values: str) -> Iterator[tuple[str, Any]]:
        """Questionnaire answers (one per facet, "unset" = not sure) → the rendered recommendation."""
        # One value per question of the form, in the form's order (app.web.i18n.form_facets: Profile fields).
        chosen = {f: (None if v in (UNSET, None) else v) for f, v in zip(form_facets(), values, strict=True)}
        if not self.ready.is_set():
            yield t("waiting", lang), gr.skip()
            self.ready.wait(WARM_UP_WAIT_S)
        try:
            rec = self.advisor.recommend(Profile.model_validate({**chosen, "lang": lang}))
        except IndexUnavailable as exc:
            yield render.index_error(str(exc), lang), None
            return
        except Exception as exc:
            log.exception("recommendation failed")
            yield render.internal_error(exc, lang), None
            return
        yield web_panels.recommendation_markdown(rec, lang), rec.model_dump()

    def rerecommend(self, lang: str, rec: dict[str, Any] | None, *values: str) -> Iterator[tuple[str, Any]]:
        """A changed answer or UI language: the recommendation again, once there is one to update."""
        if not rec:
            yield gr.skip(), gr.skip()
            return
        yield from self.recommend(lang, *values)

    def export_recommendation(self, rec: dict[str, Any] | None, lang: str) -> Any:
        if not rec:
            return gr.update(value=None, visible=False)
        text = web_panels.recommendation_export(Recommendation.model_validate(rec), lang)
        return gr.update(value=_write("recommendation.md", text), visible=True)

    def library(self, lang: str) -> tuple[str, str]:
        """(library table, decision rules) from the advisor; errors become a line in the panel."""
        try:
            docs = self.advisor.library()
            info = self.advisor.status()
            rules = self.advisor.rules()
        except IndexUnavailable as exc:
            return render.status_error(str(exc), lang), ""
        except Exception as exc:
            log.exception("library failed")
            return render.internal_error(exc, lang), ""
        return web_panels.library_markdown(docs, info, lang), web_panels.rules_markdown(rules, docs, lang)


def _write(name: str, text: str) -> str:
    """A file for the browser to download (Gradio copies it to its own cache and serves it from there)."""
    path = Path(tempfile.mkdtemp(prefix="advisor-export-")) / name
    path.write_text(text, encoding="utf-8")
    return str(path)
