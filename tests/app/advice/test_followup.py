"""app.advice.followup: which turns lean on the conversation, and the query they resolve to."""

from __future__ import annotations

import pytest

from app.advice.followup import is_followup, resolve, resolve_turn


@pytest.mark.parametrize(
    ("question", "followup"),
    [
        ("And its control plane?", True),
        ("What about Kubernetes?", True),
        ("そのコントロールプレーンは？", True),
        ("How many control plane nodes does Kubernetes need?", False),
        ("Slurmの構築に必要な台数は？", False),
        # a turn that re-asks the previous one, or opens by acknowledging it
        ("Leadership now says one platform only, no exceptions. Does that change things?", True),
        ("Makes sense. Later we'll need to host the models for customers. Should we move everything?", True),
        ("なるほど。推論も同じ基盤でやりたい場合は？", True),
        ("Makes sense to run Slurm on bare metal for training?", False),
        ("Which changes things more for GPU utilisation: gang scheduling or topology-aware placement?", False),
    ],
)
def test_is_followup(question: str, followup: bool) -> None:
    assert is_followup(question) is followup


def test_resolve_chains_followups() -> None:
    history = ["How heavy is Kubernetes to operate?", "And its control plane?"]
    resolved = resolve("What about upgrades then?", history)
    # the new turn dominates: it comes first, the earlier questions fill in after it
    assert resolved.startswith("What about upgrades then?")
    assert resolved.endswith("How heavy is Kubernetes to operate?")
    assert resolve("Slurmの構築に必要な台数は？", history) == "Slurmの構築に必要な台数は？"
    assert resolve("And its control plane?", []) == "And its control plane?"


@pytest.mark.parametrize(
    ("question", "elliptical"),
    [
        ("3Dトーラスは？", True),
        ("各ノード側の設定ファイルは？", True),
        ("and the Kueue equivalent?", True),
        # a question of its own that happens to end in "は？"
        ("Slurmの構築に必要な台数は？", False),
        ("置換を一度だけ試すモードは？", False),
    ],
)
def test_an_elliptical_turn_leans_on_the_conversation(question: str, elliptical: bool) -> None:
    assert is_followup(question) is elliptical
    if elliptical:
        turn = resolve_turn(question, ["Slurmのringトポロジはどのファイルに書く？"])
        assert turn.context or turn.reframed


def test_a_turn_that_names_no_subject_leans_on_the_conversation() -> None:
    history = ["How do I install Volcano on a cluster?"]
    # no product, platform or identifier of its own: the subject is the conversation's
    turn = resolve_turn("デフォルトで有効になってる？", history, {"Volcano"})
    assert turn.context == "How do I install Volcano on a cluster?"
    # a turn that names its own subject stands alone
    assert resolve_turn("Is gang scheduling on by default in Kueue?", history, {"Volcano", "Kueue"}).context == ""
    # nothing to lean on without a conversation
    assert resolve_turn("デフォルトで有効になってる？", [], {"Volcano"}).context == ""


def test_a_version_alone_is_a_version_of_the_conversations_subject() -> None:
    history = ["Which training runtimes did Kubeflow Trainer v2.2 add?"]
    turn = resolve_turn("v2.1では何が入った？", history, {"Kubeflow Trainer"})
    # the subject comes from the conversation; the version asked before gives way to the new one
    assert turn.context == "Which training runtimes did Kubeflow Trainer add?"
    assert resolve_turn("What did Kubeflow Trainer v2.1 add?", history, {"Kubeflow Trainer"}).context == ""


def test_read_as_shows_the_earlier_question_in_the_users_words() -> None:
    turn = resolve_turn("and Kubernetes' strengths?", ["記事の「Slurmの強み」には何が挙がってる？"])
    # retrieval leaves the replaced platform out; "Read as" shows what the user asked before, not "記事の「の強み」"
    assert turn.context == "記事の「の強み」には何が挙がってる？"
    assert turn.question == "and Kubernetes' strengths? (記事の「Slurmの強み」には何が挙がってる？)"
    # a chain of follow-ups shows every question it leans on, newest first, as the query reads them
    chain = resolve_turn("and roll it back?", ["How do I install Volcano?", "And how do I upgrade it?"], {"Volcano"})
    assert chain.question == "and roll it back? (And how do I upgrade it? How do I install Volcano?)"
    assert chain.query == "and roll it back? And how do I upgrade it? How do I install Volcano?"
