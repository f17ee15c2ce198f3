"""app.advice.frame: an elliptical follow-up is the previous question asked about the new thing."""

from __future__ import annotations

import pytest

from app.advice.followup import resolve_turn
from app.advice.frame import new_thing, reframe

NAMES = {"Kueue", "Volcano", "KAI Scheduler", "Pyxis", "Enroot", "Slinky"}


@pytest.mark.parametrize(
    ("question", "thing"),
    [
        ("And Volcano?", "Volcano"),
        ("What about for KAI Scheduler?", "KAI Scheduler"),
        ("what about the default?", "default"),
        ("and Kubernetes'?", "Kubernetes"),
        ("Slurmのほうのアップグレードは？", "Slurmのアップグレード"),
        ("Volcanoだと？", "Volcano"),
        ("じゃあKAI Schedulerの場合は？", "KAI Scheduler"),
        # a turn that asks or states something of its own is not an ellipsis
        ("And how do I upgrade it?", None),
        ("What if we also serve the model?", None),
        ("What about installing KAI Scheduler instead: what do I need first?", None),
        ("その場合の保守は？アップグレードとかどうやるの？", None),
        ("推論も始めることになりました。", None),
    ],
)
def test_new_thing(question: str, thing: str | None) -> None:
    assert new_thing(question) == thing


@pytest.mark.parametrize(
    ("previous", "question", "rewritten"),
    [
        # a product replaces the previous product: the attribute asked stays
        (
            "Which apiVersion do Kueue Topology objects use?",
            "And Volcano?",
            "Which apiVersion do Volcano Topology objects use?",
        ),
        (
            "KueueのTASでラック内にまとめるラベルキーは？",
            "KAI Schedulerだと？",
            "KAI SchedulerのTASでラック内にまとめるラベルキーは？",
        ),
        # across languages: an English follow-up to a Japanese question, and the other way round
        ("KueueでGPUクォータを設定するCRDの名前は？", "And Volcano?", "VolcanoでGPUクォータを設定するCRDの名前は？"),
        ("How do I request two GPUs for a job in Slurm?", "k8sだと？", "How do I request two GPUs for a job in k8s?"),
        # a platform replaces the platform, not another product of the question
        (
            "Soperatorが対応してるSlurmのバージョンは？",
            "じゃあKubernetesのほうは？",
            "Soperatorが対応してるKubernetesのバージョンは？",
        ),
        # a product's "XのY" replaces the previous product's "AのB"
        (
            "記事だとKubernetesのマイナーリリースって年に何回？",
            "Slurmのほうのアップグレードは？",
            "記事だとSlurmのアップグレードって年に何回？",
        ),
        # ... but a component named "XのY" is a subject: the value asked ("Kubernetesのバージョン") stays
        (
            "Volcanoを入れる前提になってるKubernetesのバージョンは？",
            "Slinkyのslurm-operatorの場合は？",
            "Slinkyのslurm-operatorを入れる前提になってるKubernetesのバージョンは？",
        ),
        # a new thing sharing a word with the previous question replaces as many of its words
        (
            "Which sbatch option requests GPUs per node in Slurm?",
            "and per task?",
            "Which sbatch option requests GPUs per task in Slurm?",
        ),
        (
            "In the KAI topology example, how many GPUs does Zone A have?",
            "and Zone B?",
            "In the KAI topology example, how many GPUs does Zone B have?",
        ),
        (
            "treeトポロジで、リーフスイッチの最大数を指定するオプションは？",
            "blockトポロジの場合は？",
            "blockトポロジで、リーフスイッチの最大数を指定するオプションは？",
        ),
        # the other end of a scale
        (
            "What's the minimum Kubernetes version for Slinky?",
            "And the maximum?",
            "What's the maximum Kubernetes version for Slinky?",
        ),
        # an identifier replaces the previous identifier
        (
            "What is the default of MaxArraySize in slurm.conf?",
            "And MaxJobCount?",
            "What is the default of MaxJobCount in slurm.conf?",
        ),
    ],
)
def test_reframe(previous: str, question: str, rewritten: str) -> None:
    assert reframe(question, previous, NAMES) == rewritten


def test_reframe_needs_something_to_replace() -> None:
    # the previous question names no product: nothing says where the new one goes
    assert reframe("And Volcano?", "How do gang schedulers avoid deadlocks?", NAMES) is None
    # the same product again is no new frame
    assert reframe("And Kueue?", "How does Kueue admit jobs?", NAMES) is None


