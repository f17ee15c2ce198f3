"""Rank fusion of several retrievers' result lists (pure).

>>> rrf([["a", "b"], ["b", "c"]], k=60)[0][0]
'b'
"""

from __future__ import annotations

from collections.abc import Sequence


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
