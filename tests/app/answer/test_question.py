"""Question analysis (pure): answer types, parts of multi-part questions, focus, qualifiers."""

from __future__ import annotations

import pytest

from app.answer.question import analyse, asks_value, cued_types, inherit_type, qualifiers_of, unit_has_qualifier

NAMES = {"Kueue", "Volcano", "Enroot", "Pyxis", "Slinky", "Slurm", "Kubernetes"}


def test_a_sure_platform_reading_is_not_outranked_by_a_value_cue() -> None:
    # "何を入れるべき？" has a configuration value's cue words, but asked after a situation it asks for a platform
    question = "オンプレで台数は固定、運用は兼任の2人です。何を入れるべき？"
    assert asks_value(question)
    assert analyse(question, NAMES, selection=True).answer_type == "key"
    assert analyse(question, NAMES, selection=True, sure=True).answer_type == "selection"
    assert analyse(question, NAMES, sure=True).answer_type == "key"  # sure of nothing unless a platform is asked
    assert not asks_value("Which platform suits on-prem training?")


@pytest.mark.parametrize(
    ("question", "types"),
    [
        ("What apiVersion do Kueue Topology objects use?", ["api_version"]),
        ("Which srun flag mounts my home directory?", ["flag"]),
        ("Which environment variable sets where Enroot keeps its data?", ["key"]),
        ("What is the default value of the timeout?", ["default"]),
        ("When was Volcano 1.10 released?", ["date"]),
        ("How many nodes can one ring hold?", ["quantity"]),
        ("What command installs the chart?", ["command"]),
        ("Why is the control plane light?", ["reason"]),
        ("KueueのTopologyのapiVersionは？", ["api_version"]),
        ("Enrootのデータの保存先を決める環境変数は？", ["key"]),
        ("何台まで使える？", ["quantity"]),
        ("What apiVersion do Kueue Topology objects use, and which label key marks a rack?", ["api_version", "key"]),
        ("KueueのTopologyのapiVersionと、ラックを表すラベルキーは？", ["api_version", "key"]),
        ("Which flag enables it? What is its default?", ["flag", "default"]),
        ("MPIプラグインの一覧を出すコマンドは？v4を明示的に使いたいときは？", ["command", "procedure"]),
    ],
)
def test_types_and_parts(question: str, types: list[str]) -> None:
    assert [p.answer_type for p in analyse(question, NAMES).parts] == types


def test_a_plain_and_between_names_does_not_split() -> None:
    q = analyse("Which flags does Pyxis add for Slurm and Enroot?", NAMES)
    assert len(q.parts) == 1 and q.parts[0].plural


def test_focus_holds_corpus_names_and_typed_identifiers() -> None:
    q = analyse("What does the Kueue ResourceFlavor set in topologyName?", NAMES)
    assert q.focus.split(" · ") == ["Kueue", "ResourceFlavor", "topologyName"]


def test_a_value_clause_outranks_a_selection_reading() -> None:
    # "recommended upper limit of nodes" asks for a number even though 推奨 reads like a platform choice
    q = analyse("Slinkyで動くSlurmクラスタの推奨ノード数の上限は何台？", NAMES, selection=True)
    assert q.answer_type == "quantity"
    assert analyse("Which platform suits on-prem training?", NAMES, selection=True).answer_type == "selection"
    # a value word inside a condition is the case stated, not the value asked
    assert (
        analyse("クラウドでスポットノードを足してコストを下げたいなら？", NAMES, selection=True).answer_type
        == "selection"
    )
    assert analyse("Kueueのコストは？", NAMES, selection=True).answer_type == "quantity"


def test_a_clause_that_states_a_value_word_leaves_the_selection_reading() -> None:
    # "スループット重視。" states what matters (a full stop), it asks for no amount
    stated = "推論はやらない。オンプレ、専任の運用チームあり、スループット重視。どっち？"
    assert analyse(stated, NAMES, selection=True).answer_type == "selection"
    # the same words asked stay a value question
    assert (
        analyse("オンプレで専任の運用チームあり。スループットはどれくらい？", NAMES, selection=True).answer_type
        == "quantity"
    )


