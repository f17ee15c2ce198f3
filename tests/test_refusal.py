"""Refusal signals (pure): unknown names and the support thresholds."""

from __future__ import annotations

import pytest

from app.refusal import MIN_SUPPORT, SUPPORT_WITH_UNKNOWN, should_refuse, unknown_names

VOCAB = {"slurm", "kubernete", "gpu", "kueue", "volcano", "scheduler", "1.32"}


@pytest.mark.parametrize(
    ("question", "unknown"),
    [
        ("Is LSF faster than Slurm?", ["lsf"]),
        ("How does HTCondor compare with Kueue?", ["htcondor"]),
        ("What is the MTBF of an H100?", ["mtbf", "h100"]),
        ("Does Kubernetes 1.32 support it?", []),
        ("Does Kuberentes support gang scheduling?", []),  # a typo of a known word is not a new name
        ("Volcano or Kueue?", []),
        ("slurmとkueueの違いは？", []),
        ("", []),
    ],
)
def test_unknown_names(question: str, unknown: list[str]) -> None:
    assert unknown_names(question, VOCAB) == unknown


def test_should_refuse_thresholds() -> None:
    assert should_refuse(MIN_SUPPORT - 0.01, [])
    assert not should_refuse(MIN_SUPPORT + 0.01, [])
    assert should_refuse(SUPPORT_WITH_UNKNOWN - 0.01, ["lsf"])
    assert not should_refuse(SUPPORT_WITH_UNKNOWN + 0.01, ["lsf"])
