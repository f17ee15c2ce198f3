"""Small numeric helpers every stage shares (pure): a percentile, a row-wise cosine similarity, unit-length rows.

``percentile`` interpolates linearly between the two nearest ranks (numpy's default), so evals and the
benchmarks report latencies the same way. ``cosine_rows`` scores each row of a matrix against one vector;
a zero-length row or vector scores 0 instead of dividing by zero.

    >>> percentile([10, 20, 30, 40], 50), percentile([10, 20, 30, 40], 95)
    (25.0, 38.5)
    >>> cosine_rows([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]], [3.0, 0.0]).tolist()
    [1.0, 0.0, 0.0]

Deliberately left out: other interpolation methods, weighted percentiles, and similarity measures other
than cosine (every embedder here is compared by cosine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["cosine_rows", "normalise_rows", "percentile"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (``q`` in [0, 100]) of ``values``, linearly interpolated; None for no values."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within [0, 100], got {q}")
    if not values:
        return None
    ordered = sorted(float(v) for v in values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def cosine_rows(matrix: npt.ArrayLike, vector: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Cosine similarity of every row of ``matrix`` (n × d) to ``vector`` (d): an array of n floats.

    Rows are not assumed to be unit length (encoders differ); a zero row or a zero vector gives 0.
    """
    rows = np.asarray(matrix, dtype=np.float64)
    query = np.asarray(vector, dtype=np.float64)
    if rows.size == 0:
        return np.zeros(rows.shape[0] if rows.ndim == 2 else 0, dtype=np.float64)
    if rows.ndim != 2 or query.ndim != 1 or rows.shape[1] != query.shape[0]:
        raise ValueError(f"cosine_rows needs an (n, d) matrix and a (d,) vector, got {rows.shape} and {query.shape}")
    norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(query)
    dots = rows @ query
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def normalise_rows(matrix: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Every row of ``matrix`` scaled to unit length (a zero row stays zero).

    >>> normalise_rows([[3.0, 4.0], [0.0, 0.0]]).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    rows = np.asarray(matrix, dtype=np.float64)
    if rows.size == 0:
        return rows
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
