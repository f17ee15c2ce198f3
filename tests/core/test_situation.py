"""The situation reader (pure): cue phrases in both languages, negation scope, follow-ups, spans."""

from __future__ import annotations

import pytest

from core.situation import Situation, clauses, cue_text, facets, read, read_as, role_split


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We run LLM training on our own on-prem GPU cluster.", {"deployment": "on_prem"}),
        ("オンプレの専用クラスタで学習します", {"deployment": "on_prem"}),
        (
            "All our GPUs are rented from a hyperscaler and the node count changes every day.",
            {"deployment": "cloud", "fleet": "elastic"},
        ),
        ("クラウドでノードを頻繁に増減させたい", {"deployment": "cloud", "fleet": "elastic"}),
        (
            "We also serve the trained model to customers from the same cluster.",
            {"workload": "training_and_serving", "one_platform": "yes"},
        ),
        ("学習後、同じ基盤で推論サービスも運用したい", {"workload": "training_and_serving", "one_platform": "yes"}),
        ("Our two-person ops team comes from classic HPC.", {"hpc_experience": "experienced", "ops_team": "small"}),
        ("社内にHPC文化があり、運用人員が少数です", {"hpc_experience": "experienced", "ops_team": "small"}),
        ("We want the fastest and cheapest training with high GPU utilisation.", {"priority": "training_speed_cost"}),
        # a data centre of one's own by its abbreviation, and hardware owned
        ("Specs: own DC, no cloud.", {"deployment": "on_prem"}),
        ("自社DCで学習します", {"deployment": "on_prem"}),
        ("We own the hardware.", {"deployment": "on_prem"}),
        ("研究所のサーバ室にあります", {"deployment": "on_prem"}),
        # a fixed fleet in the words each language uses for it
        ("Eight nodes, fixed at 8 for the next three years.", {"fleet": "fixed"}),
        ("We have a fixed allocation of 128 A100s.", {"fleet": "fixed"}),
        ("64 GPUs, fixed.", {"fleet": "fixed"}),
        ("The node count doesn't change.", {"fleet": "fixed"}),
        ("We are not adding any more nodes.", {"fleet": "fixed"}),
        ("GPU8ノード固定", {"fleet": "fixed"}),
        ("固定32ノードのクラスタ", {"fleet": "fixed"}),
        ("H100×8（固定）", {"fleet": "fixed"}),
        ("台数は一定です", {"fleet": "fixed"}),
        ("今年は増設の予定はありません", {"fleet": "fixed"}),
        # the same priority in the other words each language uses for it
        ("何よりもGPU稼働率を上げたい", {"priority": "training_speed_cost"}),
        ("学習スループット重視です", {"priority": "training_speed_cost"}),
        ("学習コスト最優先", {"priority": "training_speed_cost"}),
        ("We just need training to be cheap.", {"priority": "training_speed_cost"}),
        ("Cost is king for us, and GPU efficiency.", {"priority": "training_speed_cost"}),
        (
            "推論やマイクロサービスをCI/CDと一気通貫で統合したい",
            {"workload": "training_and_serving", "priority": "integration"},
        ),
        (
            "We now need an inference tier too, but we'd rather keep the training side as it is.",
            {"workload": "training_and_serving", "one_platform": "no"},
        ),
        (
            "推論サービスも始めたいが、学習側はそのままにしたい",
            {"workload": "training_and_serving", "one_platform": "no"},
        ),
        (
            "we also need to serve it, on a separate k8s cluster",
            {"workload": "training_and_serving", "one_platform": "no"},
        ),
        (
            "学習は既存のSlurmクラスタで回して、推論だけk8sでスケールさせたい",
            {"workload": "training_and_serving", "one_platform": "no"},
        ),
        ("HPCの経験はあってもk8sは触ったことがない", {"hpc_experience": "experienced"}),
        (
            "A 4-person infra team, used to batch HPC schedulers, on-prem, purely for LLM pretraining.",
            {"deployment": "on_prem", "workload": "training", "hpc_experience": "experienced", "ops_team": "small"},
        ),
    ],
)
def test_cues_in_both_languages(text: str, expected: dict[str, str]) -> None:
    assert read(text).values() == expected


