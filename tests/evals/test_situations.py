"""evals.situations: bootstrap intervals for the situation report (pure parts)."""

from __future__ import annotations

from evals.situations import interval, paired


def test_interval_brackets_the_share_and_narrows_with_more_items() -> None:
    share, low, high = interval([True] * 8 + [False] * 2)
    assert share == 0.8 and low <= 0.8 <= high and high <= 1.0
    wide = interval([True, False] * 5)
    narrow = interval([True, False] * 200)
    assert (narrow[2] - narrow[1]) < (wide[2] - wide[1])


def test_paired_difference_excludes_zero_only_for_a_real_gain() -> None:
    better = [True] * 40
    worse = [True] * 10 + [False] * 30
    assert paired(better, worse)[1] > 0
    same = [True, False] * 20
    low, high = paired(same, list(reversed(same)))[1:]
    assert low <= 0 <= high
