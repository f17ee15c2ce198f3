"""app.advice.model and app.advice.features: the fitted models' file, features and reading (no embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from app.advice import model
from app.advice.features import (
    SELECTION_FEATURES,
    facet_feature_names,
    facet_features,
    negated_feature_names,
    negated_features,
    ngrams,
    selection_feature_names,
    selection_features,
)
from app.advice.fit import Example, _compact, fit_verdict, golden_files, verdict_rows
from app.advice.model import Linear
from app.advice.table import combine, verdict_feature_names
from core.contract import Rule


def test_features_carry_the_scope_of_each_cue() -> None:
    x = facet_features("We don't need inference, ok?")["workload"]
    named = dict(zip(facet_feature_names("workload"), x, strict=False))
    assert named["neg:training_and_serving"] == 1 and named["pos:training_and_serving"] == 0
    assert named["tagged:training_and_serving"] == 1  # a tag question after a negation
    assert named["sim:training"] == 0  # no embedder: no similarity
    assert named["other_party:training_and_serving"] == 0


def test_features_see_a_cue_another_party_does() -> None:
    x = facet_features("We only train; inference is handled by a partner company.")["workload"]
    named = dict(zip(facet_feature_names("workload"), x, strict=False))
    assert named["other_party:training_and_serving"] == 1 and named["pos:training"] == 1


def test_ngrams_in_both_languages() -> None:
    assert {"own racks", "推論", "論は"} <= ngrams("Own racks. 推論は")


def test_selection_features_see_choice_wording_and_value_questions() -> None:
    choice = selection_features("Slurm or Kubernetes: which should we use?", False, False)
    value = selection_features("What is the default value of PriorityDecayHalfLife?", True, True)
    assert choice[1] == 1 and choice[3] == 1 and value[1] == 0
    assert value[7] == 1 and value[9] == 1  # a value type asked; the conversation asked for a platform


def _named(question: str, followup: bool = False) -> dict[str, float]:
    """The asks-for-a-platform features of a first turn (or of a follow-up in a selection conversation), by name."""
    return dict(zip(SELECTION_FEATURES, selection_features(question, followup, followup), strict=True))


def test_selection_features_see_a_named_source_and_a_reason_asked() -> None:
    assert _named("What does the article's table recommend on-prem?")["names_source"] == 1
    assert _named("うちはオンプレなんですが、どっちにすべき？")["names_source"] == 0
    assert _named("記事のまとめではどっち推し？")["names_source"] == 1
    assert _named("推論も同じ基盤で回すケースだと理由は何？")["factual_question_word"] == 1


def test_selection_features_see_who_the_situation_is_and_whether_anything_is_asked() -> None:
    # the asker's own situation, in either language; "I/O" is no "I"
    assert _named("We're on-prem with a small team. Which platform?")["first_person"] == 1
    assert _named("うちはクラウドです。どっちがいい？")["first_person"] == 1
    assert _named("Which platform does the article give an I/O-heavy cloud startup?")["first_person"] == 0
    # a reason or a source asked for
    assert _named("On what grounds does the table list Kubernetes?")["asks_reason"] == 1
    assert _named("表がSlurmを選んでる根拠は？")["asks_reason"] == 1
    assert _named("Which platform should we use?")["asks_reason"] == 0
    # a statement that asks nothing, against a question without a question mark and a polite request
    assert _named("FYI, we're on-prem and only train.")["statement_only"] == 1
    assert _named("参考までに、うちはオンプレの固定クラスタで学習のみです。")["statement_only"] == 1
    assert _named("Recommend a platform for our on-prem racks")["statement_only"] == 0
    assert _named("オンプレで学習のみなので、おすすめを教えてください")["statement_only"] == 0
    # a request as a noun, and どう (how) with no question mark
    assert _named("Looking for a stack recommendation. Own racks, training only.")["statement_only"] == 0
    assert _named("分散学習の基盤どうしよう。学習と推論は分けるつもり。")["statement_only"] == 0
    assert _named("We're the advisory board's ML team, on-prem.")["statement_only"] == 1  # no advice asked
    # a follow-up that only states a fact adds it to the conversation's question
    assert _named("チームにHPC経験者はいないです。", followup=True)["statement_only"] == 0


def test_linear_model_softmax_and_neutral_similarity() -> None:
    linear = Linear(["none", "a", "b"], ["pos", "sim"], np.zeros(2), np.ones(2), np.array([[0, 0], [1, 0], [0, 5]]),
                    np.zeros(3), 0.0)  # fmt: skip
    assert linear.probabilities(np.array([3.0, 0.0])).argmax() == 1
    # without the embedder the similarity column takes its training mean (0 here): "b" no longer wins
    assert linear.probabilities(linear.neutral(np.array([0.0, 2.0]))).argmax() != 2


def test_the_model_file_is_reviewable_json_and_reads_the_negated_example() -> None:
    fitted = model.load()
    assert fitted is not None
    raw = json.loads(model.MODEL_PATH.read_text(encoding="utf-8"))
    assert raw["produced_by"].startswith("python -m app.advice.fit") and "train" in raw["fitted_on"]
    read = model.read("We don't need inference, ok? We have on-prem racks. Which platform?", fitted)
    assert read.readings["workload"].value == "training" and read.readings["workload"].negated
    assert read.readings["deployment"].value == "on_prem"
    assert model.asks_platform(fitted, "Which platform suits on-prem training?", False, False, None) > 0.5
    assert model.asks_platform(fitted, "How do I submit a job with sbatch?", False, False, None) < 0.5


def test_compact_json_stays_json() -> None:
    data = {"a": [1.5, -2.0, 3], "b": {"c": [[1, 2], [3, 4]], "d": ["x", "y"]}}
    assert json.loads(_compact(json.dumps(data, indent=1))) == data


def test_a_negation_reaches_words_without_a_cue() -> None:
    grams = ngrams("We have nothing to serve. 推論はしません", marked=True)
    assert {"¬serve", "¬推論"} <= grams and "serve" not in grams and "推論" not in grams
    assert "serve" in ngrams("We serve models", marked=True) and "¬serve" not in ngrams("We serve models", marked=True)
    assert "serve" in ngrams("We have nothing to serve")  # the vocabulary features stay unmarked


def test_negated_features_see_the_carrying_clause_even_without_a_cue() -> None:
    names = negated_feature_names()
    plain = dict(zip(names, negated_features("workload", "training", [], "We train models"), strict=True))
    negated = dict(zip(names, negated_features("workload", "training", [], "We have nothing to serve"), strict=True))
    assert plain["negators"] == 0 and negated["negators"] > 0 and negated["neg_grams"] > 0
    assert negated["facet:workload"] == 1 and negated["facet:fleet"] == 0


def _stub(negated_bias: float) -> model.SituationModel:
    """A fitted-model stand-in: workload always "training", the negated flag always ``negated_bias`` > 0."""
    dense = len(facet_feature_names("workload"))
    workload = Linear(["none", "training", "training_and_serving"], [], np.zeros(dense), np.ones(dense),
                      np.zeros((3, dense)), np.array([0.0, 5.0, 0.0]), 0.0)  # fmt: skip
    n = len(negated_feature_names())
    flag = Linear(["False", "True"], [], np.zeros(n), np.ones(n), np.zeros((1, n)), np.array([negated_bias]), 0.5)
    selection = Linear(["False", "True"], [], np.zeros(0), np.ones(0), np.zeros((1, 0)), np.zeros(1), 0.5)
    return model.SituationModel({"workload": workload}, selection, {}, {}, flag)


def test_the_negated_flag_is_the_flag_models_output() -> None:
    said = model.read("We only train. The racks are ours.", _stub(5.0)).readings["workload"]
    assert said.value == "training" and said.negated
    plain = model.read("We only train. The racks are ours.", _stub(-5.0)).readings["workload"]
    assert plain.value == "training" and not plain.negated and plain.span == "only train"


def test_fit_reads_the_train_and_dev_question_files_of_the_protocol_never_test(tmp_path: Path) -> None:
    (tmp_path / "splits.toml").write_text(
        'train = ["a.jsonl"]\ndev = ["b.jsonl", "c.jsonl"]\ntest = ["t.jsonl"]\n', encoding="utf-8"
    )
    assert golden_files(tmp_path) == [("a.jsonl", "train"), ("b.jsonl", "dev"), ("c.jsonl", "dev")]
    assert golden_files(tmp_path / "missing") == []


def test_the_shipped_verdict_combiner_reads_the_features_the_table_gives() -> None:
    combiner = model.verdict_model()
    assert combiner is not None
    assert combiner.features == verdict_feature_names()  # a stale file would weigh the wrong votes
    assert set(combiner.classes) == {"slurm", "kubernetes", "hybrid", "depends"}


def test_fit_verdict_learns_the_votes_and_chooses_c_on_dev() -> None:
    votes = [
        ("slurm", {"deployment": "on_prem"}),
        ("kubernetes", {"fleet": "elastic"}),
        ("slurm", {"workload": "training"}),
    ]
    rules = [
        Rule(
            id=f"r{i}",
            doc_id="d",
            chunk_id=f"c{i}",
            section="",
            language="en",
            condition="",
            verdict=v,
            quote="",
            facets=f,  # type: ignore[arg-type]
        )
        for i, (v, f) in enumerate(votes)
    ]
    # the labels weigh an elastic fleet above a training-only workload, which the table calls a conflict
    shapes = [
        ({"deployment": "on_prem"}, "slurm"),
        ({"fleet": "elastic"}, "kubernetes"),
        ({"fleet": "elastic", "workload": "training"}, "kubernetes"),
        ({"deployment": "on_prem", "workload": "training"}, "slurm"),
    ]
    rows = [
        Example(f"text {i}", split, facets=dict(situation), asks=True, verdict=verdict)
        for i, (split, (situation, verdict)) in enumerate(
            (s, shape) for s in ["train"] * 6 + ["dev"] for shape in shapes
        )
    ]
    data = verdict_rows(rows, lambda lang: rules)
    assert len(data) == 7 * len(shapes)
    log: list[str] = []
    spec = fit_verdict(data, log)
    combiner = Linear.from_json(spec)
    situation = {"fleet": "elastic", "workload": "training"}
    assert combine(situation, rules).value == "depends"  # the table alone
    assert combine(situation, rules, combiner).value == "kubernetes"
    assert "table alone" in log[0] and "dev 1.000" in log[0]


def test_the_shipped_reader_reads_a_role_split_and_a_concessive_clause() -> None:
    # without the embedder's similarities; the Japanese role split is read with them (test_reader_real.py)
    fitted = model.load()
    assert fitted is not None
    assert model.read("we also need to serve it, on a separate k8s cluster", fitted).values() == {
        "workload": "training_and_serving",
        "one_platform": "no",
    }
    mixed = model.read("HPCの経験はあってもk8sは触ったことがないんです", fitted)
    assert mixed.values().get("hpc_experience") == "experienced"


def test_a_selection_model_fitted_with_the_turns_vector_reads_it_and_takes_its_mean_without_it() -> None:
    names = selection_feature_names(2)
    n = len(names)
    coef = np.zeros((1, n))
    coef[0, -2] = 6.0  # the first vector column says "asks for a platform"; its training mean is 0
    selection = Linear(["False", "True"], names, np.zeros(n), np.ones(n), coef, np.zeros(1), 0.5)
    fitted = model.SituationModel({}, selection, {}, {})
    question = "The 24 nodes we bought are what we'll have for three years. Slurm or K8s?"
    near = model.asks_platform(fitted, question, False, False, 0.0, None, np.array([1.0, 0.0]))
    far = model.asks_platform(fitted, question, False, False, 0.0, None, np.array([-1.0, 0.0]))
    assert near > 0.99 and far < 0.01
    # no embedder, or a vector of another embedder's size: the columns take their training mean
    assert model.asks_platform(fitted, question, False, False, None) == 0.5
    assert model.asks_platform(fitted, question, False, False, 0.0, None, np.ones(3)) == 0.5


def test_without_the_turns_vector_the_model_fitted_without_it_is_read_with_its_own_bar() -> None:
    names = selection_feature_names(2)
    n = len(names)
    with_vector = Linear(["False", "True"], names, np.zeros(n), np.ones(n), np.zeros((1, n)), np.array([-5.0]), 0.65)
    m = len(SELECTION_FEATURES)
    plain = Linear(
        ["False", "True"], SELECTION_FEATURES, np.zeros(m), np.ones(m), np.zeros((1, m)), np.array([5.0]), 0.55
    )
    fitted = model.SituationModel({}, with_vector, {}, {}, selection_plain=plain)
    question = "Which platform suits on-prem training?"
    assert model.asks_platform(fitted, question, False, False, 0.0, None, np.zeros(2)) < 0.01
    assert model.asks_platform(fitted, question, False, False, None) > 0.99  # another embedder, or none
    assert model.asks_platform(fitted, question, False, False, 0.0, None, np.zeros(5)) > 0.99
    assert model.selection_model(fitted, True).threshold == 0.65 and model.selection_model(fitted, False) is plain
