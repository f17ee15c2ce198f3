"""95 % bootstrap intervals for the figures a report compares (pure, seeded).

A proportion over a few hundred cases moves by several points from one sample to the next; an interval
says how far. The bootstrap resamples the cases with replacement, recomputes the figure, and takes the
2.5th and 97.5th percentiles. Seeded, so the same scores always give the same interval.

    >>> interval([1.0] * 8 + [0.0] * 2)
    (0.5, 1.0)

Deliberately left out: paired tests between two systems (compare their intervals, or run both on one
split and bootstrap the difference with ``difference``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RESAMPLES = 2000
SEED = 20261201


def interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """The bootstrap interval of the mean of ``values`` (None when there are none)."""
    if not values:
        return None
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(SEED)
    means = data[rng.integers(0, len(data), size=(RESAMPLES, len(data)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return round(float(low), 3), round(float(high), 3)


def difference(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """The bootstrap interval of mean(a) − mean(b) for paired per-case scores (same cases, same order)."""
    if not a or len(a) != len(b):
        return None
    return interval([x - y for x, y in zip(a, b, strict=True)], level)
