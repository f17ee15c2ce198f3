"""evals.situations: bootstrap intervals for the situation report (pure parts)."""

from __future__ import annotations

from core.situation import Reading, Situation
from evals.situations import Reader, _row, interval, paired


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


def test_a_measure_with_no_labelled_texts_prints_a_dash_not_nan() -> None:
    assert _row("selection verdicts", []) == "| selection verdicts | 0 | — | |"
    assert "nan" not in _row("whole situation", [True, False])