@pytest.mark.parametrize(
    ("text", "facet", "value"),
    [
        ("We will not run any inference on the cluster.", "workload", "training"),
        ("No inference on our side, ever.", "workload", "training"),
        ("推論の予定はない", "workload", "training"),
        ("推論を動かす予定はありません", "workload", "training"),
        ("we will not serve models", "workload", "training"),
        ("drop the autoscaling requirement", "fleet", "fixed"),
        ("Not in the cloud.", "deployment", "on_prem"),
        ("クラウドは使わず、学内の計算機室で回します", "deployment", "on_prem"),
        ("オートスケールは要りません", "fleet", "fixed"),
        ("and if inference is off the table?", "workload", "training"),
        ("nobody here has any HPC background", "hpc_experience", "new"),
        ("うちのメンバーはHPCの人間ではないし", "hpc_experience", "new"),
    ],
)
def test_negation_sets_the_opposite_value(text: str, facet: str, value: str) -> None:
    assert read(text).readings[facet].value == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("the ops folks are all ex-HPC and Slurm is what they know", "experienced"),
        ("Our admins grew up on PBS and Slurm.", "experienced"),
        ("between us we've run Slurm at two national labs", "experienced"),
        ("Slurmを使ったことがある人ばかりです", "experienced"),
        ("研究者はsbatch/srunに慣れてる", "experienced"),
        ("Nobody here has ever used Slurm or PBS.", "new"),
        ("we have never touched Slurm", "new"),
        ("Slurmは使ったことがありません", "new"),
        ("全員Kubernetes畑です", "new"),
        ("We have lived with batch HPC schedulers for years.", "experienced"),
        ("We have never used batch HPC schedulers.", "new"),
    ],
)
def test_experience_with_a_named_batch_scheduler(text: str, value: str) -> None:
    assert read(text).readings["hpc_experience"].value == value


@pytest.mark.parametrize(
    "text", ["How do I run Slurm on Kubernetes?", "Slurmを使って学習するには？", "How do Slurm users request GPUs?"]
)
def test_using_a_scheduler_today_is_no_statement_of_experience(text: str) -> None:
    assert "hpc_experience" not in read(text).readings


def test_a_negated_reading_says_so_and_a_direct_one_wins() -> None:
    assert read("We will not run any inference.").readings["workload"].negated
    # "not in the cloud" and "our own racks" both say on-prem: the direct statement is the one shown
    reading = read("Not in the cloud, on our own racks.").readings["deployment"]
    assert reading.value == "on_prem" and not reading.negated


@pytest.mark.parametrize(
    ("text", "facet", "value"),
    [
        ("Two systems is fine by us for training and serving.", "workload", "training_and_serving"),
        ("基盤が2つになるのは気にしません", "one_platform", "no"),
        ("基盤が2つになるのは全然かまわない", "one_platform", "no"),  # either spelling of 構わない
        ("学習と推論で基盤が分かれても大丈夫です", "one_platform", "no"),
        ("インフラ担当は3人しかいません", "ops_team", "small"),
        ("社内にHPCの文化があって運用担当も少ないなら", "hpc_experience", "experienced"),
        ("学習と推論を同じ基盤で回すことを譲らない方針です", "one_platform", "yes"),
    ],
)
def test_what_is_not_a_negation(text: str, facet: str, value: str) -> None:
    assert read(text).readings[facet].value == value


def test_scaling_of_the_serving_tier_is_not_the_fleet() -> None:
    assert "fleet" not in read("we need an inference tier that scales out with demand").readings


def test_role_split_reads_as_the_hybrid_situation() -> None:
    assert role_split("train on Slurm, serve on k8s")
    assert role_split("長時間学習はSlurmクラスタ、推論はKubernetesでスケールアウト")
    assert not role_split("Slurm and Kubernetes both schedule GPUs")
    values = read("keep our on-prem Slurm cluster for pretraining and put the serving endpoints on k8s").values()
    assert values["workload"] == "training_and_serving" and values["one_platform"] == "no"


def test_a_follow_up_overrides_earlier_facets_negations_included() -> None:
    earlier = read("We train on our own on-prem cluster and also serve the model.")
    newer = read("What if inference is off the table?")
    merged = earlier.merged(newer).values()
    assert merged == {"deployment": "on_prem", "workload": "training"}


def test_each_reading_keeps_the_words_that_set_it() -> None:
    reading = read("GPUs are rented on AWS").readings["deployment"]
    assert reading.value == "cloud" and reading.span.lower() == "aws"


