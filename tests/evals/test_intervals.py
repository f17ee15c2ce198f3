"""Bootstrap intervals and the protocol's splits."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from evals import intervals
from evals.golden import GoldenError, split_files
from evals.intervals import difference, interval


def test_doctests() -> None:
    assert doctest.testmod(intervals).failed == 0


def test_interval_contains_the_mean_and_narrows_with_more_cases() -> None:
    small = interval([1.0, 0.0] * 10)
    large = interval([1.0, 0.0] * 200)
    assert small is not None and large is not None
    assert small[0] <= 0.5 <= small[1] and large[0] <= 0.5 <= large[1]
    assert (large[1] - large[0]) < (small[1] - small[0])
    assert interval([]) is None


def test_interval_is_seeded() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0]
    assert interval(values) == interval(values)


def test_difference_of_paired_scores() -> None:
    better, worse = [1.0] * 30, [1.0] * 15 + [0.0] * 15
    low, high = difference(better, worse) or (0.0, 0.0)
    assert low > 0.2 and high <= 0.8
    assert difference([1.0], [1.0, 0.0]) is None


def test_splits_name_existing_files_and_keep_test_apart() -> None:
    train, dev, test = (split_files(name) for name in ("train", "dev", "test"))
    assert all(p.exists() for p in train + dev + test)
    assert not set(train) & set(test) and not set(dev) & set(test)


def test_unknown_split_is_a_clear_error(tmp_path: Path) -> None:
    splits = tmp_path / "splits.toml"
    splits.write_text('train = ["a.jsonl"]\n', encoding="utf-8")
    with pytest.raises(GoldenError, match="unknown split 'dev'"):
        split_files("dev", splits)
