"""BM25 over chunk texts (contextual header + passage), with the tokens of ``app.text``.

Built in memory from the live index generation (a few thousand chunks build in well under a second)
and rebuilt when a re-ingest publishes a new generation. Deliberately left out: persisting BM25 state;
Chroma stays the single source of truth.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from app.text import tokenize


class LexicalIndex:
    def __init__(self, ids: Sequence[str], texts: Sequence[str]):
        self.ids = list(ids)
        corpus = [tokenize(t) or ["∅"] for t in texts]
        self._bm25 = BM25Okapi(corpus) if corpus else None
        self.idf: dict[str, float] = dict(self._bm25.idf) if self._bm25 else {}

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """(chunk_id, score) for the top ``k`` chunks with a positive score, best first."""
        tokens = tokenize(query)
        if self._bm25 is None or not tokens:
            return []
        scores = np.asarray(self._bm25.get_scores(tokens))
        order = np.argsort(-scores)[:k]
        return [(self.ids[i], float(scores[i])) for i in order if scores[i] > 0]
