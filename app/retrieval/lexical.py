"""BM25 (Okapi) over chunk texts (contextual header + passage), with the tokens of ``core.text``.

An inverted index (token → postings) makes a query cost proportional to the postings it touches,
not to the corpus size times the query length. Built in memory from the live index generation and
rebuilt when a re-ingest publishes a new generation. IDF uses the same formula as rank-bm25's
BM25Okapi (with its epsilon floor for very common terms), so scores match that reference.

Deliberately left out: persisting BM25 state; Chroma stays the single source of truth.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from core.text import tokenize

K1 = 1.5
B = 0.75
EPSILON = 0.25


class LexicalIndex:
    def __init__(self, ids: Sequence[str], texts: Sequence[str]):
        self.ids = list(ids)
        docs = [Counter(tokenize(t)) for t in texts]
        lengths = np.array([sum(d.values()) for d in docs], dtype=np.float64)
        avg = float(lengths.mean()) if len(docs) else 0.0
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, counts in enumerate(docs):
            for token, tf in counts.items():
                entry = postings.setdefault(token, ([], []))
                entry[0].append(i)
                entry[1].append(tf)
        n = len(docs)
        raw_idf = {t: math.log(n - len(p[0]) + 0.5) - math.log(len(p[0]) + 0.5) for t, p in postings.items()}
        floor = EPSILON * (sum(raw_idf.values()) / len(raw_idf)) if raw_idf else 0.0
        self.idf: dict[str, float] = {t: (v if v >= 0 else floor) for t, v in raw_idf.items()}
        norm = K1 * (1 - B + B * lengths / avg) if avg else np.zeros(n)
        self._postings = {
            t: (np.array(docs_, dtype=np.int64), np.array(tfs, dtype=np.float64))
            for t, (docs_, tfs) in postings.items()
        }
        self._norm = norm
        self._n = n
        self._position = {cid: i for i, cid in enumerate(self.ids)}

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for ``query`` (repeated query tokens count once per occurrence)."""
        total = np.zeros(self._n)
        for token in tokenize(query):
            posting = self._postings.get(token)
            if posting is None:
                continue
            docs, tfs = posting
            total[docs] += self.idf[token] * tfs * (K1 + 1) / (tfs + self._norm[docs])
        return total

    def pick(self, scores: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
        """The score (from ``scores()``) of each of ``ids``; 0.0 for a chunk that matches no query token."""
        return {cid: float(scores[self._position[cid]]) for cid in ids if cid in self._position}

    def top(self, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        """(chunk_id, score) for the top ``k`` chunks of ``scores()`` with a positive score, best first."""
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.ids[i], float(scores[i])) for i in order if scores[i] > 0]

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """(chunk_id, score) for the top ``k`` chunks with a positive score, best first."""
        return self.top(self.scores(query), k)