def test_resolve_turn_uses_the_frame_and_chains() -> None:
    history = ["Which apiVersion do Kueue Topology objects use?", "And Volcano?"]
    turn = resolve_turn("KAI Schedulerだと？", history, NAMES)
    # the chain keeps the frame: the second turn was read as the Volcano question, the third replaces Volcano
    assert turn.reframed and turn.focus == "Which apiVersion do KAI Scheduler Topology objects use?"
    assert turn.question == turn.focus and turn.query == turn.focus


def test_an_ellipsis_nothing_fits_keeps_the_frame() -> None:
    history = ["Which Slurm TopologyPlugin models ring networks?", "and a 3D torus?"]
    turn = resolve_turn("And a dragonfly network?", history, NAMES)
    assert turn.reframed and turn.focus == "Which Slurm TopologyPlugin models dragonfly network?"


def test_resolve_turn_shows_a_leaning_followup_with_its_context() -> None:
    turn = resolve_turn("And how do I upgrade it?", ["How do I install Volcano?"], NAMES)
    assert not turn.reframed
    assert turn.question == "And how do I upgrade it? (How do I install Volcano?)"
    assert resolve_turn("How do I install Volcano?", [], NAMES).question == "How do I install Volcano?"


NAMES_LONG = {*NAMES, "Kubeflow MPI Operator", "Slurm", "Kubernetes"}


@pytest.mark.parametrize(
    ("previous", "question", "rewritten"),
    [
        # a word typed as code replaces the previous identifier, even one the entity reader does not know
        (
            "Since which Kueue release is PartialAdmission stable?",
            "and TASFooBarGate?",
            "Since which Kueue release is TASFooBarGate stable?",
        ),
        # "the X equivalent", "X側で相当するもの": the owner is the new thing
        (
            "Which label makes Volcano pack pods in one rack?",
            "and the Kueue equivalent?",
            "Which label makes Kueue pack pods in one rack?",
        ),
        ("Volcanoでラック内にまとめるラベルは？", "Kueueで相当するものは？", "Kueueでラック内にまとめるラベルは？"),
        # a product named by the last two words of its title
        (
            "Which CRD does the MPI Operator add?",
            "What about Volcano's?",
            "Which CRD does the Volcano add?",
        ),
        # a thing with no product of its own replaces what the previous question asked about its product
        ("Slurmのringトポロジはどのプラグイン？", "3Dトーラスは？", "Slurmの3Dトーラスはどのプラグイン？"),
        ("KueueのPartialAdmissionはデフォルトで有効？", "fair sharingは？", "Kueueのfair sharingはデフォルトで有効？"),
        # ... but not the value asked ("バージョン" is the attribute that carries over)
        ("Soperatorが対応するSlurmのバージョンは？", "GPU Operatorは？", None),
        # a name the corpus does not document replaces the platform a product depends on, not the product
        (
            "Which Kubernetes release does Pyxis require?",
            "And Helm?",
            "Which Helm release does Pyxis require?",
        ),
        # a clause is no thing to put in a slot
        ("Slurmのringトポロジはどのプラグイン？", "置換を一度だけ試すモードは？", None),
        # a product of several words owns its "のB" whole, and a new product's "XのY" takes its place
        (
            "Kubeflow MPI OperatorのMPIJobのapiVersionは？",
            "KueueのResourceFlavorは？",
            "KueueのResourceFlavorのapiVersionは？",
        ),
        (
            "KAI SchedulerのPyTorchJobのサンプルでPodはいくつ？",
            "BatchJobは？",
            "KAI SchedulerのBatchJobのサンプルでPodはいくつ？",
        ),
        # a version written after the product replaced was that product's: it goes with it
        (
            "What is the minimum Kubernetes version required by Slinky v1.2?",
            "And for Volcano?",
            "What is the minimum Kubernetes version required by Volcano?",
        ),
        (
            "Which Kueue 0.14 annotation packs a PodSet into a rack?",
            "And Volcano?",
            "Which Volcano annotation packs a PodSet into a rack?",
        ),
        # ... a version of another product stays
        ("Does Volcano support Kubernetes 1.34?", "And Kueue?", "Does Kueue support Kubernetes 1.34?"),
    ],
)
def test_reframe_slots(previous: str, question: str, rewritten: str | None) -> None:
    assert reframe(question, previous, NAMES_LONG) == rewritten


