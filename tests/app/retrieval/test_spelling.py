"""Typo repair (pure): misspelt product words are fixed towards the corpus, real words and short names never."""

from __future__ import annotations

import pytest

from app.retrieval.spelling import closest, correct, edits, word_counts

VOCAB = word_counts(
    [
        "Kubernetes runs pods. Kubernetes schedules containers across a cluster.",
        "Slurm schedules batch jobs; frameworks such as PyTorch are supported.",
        "Noting the scheduler behaviour, maintainers keep the cluster healthy.",
    ]
)


def test_edits_counts_a_swap_as_one() -> None:
    assert edits("kuberentes", "kubernetes", 2) == 1
    assert edits("clustr", "cluster", 2) == 1
    assert edits("slurm", "storm", 1) == 2  # stops early: over the limit


@pytest.mark.parametrize(
    ("question", "fixed"),
    [
        ("Kuberentesって何バージョンまで？", "kubernetesって何バージョンまで？"),
        ("how large a clustr is it built for?", "how large a cluster is it built for?"),
        ("which ML framworks does it support?", "which ML frameworks does it support?"),
        ("nothing else matters", "nothing else matters"),  # an English word, even one edit from "noting"
        ("Is LSF or PBS faster?", "Is LSF or PBS faster?"),  # short names stay as they are (refusal needs them)
        ("IBM Spectrum LSF", "IBM Spectrum LSF"),
        ("v1.40 and H100", "v1.40 and H100"),
    ],
)
def test_correct(question: str, fixed: str) -> None:
    assert correct(question, VOCAB) == fixed


def test_closest_prefers_the_nearest_then_most_frequent() -> None:
    assert closest("schedulez", {"scheduler": 1, "schedules": 9}, {"scheduler": 1, "schedules": 9}) == "schedules"
    assert closest("zzzzzz", VOCAB) is None
    assert closest("slrm", VOCAB) is None  # under five letters: never corrected


def test_custom_word_check_is_used() -> None:
    assert correct("clustr", VOCAB, is_word=lambda w: True) == "clustr"
