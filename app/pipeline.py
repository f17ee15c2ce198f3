"""The Advisor: question in, grounded answer with citations out. Shared by `ask`, the web UI and evals.

Steps, all on ONE snapshot of the index per question: validate → resolve the follow-up (the new turn
dominates) → strip injected instructions → retrieve (hybrid) → one passage per section of a translated
document, in the question's language → score evidence units → refuse (``app.answer.refusal``) or compose an
extractive answer (``app.answer.compose``) with a verdict for selection questions (``app.advice.verdict``) — or hand the
numbered passages to an LLM backend (its uncited sentences left out; the extractive answer with a ``notice``
when it times out, is down or cites nothing). Timings are recorded per stage.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from app.advice.followup import Resolved, resolve_turn
from app.advice.reader import SituationReader, verdict_for
from app.advice.verdict import needs
from app.answer import refusal
from app.answer.choose import Choice, choose, settle
from app.answer.citations import enrich
from app.answer.compose import compose, is_howto_question, related_lines
from app.answer.evidence import (
    HOUSEKEEPING,
    Concept,
    Evidence,
    asks_housekeeping,
    concept_weights,
    followers,
    is_lead_in,
    only_file_notes,
    score_passages,
    split_units,
)
from app.answer.features import Candidates, DenseSims, candidate_units, candidates
from app.answer.guard import QuestionError, strip_injection, validate_question
from app.answer.locate import Located, PartQuery, cover_parts, locate, part_query
from app.answer.question import analyse, inherit_type
from app.answer.quotes import lead_and_more
from app.answer.selector import load as load_selector
from app.answer.selector import with_bar
from app.models import (
    Answer,
    Citation,
    FallbackNotice,
    Passage,
    Profile,
    Quote,
    Recommendation,
    Turn,
    TypedQuestion,
    ValueLine,
    Verdict,
)
from app.retrieval.bridge import text_bridge
from app.retrieval.companions import one_per_section, with_originals
from app.retrieval.retriever import Mode, Retriever
from app.retrieval.snapshot import Snapshot
from app.retrieval.spelling import correct
from app.retrieval.unit_vectors import UnitVectors
from core.contract import DocumentInfo, IndexInfo, Rule, StoredChunk, contextual_text
from core.numeric import cosine_rows
from core.settings import Settings
from core.situation import Situation
from core.text import content_tokens, detect_language, question_language
from core.units import Unit, unit_embedding_text
from ingest.embeddings import AdvisorEmbeddings, make_embeddings

__all__ = ["Advisor", "QuestionError", "strip_injection", "validate_question"]

CANDIDATE_FACTOR = 3  # passages retrieved per passage used: room to drop a section's other version
CONTEXT_WEIGHT = 0.5  # a follow-up's earlier question counts this much in evidence scoring

log = logging.getLogger(__name__)


class Advisor:
    def __init__(self, settings: Settings, embeddings: AdvisorEmbeddings | None = None) -> None:
        self.settings = settings
        self.embeddings = embeddings or make_embeddings(settings)
        self.retriever = Retriever(settings, self.embeddings)
        self.reader = SituationReader(self.embeddings)
        self.unit_vectors = UnitVectors(self.embeddings)
        self.selector = with_bar(load_selector(), settings.answer.answerable_bar) if settings.answer.selector else None

    # --- lifecycle ---------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the embedding model and the lexical index (the UI calls this in the background)."""
        self.embeddings.load()
        self.embeddings.embed_query("warm up")
        self.retriever.snapshot()

    def status(self) -> IndexInfo | None:
        return self.retriever.store.info()

    def section_chunks(self, doc_id: str, section: str) -> list[StoredChunk]:
        """Every chunk of one section of one document, in order (the UI's source panel shows the section)."""
        return self.retriever.snapshot().section_chunks(doc_id, section)

    def rules(self) -> list[Rule]:
        """Every decision rule the index holds (both languages), in document order."""
        return list(self.retriever.snapshot().rules)

    def library(self) -> list[DocumentInfo]:
        """The documents of the index, for the library view."""
        from app.retrieval.library import documents

        return documents(self.retriever.snapshot())

    def recommend(self, profile: Profile) -> Recommendation:
        """The questionnaire: each answered criterion matched to the rules, one verdict overall."""
        from app.advice.profile import recommend

        return recommend(profile, self.retriever.snapshot())

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
        timings: dict[str, float] = {}
        text, language, snap, turn, query, passages = self._prepare(question, history, k, mode, timings)
        backend = backend or self.settings.answer.backend
        t0 = time.perf_counter()
        if backend == "extractive":
            answer = self._extractive(text, turn, query, language, passages, snap)
            timings["answer"] = _ms(t0)
            yield answer.model_copy(
                update={"timings_ms": timings, "latency_ms": _ms(started), "resolved_question": turn.question}
            )
            return
        yield from self._llm(text, turn, query, language, passages, history, backend, timings, started, snap)

    def _prepare(
        self, question: str, history: Sequence[Turn], k: int | None, mode: Mode, timings: dict[str, float]
    ) -> tuple[str, str, Snapshot, Resolved, str, list[Passage]]:
        """Validate, resolve the follow-up, retrieve: the question, its language, the one index snapshot of this
        answer, the resolved turn, the retrieval query and the passages."""
        text = validate_question(question, self.settings.answer.max_question_chars)
        language = question_language(text)
        snap = self.retriever.snapshot()  # one index state for the whole answer
        turn = resolve_turn(text, [t.content for t in history if t.role == "user"], snap.names)
        query = strip_injection(turn.query)
        k = k or self.settings.retrieval.top_k
        passages: list[Passage] = []
        if query and content_tokens(query):
            t0 = time.perf_counter()
            query = correct(query, snap.frequency)
            forms = self.retriever.forms(query)
            self.embeddings.prepare_queries([*forms.embedded(mode), *self.reader.query_texts(turn.focus, turn.history)])
            timings["prepare_queries"] = _ms(t0)
            ranked = self.retriever.retrieve(query, k * CANDIDATE_FACTOR, mode, timings, snap, forms)
            substantive = [p for p in one_per_section(ranked, language, snap) if not only_file_notes(p)]
            passages = with_originals(self._continue_lead_ins(substantive[:k], snap), snap)
            timings["retrieve"] = _ms(t0)
        return text, language, snap, turn, query, passages

    def inspect(self, question: str, history: Sequence[Turn] = ()) -> Inspection:
        """What the answer step sees for ``question``: the passages, the reading of them, and every candidate
        unit with its features (``evals.fit`` labels and fits on these)."""
        text, language, snap, turn, query, passages = self._prepare(question, history, None, "hybrid", {})
        r = self._decide(turn, query, language, passages, snap)
        cands = self._candidates(r, turn, query, language, passages, snap)
        return Inspection(text, language, passages, r, cands, bool(turn.context))

    def _choose(
        self, r: _Reading, turn: Resolved, query: str, language: str, passages: list[Passage], snap: Snapshot
    ) -> Choice | None:
        """The fitted selector's reading of this question's candidates (None without a model or passages)."""
        if self.selector is None or not passages or not query:
            return None
        cands = self._candidates(r, turn, query, language, passages, snap)
        return choose(
            self.selector, cands, r.typed, r.queries, typed_text(turn, query), len(r.missing), r.support,
            r.decision.text is None, r.located, asks_housekeeping(turn.focus), bool(turn.context),
        )  # fmt: skip

    def _candidates(
        self, r: _Reading, turn: Resolved, query: str, language: str, passages: list[Passage], snap: Snapshot
    ) -> Candidates:
        focus = strip_injection(turn.focus) if turn.context else query
        return candidates(
            r.typed, r.queries, typed_text(turn, query), language, r.evidence, passages, r.located, r.covering,
            is_howto_question(focus), self._dense_sims(r, query, passages, snap),
            self._weights(turn.context, snap) if turn.context else None,
        )  # fmt: skip

    def _dense_sims(self, r: _Reading, query: str, passages: list[Passage], snap: Snapshot) -> DenseSims:
        """The embedder's cosine of every candidate unit to the question (its best retrieval form) and to each
        part; the unit vectors come from ingest."""
        units = candidate_units(r.evidence, passages)
        parts = [q.part.text for q in r.queries] or [query]
        if not units:
            return DenseSims(np.zeros(0), np.zeros((len(parts), 0)))
        forms = self.retriever.forms(query).embedded("hybrid")
        self.embeddings.prepare_queries([*forms, *parts])
        vectors = self.unit_vectors.vectors(
            snap.units, [unit_embedding_text(u, passages[u.passage].section) for u in units]
        )
        whole = np.stack([cosine_rows(vectors, self.embeddings.embed_query(t)) for t in forms]).max(axis=0)
        return DenseSims(whole, np.stack([cosine_rows(vectors, self.embeddings.embed_query(t)) for t in parts]))

    def answer_from_passages(self, question: str, passages: list[Passage]) -> Answer:
        """Extractive answer over passages from any retriever (evals use it to compare retrievers fairly).

        Their dense scores may come from another embedder (or none, for BM25), so the top passages are
        re-scored with ours: the refusal check then means the same thing for every retriever.
        """
        text = validate_question(question, self.settings.answer.max_question_chars)
        query = strip_injection(text)
        snap = self.retriever.snapshot()
        if query and passages:
            head = passages[: refusal.SUPPORT_PASSAGES]
            qvec = np.asarray(self.embeddings.embed_query(self.retriever.glossary.expand(query)))
            pvecs = np.asarray(
                self.embeddings.embed_documents([contextual_text(p.title, p.section, p.text) for p in head])
            )
            sims = cosine_rows(pvecs, qvec)
            passages = [p.model_copy(update={"dense": float(sim)}) for p, sim in zip(head, sims, strict=True)] + list(
                passages[refusal.SUPPORT_PASSAGES :]
            )
        return self._extractive(text, Resolved(text, ""), query, detect_language(text), passages, snap)

    # --- internals -----------------------------------------------------------------------------
    def _continue_lead_ins(self, passages: list[Passage], snap: Snapshot) -> list[Passage]:
        """A passage cut right after "… as follows:" gets the next chunk appended, so the list, table
        or command it announces can be quoted with it (chunk boundaries are not the author's)."""
        out = []
        for p in passages:
            units = split_units(p.text, p.kind)
            if units and is_lead_in(units[-1]) and not followers(units[-1], units):
                following = self.retriever.continuation(p, snap)
                if following is not None:
                    p = p.model_copy(update={"text": f"{p.text}\n\n{following.text}"})
            out.append(p)
        return out

    def _evidence(self, turn: Resolved, query: str, passages: Sequence[Passage], snap: Snapshot) -> Evidence:
        """Score the passages' units; the new turn's words weigh fully, the earlier question's half."""
        focus = strip_injection(turn.focus) if turn.context else query
        weights = self._weights(focus, snap)
        for concept, w in self._weights(turn.context, snap).items():
            weights.setdefault(concept, CONTEXT_WEIGHT * w)
        return score_passages(
            weights, passages, howto=is_howto_question(focus), housekeeping_ok=bool(HOUSEKEEPING.search(focus))
        )

    def _support(self, evidence: Evidence, passages: Sequence[Passage], language: str) -> float:
        return refusal.support(
            evidence.best_lexical,
            [p.dense or 0.0 for p in passages],
            [p.language for p in passages],
            language,
            self.embeddings.spec,
        )

    def _typed(self, turn: Resolved, query: str, snap: Snapshot) -> TypedQuestion:
        focus = strip_injection(turn.focus) if turn.context else query
        # a platform choice: the fitted decision on this turn, weighing the conversation it continues
        platform = self.reader.platform_reading(turn.focus, turn.history)
        typed = analyse(focus, snap.names, selection=platform.asks, sure=platform.sure)
        if turn.context and turn.earlier:
            typed = inherit_type(typed, analyse(strip_injection(turn.earlier[-1]), snap.names))
        return typed

    def _part_queries(self, typed: TypedQuestion, turn: Resolved, query: str, snap: Snapshot) -> list[PartQuery]:
        """Each part's own words weigh fully; the rest of the question (its topic) and the earlier turn less."""
        whole = strip_injection(turn.focus) if turn.context else query
        # the same for every part: the whole question's and the earlier turn's concepts, the products named
        around = [(self._weights(whole, snap), CONTEXT_WEIGHT), (self._weights(turn.context, snap), CONTEXT_WEIGHT / 2)]
        products = [e for e in typed.focus.split(" · ") if e in snap.names]
        queries = []
        for part in typed.parts:
            weights = self._weights(part.text, snap)
            for concepts, share in around:
                for concept, w in concepts.items():
                    weights.setdefault(concept, share * w)
            # the attribute is the part's words without its cue words: its compounds are read in the part's text
            attribute = self._weights(part.attribute, snap, bridged=part.text)
            others = [p.text for p in typed.parts if p is not part]
            queries.append(part_query(part, weights, attribute, whole, products, others))
        return queries

    def _weights(self, text: str, snap: Snapshot, bridged: str = "") -> dict[Concept, float]:
        """A text's concepts with their IDF weights: the glossary's groups, a Japanese word's dictionary glosses
        (with those of the compounds it is part of in ``bridged``, else in ``text``)."""
        bridge = text_bridge(bridged or text)
        return concept_weights(text, self.retriever.glossary.matched_groups(text), snap.lexical.idf, bridge)

    def _verdict(self, situation: Situation, language: str, snap: Snapshot) -> tuple[Verdict | None, list[str]]:
        """A selection question's verdict from the conversation's situation, or the facts to ask for."""
        verdict = verdict_for(situation, language, snap, always=True)
        return verdict, ([] if verdict is not None else needs(situation, language))

    def _decide(self, turn: Resolved, query: str, language: str, passages: list[Passage], snap: Snapshot) -> _Reading:
        """Everything the answer step reads off the passages before answering: the typed question, the scored
        evidence, the values found for its parts (and the parts nothing answers), and whether to refuse."""
        typed = self._typed(turn, query, snap)
        if not query:
            return _Reading(typed, Evidence(), [], [], refusal.Decision(refusal.refusal_text(language)))
        evidence = self._evidence(turn, query, passages, snap)
        queries = self._part_queries(typed, turn, query, snap)
        located, missing = locate(typed, queries, typed_text(turn, query), evidence, passages)
        covering = cover_parts(queries, located, evidence, passages)
        strength = self._support(evidence, passages, language)
        situation = (
            self.reader.situation(turn.focus, self.reader.selection_turns(turn.history))
            if typed.answer_type == "selection"
            else None
        )
        decision = refusal.decide(
            query, language, strength, snap.known_words, typed, missing, len(located), situation=bool(situation)
        )
        return _Reading(typed, evidence, located, missing, decision, situation, covering, queries, strength)

    def _extractive(
        self, question: str, turn: Resolved, query: str, language: str, passages: list[Passage], snap: Snapshot
    ) -> Answer:
        r = self._decide(turn, query, language, passages, snap)
        choice = self._choose(r, turn, query, language, passages, snap)
        if choice is not None and self.selector is not None and r.situation is None:
            r.decision = settle(r.decision, choice, self.selector, r.typed, language, snap.known_words)
        if r.decision.text is not None:
            return self._refused(question, r, language, passages, snap)
        verdict, wanted = self._verdict(r.situation, language, snap) if r.situation is not None else (None, [])
        missing = r.missing if choice is None else [i for i in r.missing if i in choice.unvalued]
        asked_missing = [r.typed.parts[i].text for i in missing if r.typed.parts[i].answer_type in refusal.STRICT_TYPES]
        lists = any(p.answer_type == "list" for p in r.typed.parts)
        draft = compose(
            turn.focus,
            language,
            passages,
            r.evidence,
            verdict,
            snap,
            r.located if choice is None else choice.located,
            asked_missing,
            wanted,
            r.covering,
            lists,
            ranked=None if choice is None else choice.ranked,
            unit_scores=None if choice is None else choice.unit_scores,
        )
        if not draft.citations:
            # no quotable evidence at all (e.g. passages that are only a table header): say so, never
            # show an empty answer
            empty = _Reading(r.typed, r.evidence, [], [], refusal.Decision(refusal.refusal_text(language)))
            return self._refused(question, empty, language, passages, snap)
        text, more_text, lead, more = lead_and_more(draft.lines, draft.quotes, language)
        return Answer(
            question=question,
            answer=text,
            more_text=more_text,
            lead=lead,
            more=more,
            value_line=ValueLine(findings=draft.findings, confidence=1.0 if choice is None else choice.confidence)
            if draft.findings
            else None,
            refused=False,
            verdict=draft.verdict,
            question_info=r.typed,
            findings=draft.findings,
            missing=asked_missing,
            needs=wanted,
            language=language,
            citations=enrich(draft.citations, passages, snap),
            passages=passages,
        )

    def _refused(self, question: str, r: _Reading, language: str, passages: list[Passage], snap: Snapshot) -> Answer:
        """A refusal; a "not stated" one shows the closest passages under "Related, but not an answer"."""
        text = r.decision.text or refusal.refusal_text(language)
        citations: list[Citation] = []
        lead: list[Quote] = []
        if r.decision.not_stated is not None and r.evidence.scored:
            related = related_lines(language, passages, r.evidence)
            text, _, lead, _ = lead_and_more([text], related.quotes, language, related=True)
            citations = enrich(related.citations, passages, snap)
        return Answer(
            question=question,
            answer=text,
            lead=lead,
            refused=True,
            not_stated=r.decision.not_stated,
            question_info=r.typed,
            language=language,
            citations=citations,
            passages=passages,
        )

    def _llm(
        self,
        question: str,
        turn: Resolved,
        query: str,
        language: str,
        passages: list[Passage],
        history: Sequence[Turn],
        backend: str,
        timings: dict[str, float],
        started: float,
        snap: Snapshot,
    ) -> Iterator[Answer]:
        from app.llm.backends import LLMUnavailable, stream_llm_answer
        from app.llm.citations import drop_unsupported, finalize_llm_answer, is_refusal

        def fallback(notice: FallbackNotice) -> Answer:
            """The extractive answer in place of the LLM's, saying why (the details go to the log)."""
            answer = self._extractive(question, turn, query, language, passages, snap)
            update = {"notice": notice, "timings_ms": timings, "latency_ms": _ms(started)}
            return answer.model_copy(update={**update, "resolved_question": turn.query})

        t0 = time.perf_counter()
        r = self._decide(turn, query, language, passages, snap)
        if r.decision.text is not None or not passages:
            refused = self._refused(question, r, language, passages, snap)
            yield refused.model_copy(
                update={"backend": backend, "latency_ms": _ms(started), "resolved_question": turn.question}
            )
            return
        partial = ""
        try:
            for partial in stream_llm_answer(question, passages, self.settings, backend, language, history):
                yield Answer(question=question, answer=partial, language=language, passages=passages, backend=backend)
        except LLMUnavailable as exc:
            log.warning("LLM backend %s failed, answering extractively: %s", backend, exc)
            yield fallback("llm_timeout" if exc.kind == "timeout" else "llm_unavailable")
            return
        text, citations, flagged = finalize_llm_answer(partial, passages)
        text = drop_unsupported(text, flagged)
        if not citations and not is_refusal(text):
            yield fallback("llm_unsupported")
            return
        timings["answer"] = _ms(t0)
        yield Answer(
            question=question,
            answer=text,
            refused=not citations,
            verdict=self._verdict(r.situation, language, snap)[0] if r.situation is not None else None,
            question_info=r.typed,
            language=language,
            citations=enrich(citations, passages, snap),
            passages=passages,
            backend=backend,
            flagged=flagged,
            latency_ms=_ms(started),
            timings_ms=timings,
            resolved_question=turn.question,
        )


@dataclass
class _Reading:
    typed: TypedQuestion
    evidence: Evidence
    located: list[Located]
    missing: list[int]
    decision: refusal.Decision
    situation: Situation | None = None
    covering: list[Unit] = field(default_factory=list)
    queries: list[PartQuery] = field(default_factory=list)
    support: float = 0.0  # how well the best passages match the question (app.answer.refusal.support)


@dataclass
class Inspection:
    """One question as the answer step sees it (``Advisor.inspect``)."""

    question: str
    language: str
    passages: list[Passage]
    reading: _Reading
    candidates: Candidates
    leans: bool = False  # the turn leans on an earlier question (the answerable model reads it)


def typed_text(turn: Resolved, query: str) -> str:
    """The words the user typed this turn: a value they already wrote is never the answer."""
    return f"{turn.focus} {query}"


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