def test_a_new_thing_replaces_the_one_the_previous_followup_put_in() -> None:
    history = ["Which Kubernetes release does Pyxis require?", "And Helm?"]
    turn = resolve_turn("And NCCL?", history, NAMES_LONG)
    assert turn.reframed and turn.focus == "Which NCCL release does Pyxis require?"
    # across languages: a Japanese ellipsis after an English chain
    turn = resolve_turn("CUDAは？", history, NAMES_LONG)
    assert turn.reframed and turn.focus == "Which CUDA release does Pyxis require?"


def test_the_rewrite_keeps_the_previous_answer_type() -> None:
    from app.answer.question import analyse

    previous = "KueueのPartialAdmissionはデフォルトで有効？"
    turn = resolve_turn("fair sharingは？", [previous], NAMES_LONG)
    assert analyse(turn.focus, NAMES_LONG).answer_type == analyse(previous, NAMES_LONG).answer_type


@pytest.mark.parametrize(
    ("previous", "question", "rewritten"),
    [
        # the other end of a scale, in the previous question's language whichever language the turn is in
        (
            "Kueueのコホートで借りられるGPUの最小数は？",
            "And the maximum?",
            "Kueueのコホートで借りられるGPUの最大数は？",
        ),
        (
            "What's the lowest priority a Volcano queue can have?",
            "最高は？",
            "What's the highest priority a Volcano queue can have?",
        ),
        ("Which is the first release with the feature?", "最後は？", "Which is the last release with the feature?"),
        # nothing on that scale in the previous question: no rewrite by this rule
        ("Kueueのコホートで借りられるGPUの数は？", "And the newest?", None),
    ],
)
def test_reframe_opposite_across_languages(previous: str, question: str, rewritten: str | None) -> None:
    assert reframe(question, previous, NAMES) == rewritten


@pytest.mark.parametrize(
    ("previous", "question", "rewritten"),
    [
        (
            "How much memory does the Kubernetes control plane use according to the article?",
            "Slurmだとどのくらい？",
            "How much memory does the Slurm control plane use according to the article?",
        ),
        (
            "記事によるとKubernetesのコントロールプレーンはどのくらいメモリを使う？",
            "How much for Slurm?",
            "記事によるとSlurmのコントロールプレーンはどのくらいメモリを使う？",
        ),
        (
            "How many minor releases does Kubernetes ship a year?",
            "And how many for Slurm?",
            "How many minor releases does Slurm ship a year?",
        ),
        # another measure asks something else of the new thing: the turn stands as written
        ("How much memory does the Kubernetes control plane use?", "Slurmだといつ？", None),
        ("When was Kubernetes first released?", "Slurmだとどのくらい？", None),
    ],
)
def test_an_ellipsis_may_ask_the_same_measure_again(previous: str, question: str, rewritten: str | None) -> None:
    assert reframe(question, previous, NAMES) == rewritten


@pytest.mark.parametrize(
    "question", ["what about the default?", "And the default value?", "デフォルトは？", "既定値は？"]
)
def test_a_kind_of_value_asked_again_leans_on_the_previous_question(question: str) -> None:
    # the thing whose default is asked is what the previous question describes (its answer names it): the
    # turn keeps its own words and the previous question beside it, rather than "the default of Slurm"
    previous = "Which slurm.conf parameter sets how long past usage keeps affecting fair-share?"
    assert reframe(question, previous, NAMES) is None
    turn = resolve_turn(question, [previous], NAMES)
    assert (turn.focus, turn.context) == (question, previous)
    assert turn.question == f"{question} ({previous})"


def test_a_thing_with_a_value_of_its_own_is_asked_of_the_previous_subject() -> None:
    previous = "Kubernetes 1.19 以降のマイナーリリースはパッチリリースのサポートが何年ある？"
    assert reframe("1.18以前のリリースは？", previous, {*NAMES, "Kubernetes"}) == "Kubernetesの1.18以前のリリースは？"


def test_a_demonstrative_points_back_instead_of_naming_a_new_thing() -> None:
    # "そのリリース" is the release the conversation named, not a new subject to put in the previous question
    assert new_thing("そのリリースの目玉機能は？") is None
    assert new_thing("それが追加されたSlurmのバージョンは？") is None
    turn = resolve_turn("そのリリースの目玉機能は？", ["KAI Scheduler の v0.10.0 っていつ出たの？"], NAMES)
    assert not turn.reframed and "v0.10.0" in turn.query
