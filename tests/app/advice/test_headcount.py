"""app.advice.headcount: the number of people a situation names, in both languages, and as facet features."""

from __future__ import annotations

import doctest

import pytest

from app.advice import headcount
from app.advice.features import facet_feature_names, facet_features
from app.advice.headcount import head_count


def test_doctests_pass() -> None:
    result = doctest.testmod(headcount)
    assert result.attempted >= 4 and result.failed == 0


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("two ppl operate everything, rented H100s", 2),
        ("We're a 40-person startup with 64 H100s", 40),
        ("A team of eight runs the cluster full time", 8),
        ("Two part-time admins look after it", 2),
        ("15 full-time SREs are on call", 15),
        ("one person runs the GPUs", 1),
        ("運用は2人の兼務です", 2),
        ("インフラは専任6名の体制", 6),
        ("ひとりで運用しています", 1),
        ("ＳＲＥは３人", 3),  # full-width digits
        ("20 people in the lab, 2 admins run the cluster", 2),  # the smallest: those who run it
    ],
)
def test_counts_in_both_languages(text: str, count: int) -> None:
    assert head_count(text) == count


@pytest.mark.parametrize(
    "text",
    [
        "32 nodes, fixed, on-prem",  # nodes, not people
        "Our seasoned HPC admins know Slurm",  # "one" inside a word is no number
        "HPCの経験者がチームに一人もいません",  # 「一人も…ない」: nobody
        "GPUは8台で固定",
        "the ML folks run it between experiments",
    ],
)
def test_no_count_where_none_is_named(text: str) -> None:
    assert head_count(text) is None


def _ops(text: str) -> dict[str, float]:
    return dict(zip(facet_feature_names("ops_team"), facet_features(text)["ops_team"], strict=True))


def test_the_ops_team_model_reads_whether_a_count_is_stated_and_its_size() -> None:
    small, large, none = _ops("two admins run it"), _ops("a team of 12 runs it"), _ops("on-prem racks")
    assert small["headcount"] == large["headcount"] == 1 and none["headcount"] == 0
    assert 0 < small["headcount_log"] < large["headcount_log"] and none["headcount_log"] == 0


def test_only_the_facets_that_count_people_read_the_count() -> None:
    assert "headcount" not in facet_feature_names("fleet")
    assert len(facet_features("two admins, 8 fixed nodes")["fleet"]) == len(facet_feature_names("fleet"))
