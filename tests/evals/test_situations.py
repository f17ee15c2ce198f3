"""evals.situations: bootstrap intervals for the situation report (pure parts)."""

from __future__ import annotations

import doctest
from types import SimpleNamespace
from typing import Any

from app.advice.fit import Example
from core.contract import Rule
from core.situation import Reading, Situation, read
from evals import situations
from evals.situations import (
    Reader,
    _as_labelled,
    _key,
    _paired_row,
    _row,
    asks_hits,
    interval,
    paired,
    whole_advisor_hits,
)


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


def test_a_follow_up_is_read_with_the_turns_of_its_conversation_that_asked_for_a_platform() -> None:
    said = {
        "On-prem, which platform?": {"deployment": "on_prem"},
        "We also use the cloud for demos.": {"deployment": "cloud"},
        "and if we also serve it?": {"workload": "training_and_serving"},
    }

    def situation(text: str) -> Situation:
        return Situation({f: Reading(f, v, text) for f, v in said[text].items()})

    reader = Reader("fake", situation, lambda q, earlier: q.endswith("platform?") or bool(earlier))
    conversation = reader.conversation(
        "and if we also serve it?", ["On-prem, which platform?", "We also use the cloud for demos."]
    )
    # the second turn continues the choice, so its facet overrides; a turn that asked nothing would not count
    assert conversation.values() == {"deployment": "cloud", "workload": "training_and_serving"}
    alone = Reader("fake", situation, lambda q, earlier: q.endswith("platform?"))
    assert alone.conversation("and if we also serve it?", ["We also use the cloud for demos."]).values() == {
        "workload": "training_and_serving"
    }


def test_asks_for_a_platform_is_measured_only_on_texts_labelled_for_it() -> None:
    rows = [
        Example("Which platform?", "train", asks=True),
        Example("and with spot nodes?", "train", asks=True, earlier=["Which platform?"]),
        Example("What does sbcast do?", "train", asks=False),
        Example("On-prem, 16 nodes. Does Enroot need a daemon?", "train", asks=None),  # facets only
    ]
    asks = {_key(rows[0]): True, _key(rows[1]): False, _key(rows[2]): True, _key(rows[3]): True}
    labelled, followups, factual = asks_hits(rows, asks)
    assert labelled == [True, False, False]
    assert followups == [False]
    assert factual == [True]  # one decision on the one text labelled as asking none


def test_a_measure_with_no_labelled_texts_prints_a_dash_not_nan() -> None:
    assert _row("selection verdicts", []) == "| selection verdicts | 0 | — | |"
    assert "nan" not in _row("whole situation", [True, False])
    assert _paired_row("negation table", [], []) == "| negation table | — | |"
    assert _paired_row("whole situation", [True, True], [False, True]).startswith("| whole situation | +0.500 |")


def test_doctests() -> None:
    assert doctest.testmod(situations).failed == 0


def _rule(i: int, condition: str, verdict: str) -> Rule:
    return Rule(
        id=f"a#0:r{i}", doc_id="a", chunk_id="a#0", section="S", language="en", condition=condition,
        verdict=verdict, quote=condition, source="table", facets=read(condition).values(),  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_misread_facet_costs_only_where_the_decision_turns_on_it() -> None:
    snap: Any = SimpleNamespace(
        chunks={},
        rules=[
            _rule(0, "LLM training on an on-premises dedicated HPC cluster", "slurm"),
            _rule(1, "cloud-first with nodes scaled out and in frequently", "kubernetes"),
        ],
    )
    on_prem = Example("On-prem racks; which platform?", "dev", facets={"deployment": "on_prem"}, asks=True)
    cloud = Example("Cloud only; which platform?", "dev", facets={"deployment": "cloud", "fleet": "elastic"}, asks=True)
    factual = Example("What is a partition?", "dev", facets={}, asks=False)
    said = {
        on_prem.text: {"deployment": "on_prem", "ops_team": "dedicated"},  # a facet no rule here reads
        cloud.text: {"deployment": "on_prem"},  # the facet the decision turns on, misread
    }
    readings = {
        _key(r): Situation({f: Reading(f, v, "") for f, v in said.get(r.text, {}).items()})
        for r in (on_prem, cloud, factual)
    }
    asks = {_key(on_prem): True, _key(cloud): True, _key(factual): False}
    assert _as_labelled([on_prem, cloud, factual], readings, asks, snap) == [True, False]
    # a text read as asking for nothing gets no verdict, which is never the labelled one
    assert _as_labelled([on_prem], readings, {**asks, _key(on_prem): False}, snap) == [False]


def test_the_whole_advisor_is_read_on_first_turns_labelled_for_asks() -> None:
    rows = [
        Example("Slurm or K8s for us?", "dev2", asks=True),
        Example("On-prem, 16 nodes. Which one?", "dev2", asks=True),
        Example("Recommend a hotel near Kyoto?", "dev2", asks=False),
        Example("And on the cloud?", "dev2", asks=True, earlier=["Slurm or K8s for us?"]),  # a follow-up: left out
        Example("64 GPUs, fixed.", "dev2", asks=None),  # not labelled for asks: left out
    ]
    asked: list[str] = []

    def decides(text: str) -> bool:
        asked.append(text)
        return "Which" in text or "hotel" in text

    platform, none = whole_advisor_hits(rows, decides)
    assert platform == [False, True]  # the first platform question ended without a decision
    assert none == [False]  # the hotel request got one
    assert asked == [r.text for r in rows[:3]]
