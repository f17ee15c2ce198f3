"""core.numeric: the one percentile and the one row-wise cosine (pure, tiny inputs)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from core import numeric
from core.numeric import cosine_rows, percentile


def test_doctests() -> None:
    assert doctest.testmod(numeric).failed == 0


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 50, None),
        ([7.0], 95, 7.0),
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50, 5.5),
        ([3, 1, 2], 0, 1.0),  # unsorted input
        ([3, 1, 2], 100, 3.0),
        ([10, 20, 30, 40], 95, 38.5),
    ],
)
def test_percentile(values: list[float], q: float, expected: float | None) -> None:
    assert percentile(values, q) == expected


def test_percentile_matches_numpys_default() -> None:
    values = [float(v) for v in np.random.default_rng(7).exponential(100, 57)]
    for q in (1, 50, 90, 95, 99):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


@pytest.mark.parametrize("q", [-1, 100.5])
def test_percentile_refuses_q_outside_0_100(q: float) -> None:
    with pytest.raises(ValueError, match="within"):
        percentile([1.0], q)


def test_cosine_rows_is_scale_free_and_zero_safe() -> None:
    matrix = [[2.0, 0.0], [0.0, 5.0], [1.0, 1.0], [0.0, 0.0], [-3.0, 0.0]]
    sims = cosine_rows(matrix, [0.5, 0.0])
    assert sims.tolist() == pytest.approx([1.0, 0.0, 2**-0.5, 0.0, -1.0])
    assert cosine_rows(matrix, [0.0, 0.0]).tolist() == [0.0] * 5  # a zero query scores nothing


def test_cosine_rows_matches_normalised_dot_products() -> None:
    rng = np.random.default_rng(3)
    matrix, vector = rng.normal(size=(6, 16)), rng.normal(size=16)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    assert cosine_rows(matrix, vector) == pytest.approx(unit @ (vector / np.linalg.norm(vector)))


def test_cosine_rows_of_no_rows_and_wrong_shapes() -> None:
    assert cosine_rows(np.zeros((0, 4)), [1.0, 0.0, 0.0, 0.0]).shape == (0,)
    assert cosine_rows([], [1.0]).shape == (0,)
    with pytest.raises(ValueError, match=r"\(n, d\)"):
        cosine_rows([[1.0, 2.0]], [1.0, 2.0, 3.0])