@pytest.mark.parametrize(
    ("question", "answer_type"),
    [
        ("What cost optimisation does the guide credit the autoscaler with?", "fact"),
        ("How does the guide say Enroot keeps I/O overhead low?", "fact"),
        ("Is there a cost to enabling topology-aware scheduling?", "yes_no"),
        ("What does the guide warn about the human cost of writing operators?", "fact"),
        ("コストを下げる仕組みはある？", "yes_no"),
        ("What is the overhead of Pyxis?", "quantity"),
        ("What inter-node latency does the guide give?", "quantity"),
        ("What does a support contract cost per year?", "quantity"),
        ("1時間使うといくら？", "quantity"),
    ],
)
def test_a_measure_named_as_a_noun_is_asked_for_only_when_its_amount_is(question: str, answer_type: str) -> None:
    assert analyse(question, NAMES).answer_type == answer_type


@pytest.mark.parametrize(
    ("question", "answer_type"),
    [
        # the question word of an embedded clause ("cap how long…") is not what the question asks
        ("Which setting lets the admin cap how long a job may wait?", "key"),
        ("Which flag sets how often the scheduler runs?", "flag"),
        ("How can an admin cap how long jobs wait for that?", "procedure"),
        # the question's own question word still types it
        ("How long does a job wait for its switches?", "quantity"),
        ("And how often does the backfill scheduler run?", "quantity"),
        # "how do the …" asks how-to only of someone doing it: things that differ are no procedure
        ("How do the Slurm and Kubernetes schedulers compare?", "comparison"),
        ("How do the two schedulers differ?", "fact"),
    ],
)
def test_only_the_first_question_word_of_a_clause_asks(question: str, answer_type: str) -> None:
    assert analyse(question, NAMES).answer_type == answer_type


def test_qualifiers_are_asked_and_must_be_stated() -> None:
    assert qualifiers_of("What is the maximum number of GPUs tested?") == ["limit"]
    assert qualifiers_of("デフォルトだと何秒？") == ["default", "time"]
    assert unit_has_qualifier("limit", "a ring holds up to 16 nodes")
    assert not unit_has_qualifier("limit", "16 nodes per ring are recommended")
    assert unit_has_qualifier("default", "Defaults to 30 seconds.")


def test_cues_are_general_wording() -> None:
    assert cued_types("") == []
    assert "yes_no" in cued_types("Does it support MIG?")


@pytest.mark.parametrize(
    ("follow_up", "previous", "expected"),
    [
        # no kind of answer of its own: the previous question's kind of value
        ("エントリポイントを実行させるのは？", "Which pyxis flag bind-mounts my home directory?", "flag"),
        ("and the one for the worker pods?", "What apiVersion does an MPIJob use?", "api_version"),
        # a question word of its own asks its own kind
        ("KAI Schedulerは何がベース？", "When was KAI Scheduler's TAS released?", "fact"),
        # the previous question asked for no value, or for several kinds
        ("エントリポイントを実行させるのは？", "Why do people run Slurm for training?", "fact"),
        ("and for Volcano?", "Which flag, and which version, does pyxis need?", "fact"),
    ],
)
def test_a_follow_up_without_a_kind_inherits_the_previous_value_kind(
    follow_up: str, previous: str, expected: str
) -> None:
    typed = inherit_type(analyse(follow_up), analyse(previous))
    assert typed.answer_type == expected
    assert [p.answer_type for p in typed.parts] == [expected]


@pytest.mark.parametrize(
    ("question", "plural"),
    [
        ("Which widgetd flag sets the label that names a rack?", False),
        ("Which option is it that lists the nodes?", False),
        ("Which flags make a reservation repeat?", True),
        ("Which components own autoscaling?", True),
    ],
)
def test_a_verb_after_that_or_it_is_no_plural_noun(question: str, plural: bool) -> None:
    assert analyse(question).parts[0].plural is plural


@pytest.mark.parametrize(
    ("question", "answer_type"),
    [
        # a question that is only a noun phrase asks for the noun it ends on
        ("And its default?", "default"),
        ("widgetd.conf RackLabel default?", "default"),
        ("We pin ranks by hand. Annotation?", "key"),
        # a verb makes it a sentence that asks yes or no; the noun is only mentioned
        ("Is it on by default?", "fact"),
        ("If racks have a weight, does widgetd still place by label?", "fact"),
        # a preposition or "to" before the noun: the noun modifies something else
        ("And racks listed in widgetd.yaml?", "fact"),
        ("kubectl command to install the released version?", "fact"),
    ],
)
def test_a_noun_phrase_question_asks_for_its_noun(question: str, answer_type: str) -> None:
    assert analyse(question).answer_type == answer_type