def test_read_as_uses_human_labels_in_the_facets_order() -> None:
    situation = read("Training only, on-prem.")
    assert read_as(situation, "en") == ["on-prem", "training only"]
    assert read_as(situation, "ja") == ["オンプレミス", "学習のみ"]
    assert not read_as(Situation(), "en")


def test_a_question_without_a_situation_reads_nothing() -> None:
    assert not read("Slurm or Kubernetes?")
    assert not read("")


def test_similarity_reads_a_clause_no_cue_reads() -> None:
    def similar(clause: str) -> dict[tuple[str, str], float]:
        return {("ops_team", "small"): 3.0} if "skeleton crew" in clause else {}

    assert read("a skeleton crew keeps the lights on", similar, threshold=2.5).values() == {"ops_team": "small"}
    assert not read("a skeleton crew keeps the lights on", similar, threshold=5.0)


def test_every_value_has_labels_descriptions_and_an_opposite() -> None:
    defs = facets()
    for facet in defs.order:
        for value in defs.values[facet].values():
            assert value.label["en"] and value.label["ja"] and value.description["en"] and value.change["ja"]
            assert value.opposite in defs.values[facet] and value.cues


def test_a_dash_ends_a_clause() -> None:
    # "X is not a priority — Y is": the negation of the first clause does not reach the second
    assert clauses("Integration is not a priority — GPU utilisation is.") == [
        "Integration is not a priority",
        "GPU utilisation is",
    ]
    assert clauses("a well-known tool") == ["a well-known tool"]


def test_a_japanese_but_ends_a_clause_the_particle_does_not() -> None:
    # "でも" as "but" opens the next clause; as a particle it is part of its own ("either is fine")
    assert clauses("学習と推論が同じ基盤かどうかはどっちでもいいです。でも推論はします") == [
        "学習と推論が同じ基盤かどうかはどっちでもいいです",
        "推論はします",
    ]
    assert clauses("クラウドでもオンプレでも構いません、でも学習だけです") == [
        "クラウドでもオンプレでも構いません",
        "学習だけです",
    ]


def test_a_period_inside_a_name_ends_no_clause() -> None:
    # a file name or a version is one word; a sentence's period still ends its clause
    assert clauses("Do nodes need an oci.conf with Slurm 23.11? We run in the cloud.") == [
        "Do nodes need an oci.conf with Slurm 23.11",
        " We run in the cloud",
    ]
    assert clauses("No serving. Training only.") == ["No serving", " Training only"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an English cue ends where Japanese text begins: "aws" in "AWS上で" is a word of its own
        ("AWS上で学習します", {"deployment": "cloud"}),
        ("GCPで学習します", {"deployment": "cloud"}),
        ("on-premのclusterでtraining onlyです", {"deployment": "on_prem", "workload": "training"}),
        ("CI/CDとの連携が最優先です", {"priority": "integration"}),
    ],
)
def test_an_english_cue_ends_at_japanese_text(text: str, expected: dict[str, str]) -> None:
    assert read(text).values() == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a Latin word set apart from Japanese by spaces reads as the cue written without them
        ("HPC 経験あり、Slurm or K8s?", {"hpc_experience": "experienced"}),
        ("チームは HPC 未経験です", {"hpc_experience": "new"}),
        ("Slurm 経験者が多いチーム", {"hpc_experience": "experienced"}),
        ("AWS で GPU を借りて、学習のみ", {"deployment": "cloud", "workload": "training"}),
    ],
)
def test_a_space_between_latin_and_japanese_text_changes_no_cue(text: str, expected: dict[str, str]) -> None:
    assert read(text).values() == expected


def test_cue_text_keeps_spaces_between_latin_words() -> None:
    assert cue_text("12 nodes fixed, ＧＰＵ\u3000８台") == "12 nodes fixed, gpu 8台"
    assert cue_text("ＧＰＵ\u3000台数は固定") == "gpu台数は固定"
    assert cue_text("on prem で学習") == "on premで学習"


@pytest.mark.parametrize(
    "text",
    ["ociコンテナを使うには？", "Does it have OCI container support?", "ociバンドルを転送する？", "Push the OCI chart"],
)
def test_an_open_container_initiative_word_is_no_cloud(text: str) -> None:
    assert "deployment" not in read(text).values()


def test_oracle_cloud_is_a_cloud() -> None:
    assert read("We rent GPUs on OCI and scale them daily").values()["deployment"] == "cloud"
