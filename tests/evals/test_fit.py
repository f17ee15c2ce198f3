"""evals.fit: how the value bar is chosen on dev."""

from __future__ import annotations

import doctest

import numpy as np

from evals import fit
from evals.fit import precision_threshold


def test_doctests() -> None:
    assert doctest.testmod(fit).failed == 0


def test_every_prefix_of_the_ranking_is_a_candidate_bar() -> None:
    # the fifth value's probability rounds up to 0.8426: the bar must still be able to show it
    p = np.array([0.95, 0.93, 0.9, 0.88, 0.842591, 0.84, 0.3])
    y = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0])
    bar, precision, coverage = precision_threshold(p, y, 0.9)
    assert bar <= 0.842591 and precision == 1.0 and coverage == 5 / 7
    assert int((p >= bar).sum()) == 5
    # fewer than five values never set a bar
    assert precision_threshold(p[:4], y[:4], 0.9)[0] == 1.01
