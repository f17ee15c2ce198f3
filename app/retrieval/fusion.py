"""Rank fusion of several retrievers' result lists (pure).

>>> rrf([["a", "b"], ["b", "c"]], k=60)[0][0]
'b'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: score(d) = Σ w_i / (k + rank_i(d)), best first; ties keep first-seen order."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])


def rrf_complete(
    scores: Sequence[Mapping[str, float]], k: int = 60, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """RRF over the union of candidates, each retriever ranking *all* of them by its own exact score.

    Plain RRF gives a candidate missing from one retriever's top n nothing from that retriever, so a
    passage BM25 ranks first but the dense top 30 missed loses to passages both rank mediocrely.
    Here every retriever scores every candidate (a chunk with no query word scores 0 in BM25).

    >>> [c for c, _ in rrf_complete([{"a": 0.9, "b": 0.1}, {"a": 0.0, "b": 7.0}], weights=[1.0, 0.5])]
    ['a', 'b']
    """
    union = list(dict.fromkeys(c for s in scores for c in s))
    return rrf([_ranked(union, s) for s in scores], k=k, weights=weights)


def _ranked(candidates: Sequence[str], scores: Mapping[str, float]) -> list[str]:
    """Candidates best first by ``scores`` (unscored last); ties keep the candidates' order."""
    return sorted(candidates, key=lambda c: -scores.get(c, float("-inf")))
