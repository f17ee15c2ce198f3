"""The Advisor: question in, grounded answer with citations out. Shared by `ask`, the web UI and evals.

Steps: validate → resolve follow-ups → strip injected instructions from the retrieval query →
retrieve (hybrid) → score evidence units → refuse or compose an extractive answer (default), or hand
the numbered passages to an LLM backend. Timings are recorded per stage.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np

from app.answer import HEADING_ROWS, ScoredUnit, compose, is_howto_question, refusal_text
from app.evidence import (
    HOUSEKEEPING,
    INJECTION,
    Unit,
    followers,
    heading_lead,
    idf_weights,
    is_housekeeping,
    is_lead_in,
    is_short_code,
    score_unit,
    split_units,
)
from app.followup import resolve
from app.models import Answer, Passage, Turn
from app.refusal import as_written, asks_for_figure, compared_unknowns, should_refuse, unknown_names
from app.retrieve import Mode, Retriever
from app.spelling import correct
from app.text import content_tokens, detect_language
from ingest.contract import IndexInfo, contextual_text
from ingest.embeddings import AdvisorEmbeddings, make_embeddings
from ingest.settings import Settings

_EVIDENCE_PASSAGES = 6
_SUPPORT_PASSAGES = 3  # passages whose match decides whether the question is answerable
# An evidence unit's score: its own lexical match, its passage's fused rank score, its passage's dense similarity.
UNIT_WEIGHTS = (0.55, 0.3, 0.15)
HOUSEKEEPING_FACTOR = 0.8  # licence, contributing, contacts: quoted only when nothing better matches


class QuestionError(ValueError):
    """A question we cannot process; the message is shown to the user as is."""


def validate_question(question: str, max_chars: int) -> str:
    # Lone surrogates can arrive through JSON or a non-UTF-8 terminal; replace them rather than crash.
    text = (question or "").encode("utf-8", "replace").decode("utf-8").replace("\x00", "").strip()
    if not text:
        raise QuestionError("The question is empty: type a question. / 質問が空です。")
    if len(text) > max_chars:
        raise QuestionError(
            f"The question is {len(text):,} characters long; the limit is {max_chars:,}. "
            f"/ 質問が長すぎます（{len(text):,}文字、上限{max_chars:,}文字）。"
        )
    return text


def strip_injection(question: str) -> str:
    """Remove sentences that try to instruct the assistant; what is left is the real question."""
    if not INJECTION.search(question):
        return question  # untouched: re-joining sentences would alter "1.40" or code
    # A period ends a sentence only before whitespace ("v1.40" stays whole); CJK marks end one anyway.
    parts = re.split(r"(?<=[.!?])\s+|(?<=[。！？\n])\s*", question)
    kept = [p for p in parts if p.strip() and not INJECTION.search(p)]
    return " ".join(kept).strip()


class Advisor:
    def __init__(self, settings: Settings, embeddings: AdvisorEmbeddings | None = None) -> None:
        self.settings = settings
        self.embeddings = embeddings or make_embeddings(settings)
        self.retriever = Retriever(settings, self.embeddings)

    # --- lifecycle ---------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the embedding model and the lexical index (the UI calls this in the background)."""
        self.embeddings.load()
        self.embeddings.embed_query("warm up")
        self.retriever.snapshot()

    def status(self) -> IndexInfo | None:
        return self.retriever.store.info()

    # --- retrieval -----------------------------------------------------------------------------
    def retrieve(self, question: str, k: int, mode: Mode = "hybrid") -> list[Passage]:
        return self.retriever.retrieve(question, k, mode)

    # --- answering -----------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        history: Sequence[Turn] = (),
        *,
        backend: str | None = None,
        k: int | None = None,
        mode: Mode = "hybrid",
    ) -> Answer:
        answers = list(self.stream(question, history, backend=backend, k=k, mode=mode))
        return answers[-1]

    def stream(
        self,
        question: str,
        history: Sequence[Turn] = (),
        *,
        backend: str | None = None,
        k: int | None = None,
        mode: Mode = "hybrid",
    ) -> Iterator[Answer]:
        started = time.perf_counter()
        text = validate_question(question, self.settings.answer.max_question_chars)
        language = detect_language(text)
        previous = [t.content for t in history if t.role == "user"]
        resolved = resolve(text, previous)
        query = strip_injection(resolved)
        k = k or self.settings.retrieval.top_k
        timings: dict[str, float] = {}
        passages: list[Passage] = []
        if query and content_tokens(query):
            t0 = time.perf_counter()
            query = correct(query, self.retriever.snapshot().frequency)
            passages = self._continue_lead_ins(
                self.retriever.retrieve(query, max(k, _EVIDENCE_PASSAGES), mode, timings)
            )
            timings["retrieve"] = _ms(t0)
        backend = backend or self.settings.answer.backend
        t0 = time.perf_counter()
        if backend == "extractive":
            answer = self._extractive(text, query, language, passages, k)
            timings["answer"] = _ms(t0)
            answer.timings_ms = timings
            answer.latency_ms = _ms(started)
            answer.resolved_question = resolved
            yield answer
            return
        yield from self._llm(text, query, language, passages, k, history, backend, timings, started, resolved)

    def answer_from_passages(self, question: str, passages: list[Passage]) -> Answer:
        """Extractive answer over passages from any retriever (evals use it to compare retrievers fairly).

        Their dense scores may come from another embedder (or none, for BM25), so the top passages are
        re-scored with ours: the refusal check then means the same thing for every retriever.
        """
        text = validate_question(question, self.settings.answer.max_question_chars)
        query = strip_injection(text)
        if query and passages:
            head = passages[:_SUPPORT_PASSAGES]
            qvec = np.asarray(self.embeddings.embed_query(self.retriever.glossary.expand(query)))
            pvecs = np.asarray(
                self.embeddings.embed_documents([contextual_text(p.title, p.section, p.text) for p in head])
            )
            sims = pvecs @ qvec / (np.linalg.norm(pvecs, axis=1) * (np.linalg.norm(qvec) or 1.0) + 1e-12)
            passages = [p.model_copy(update={"dense": float(sim)}) for p, sim in zip(head, sims, strict=True)] + list(
                passages[_SUPPORT_PASSAGES:]
            )
        return self._extractive(text, query, detect_language(text), passages, len(passages))

    # --- internals -----------------------------------------------------------------------------
    def _continue_lead_ins(self, passages: list[Passage]) -> list[Passage]:
        """A passage cut right after "… as follows:" gets the next chunk appended, so the list, table
        or command it announces can be quoted with it (chunk boundaries are not the author's)."""
        out = []
        for i, p in enumerate(passages):
            units = split_units(p.text, p.kind) if i < _EVIDENCE_PASSAGES else []
            if units and is_lead_in(units[-1]) and not followers(units[-1], units):
                following = self.retriever.continuation(p)
                if following is not None:
                    p = p.model_copy(update={"text": f"{p.text}\n\n{following.text}"})
            out.append(p)
        return out

    def _score(self, query: str, passages: Sequence[Passage]) -> tuple[list[ScoredUnit], float, list[Unit]]:
        """Score the evidence units of the top passages; also return the support (for refusal).

        Units are ranked by IDF-weighted coverage of the glossary-expanded question plus their
        passage's retrieval relevance; no per-unit embedding is computed, which keeps an answer to a
        few tens of milliseconds after retrieval.
        """
        expanded = self.retriever.glossary.expand(query)
        idf = self.retriever.snapshot().lexical.idf if passages else {}
        weights = idf_weights(content_tokens(expanded), idf)
        top = passages[:_EVIDENCE_PASSAGES]
        if not top or not weights:
            return [], 0.0, []
        best_fused = max(p.score for p in top) or 1.0
        howto = is_howto_question(query)
        penalise_housekeeping = not HOUSEKEEPING.search(query)  # unless the question asks about licences etc.
        scored: list[ScoredUnit] = []
        units: list[Unit] = []
        support = 0.0
        for i, p in enumerate(top):
            relevance = p.score / best_fused
            dense = p.dense or 0.0
            best_lexical = 0.0
            housekeeping = penalise_housekeeping and is_housekeeping(p.section)
            passage_units = split_units(p.text, p.kind, i)
            lead = heading_lead(p.section, passage_units)
            if lead is not None:
                passage_units = [lead, *passage_units]
            units.extend(passage_units)
            for u in passage_units:
                if u.kind == "code" and not (howto and is_short_code(u)):
                    continue  # commands answer how-to questions only, and never decide answerability
                if u.kind == "heading":
                    # a heading stands for the rows it will show (its best-matching ones), scored with them
                    rows = sorted(followers(u, passage_units), key=lambda f: -score_unit(f, weights, p.section))
                    rows = rows[:HEADING_ROWS]
                    whole = " ".join([u.text, *(f.text for f in rows)])
                    lexical = score_unit(replace(u, text=whole), weights, p.title)
                else:
                    lexical = score_unit(u, weights, p.section)
                if u.kind not in ("code", "heading"):
                    best_lexical = max(best_lexical, lexical)
                score = UNIT_WEIGHTS[0] * lexical + UNIT_WEIGHTS[1] * relevance + UNIT_WEIGHTS[2] * dense
                scored.append(ScoredUnit(u, score * (HOUSEKEEPING_FACTOR if housekeeping else 1.0)))
            if i < _SUPPORT_PASSAGES:
                # Support ignores rank: something is always ranked first, so rank alone must never
                # make an irrelevant passage look like an answer. Dense similarity is calibrated per
                # embedder (its typical unrelated-text cosine), so the threshold does not depend on it.
                calibrated = self.embeddings.similarity_scale * (dense - self.embeddings.similarity_floor)
                support = max(support, min(best_lexical, 1.0) + calibrated)
        return scored, support, units

    def _refusal(self, query: str, language: str, support: float) -> str | None:
        """The refusal text when the knowledge base does not support an answer, else None. A platform the
        question compares with, and the documents never mention, is named; nothing else from the
        question is echoed: "say PWNED" must not come back as an answer."""
        if not query:
            return refusal_text(language)
        unknown = unknown_names(query, self.retriever.snapshot().known_words)
        compared = compared_unknowns(query, unknown)
        if not should_refuse(support, unknown, compared, asks_for_figure(query)):
            return None
        return refusal_text(language, as_written(query, compared))

    def _extractive(self, question: str, query: str, language: str, passages: list[Passage], k: int) -> Answer:
        scored, support, units = self._score(query, passages) if query else ([], 0.0, [])
        # every passage the evidence may come from is listed, so each citation is among the contexts
        shown = passages[: max(k, 5, _EVIDENCE_PASSAGES)]
        refusal = self._refusal(query, language, support)
        draft = None if refusal is not None else compose(query, language, passages, scored, units)
        if draft is None or not draft.citations:
            # no quotable evidence at all (e.g. passages that are only a table header): say so, never
            # show an empty answer
            return Answer(
                question=question,
                answer=refusal or refusal_text(language),
                refused=True,
                language=language,
                passages=shown,
            )
        return Answer(
            question=question,
            answer="\n".join(draft.lines),
            refused=False,
            verdict=draft.verdict,
            language=language,
            citations=draft.citations,
            passages=shown,
        )

    def _llm(
        self,
        question: str,
        query: str,
        language: str,
        passages: list[Passage],
        k: int,
        history: Sequence[Turn],
        backend: str,
        timings: dict[str, float],
        started: float,
        resolved: str,
    ) -> Iterator[Answer]:
        from app.llm import stream_llm_answer
        from app.llm_citations import finalize_llm_answer

        shown = passages[:k]
        t0 = time.perf_counter()
        _, support, _ = self._score(query, passages) if query else ([], 0.0, [])
        refusal = self._refusal(query, language, support)
        if refusal is not None or not shown:
            yield Answer(
                question=question,
                answer=refusal or refusal_text(language),
                refused=True,
                language=language,
                passages=shown,
                backend=backend,
                latency_ms=_ms(started),
                resolved_question=resolved,
            )
            return
        partial = ""
        for partial in stream_llm_answer(question, shown, self.settings, backend, language, history):
            yield Answer(question=question, answer=partial, language=language, passages=shown, backend=backend)
        text, citations, flagged = finalize_llm_answer(partial, shown)
        timings["answer"] = _ms(t0)
        yield Answer(
            question=question,
            answer=text,
            refused=not citations,
            language=language,
            citations=citations,
            passages=shown,
            backend=backend,
            flagged=flagged,
            latency_ms=_ms(started),
            timings_ms=timings,
            resolved_question=resolved,
        )


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
