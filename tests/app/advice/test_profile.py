"""The questionnaire and selection verdicts on the article itself: each of its scenario rows and summary
points, given as a profile, gives the platform the article states; mixed profiles give hybrid or depends.

The article and its English companion are read from the project's corpus folder (third-party text, never
committed; `make` links it) into a temporary index. The profiles are written from the article's
recommended-scenario table (four rows) and its summary (①, ③).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import main as ask_main
from app.models import Profile, Turn
from app.pipeline import Advisor
from core.settings import PROJECT_ROOT, Settings
from ingest.indexer import run_ingest

ARTICLE = PROJECT_ROOT / "corpus" / "docs" / "slurm-vs-k8s-article-ja.md"
TRANSLATION = PROJECT_ROOT / "corpus" / "translations" / "slurm-vs-k8s-article-en.md"


@pytest.fixture(scope="module")
def article_advisor(tmp_path_factory: pytest.TempPathFactory) -> Advisor:
    from fakes import FakeEmbeddings

    if not ARTICLE.is_file() or not TRANSLATION.is_file():
        pytest.fail(
            "the corpus is not linked: run `make corpus` (CI does) so corpus/docs and corpus/translations exist"
        )
    root = tmp_path_factory.mktemp("article")
    (root / "docs").mkdir()
    (root / "translations").mkdir()
    shutil.copy(ARTICLE, root / "docs")
    shutil.copy(TRANSLATION, root / "translations")
    settings = Settings().with_(
        corpus_dir=root / "docs", index_dir=root / "index", data_dir=root / "data", embedding_backend="fake"
    )
    report = run_ingest(settings, FakeEmbeddings())
    assert report.docs_added == 2 and not report.translations_stale
    return Advisor(settings, FakeEmbeddings())


PROFILES = [
    # the recommended-scenario table, row by row
    ({"deployment": "on_prem", "workload": "training"}, "slurm"),
    ({"deployment": "cloud", "fleet": "elastic"}, "kubernetes"),
    ({"workload": "training_and_serving", "one_platform": "yes"}, "kubernetes"),
    ({"workload": "training_and_serving"}, "depends"),  # one platform (row 3) or the role split (③)
    ({"hpc_experience": "experienced", "ops_team": "small"}, "slurm"),
    # the summary: ① purpose (training speed and GPU utilisation vs. integration), ③ the hybrid
    ({"priority": "training_speed_cost"}, "slurm"),
    ({"priority": "integration"}, "kubernetes"),
    ({"deployment": "on_prem", "workload": "training_and_serving"}, "hybrid"),
    # whole profiles: the article's Slurm team and its Kubernetes team; a mix of rows without serving
    (
        {"deployment": "on_prem", "workload": "training", "fleet": "fixed", "hpc_experience": "experienced",
         "ops_team": "small", "priority": "training_speed_cost"},
        "slurm",
    ),
    (
        {"deployment": "cloud", "workload": "training_and_serving", "fleet": "elastic", "hpc_experience": "new",
         "ops_team": "dedicated", "priority": "integration"},
        "kubernetes",
    ),
    ({"deployment": "cloud", "hpc_experience": "experienced", "ops_team": "small"}, "depends"),
    # one platform for training and serving: the scenario row that says so, not the role split
    ({"deployment": "on_prem", "workload": "training_and_serving", "one_platform": "yes"}, "kubernetes"),
    # nothing the article decides on: no verdict, and the answer asks for the deciding facts
    ({"ops_team": "dedicated", "hpc_experience": "new"}, None),
]  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize(("answers", "verdict"), PROFILES)
def test_profiles_give_the_platform_the_article_states(
    article_advisor: Advisor, answers: dict[str, str], verdict: str | None, lang: str
) -> None:
    rec = article_advisor.recommend(Profile(**answers, lang=lang))  # type: ignore[arg-type]
    assert rec.verdict == verdict, [(r.criterion, r.verdict, r.rule.condition if r.rule else None) for r in rec.reasons]
    for reason in rec.reasons:
        if reason.rule is not None:
            # each answer cites the rule it matched, quoted verbatim from the article's table or summary
            # (rows of one table share one header in a citation, so the row itself is looked for)
            assert reason.citations and reason.rule.quote.splitlines()[-1] in reason.citations[0].quote
            assert "まとめ" not in reason.rule.section or reason.rule.source == "statement"
    if verdict in ("hybrid", "depends"):
        assert rec.detail is not None and len({v.platform for v in rec.detail.votes}) >= 2, "both sides cited"
    # human labels only: never a raw value such as training_and_serving or "→ kubernetes"
    assert "_" not in rec.answer.replace("**", "") and "→ kubernetes" not in rec.answer
    assert all(r.answer and "_" not in r.answer for r in rec.reasons)


@pytest.mark.parametrize(
    ("question", "verdict"),
    [
        ("Which platform suits on-prem LLM training with a small ops team?", "slurm"),
        ("オンプレで運用担当が少ないチームにはどちらが向いていますか？", "slurm"),
        ("We are cloud-first and scale nodes up and down all the time. Which should we choose?", "kubernetes"),
        ("学習したモデルを同じ基盤でサービングもしたい。どちらを選ぶべき？", "kubernetes"),
        (
            "We run multi-week training runs but also need inference that scales out on demand. Two systems are fine."
            " What setup do you suggest?",
            "hybrid",
        ),
        ("GPU利用率はSlurmとKubernetesでどれくらい違いますか？", None),
        ("How much memory does the Kubernetes control plane use?", None),
    ],
)
def test_selection_questions_get_the_verdict_of_the_matching_rule(
    article_advisor: Advisor, question: str, verdict: str | None
) -> None:
    answer = article_advisor.ask(question)
    assert (answer.verdict.value if answer.verdict else None) == verdict
    if answer.verdict is not None:
        cited = {c.n for c in answer.citations}
        assert answer.verdict.votes and all(v.n in cited for v in answer.verdict.votes)
        assert answer.answer.splitlines()[0].startswith(("**Verdict", "**判定"))
    else:
        assert "**Verdict" not in answer.answer and "**判定" not in answer.answer


@pytest.mark.parametrize(
    ("history", "follow_up", "verdict"),
    [
        (["Which platform suits on-prem LLM training?"], "And what about serving the model afterwards on the same infrastructure?", "kubernetes"),
        (["オンプレでLLMを学習するならどちらが向いていますか？"], "学習後に同じ基盤で推論サービスも運用したい場合は？", "kubernetes"),
        (["Which platform suits on-prem LLM training?"], "Now we also need an inference tier that scales out with demand, keeping training as it is. What then?", "hybrid"),
        (["クラウドでノードを頻繁に増減させるならどちらがいい？"], "じゃあオンプレで、社内にHPCの運用文化があって運用担当が少ない場合は？", "slurm"),
        # the earlier turn asked "which one?" only through its situation; the new one changes the situation
        (["We plan to autoscale GPU nodes in the cloud while training. Which one?"], "Update: autoscaling is gone, we reserved a fixed GPU block and want the cheapest training.", "slurm"),
        (["What fits if we train on-prem and also serve the models to users?"], "Leadership now says one platform only. Does that change things?", "kubernetes"),
    ],
)  # fmt: skip
def test_follow_ups_answer_the_new_turn_not_the_previous_one(
    article_advisor: Advisor, history: list[str], follow_up: str, verdict: str
) -> None:
    first = article_advisor.ask(history[0])
    answer = article_advisor.ask(follow_up, [Turn(role="user", content=history[0])])
    assert answer.verdict is not None and answer.verdict.value == verdict
    assert answer.answer != first.answer


@pytest.mark.parametrize("apostrophe", ["'", "\u2019"])  # as typed on a keyboard, and on a phone
def test_the_negated_inference_example_is_slurm_with_the_negation_shown(
    article_advisor: Advisor, apostrophe: str
) -> None:
    # "ok?" asks for agreement: it does not undo the negation (the reader once read this as hybrid)
    question = "We don't need inference, ok? We run everything on on-prem racks. Which platform?"
    answer = article_advisor.ask(question.replace("'", apostrophe))
    assert answer.verdict is not None and answer.verdict.value == "slurm"
    workload = answer.verdict.situation["workload"]
    assert workload.value == "training" and workload.negated and "inference" in workload.span


@pytest.mark.parametrize(
    ("history", "question"),
    [
        (["We have a fixed on-prem GPU cluster and only need to train LLMs fast. Slurm or Kubernetes?"],
         "OK, and how do I actually submit the training job on Slurm?"),
        (["オンプレで学習専用、HPC経験者が2人だけ。どっちがいい？"], "Slurmでジョブの状態を確認するコマンドは？"),
        ([], "How much memory does the Kubernetes control plane use?"),
    ],
)  # fmt: skip
def test_factual_questions_get_no_verdict_and_no_situation_request(
    article_advisor: Advisor, history: list[str], question: str
) -> None:
    answer = article_advisor.ask(question, [Turn(role="user", content=h) for h in history])
    assert answer.verdict is None and answer.needs == []


def test_a_platform_question_with_no_deciding_fact_gets_depends_with_each_value(article_advisor: Advisor) -> None:
    answer = article_advisor.ask("Slurm or Kubernetes: which should we use?")
    assert answer.verdict is not None and answer.verdict.value == "depends" and answer.verdict.deciding
    deciding = [c for c in answer.verdict.change_detail if c.facet == answer.verdict.deciding]
    assert len({c.verdict for c in deciding}) == 2  # what each value of the deciding facet gives


def test_a_fact_added_in_a_selection_conversation_changes_that_facet_only(article_advisor: Advisor) -> None:
    history = ["オンプレで学習だけやります。社内にはHPCの経験者がたくさんいます。どっちがいい？"]
    answer = article_advisor.ask("運用は専任じゃなくて兼任の2人です。", [Turn(role="user", content=h) for h in history])
    assert answer.verdict is not None and answer.verdict.value == "slurm"
    read = {f: r.value for f, r in answer.verdict.situation.items()}
    assert read["ops_team"] == "small" and read["deployment"] == "on_prem" and read["workload"] == "training"


def test_ask_profile_json_and_a_bad_field(
    article_advisor: Advisor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("app.cli.settings_or_exit", lambda prog: article_advisor.settings)
    monkeypatch.setattr("app.pipeline.make_embeddings", lambda settings: article_advisor.embeddings)
    good = tmp_path / "p.json"
    good.write_text(json.dumps({"deployment": "cloud", "fleet": "elastic", "lang": "en"}), encoding="utf-8")
    assert ask_main(["--profile", str(good), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "kubernetes"
    assert {"criterion", "answer", "verdict", "rule", "citations"} <= set(out["reasons"][0])
    assert out["citations"] and out["answer"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"deployment": "mars"}), encoding="utf-8")
    assert ask_main(["--profile", str(bad), "--json"]) == 2
    err = capsys.readouterr().err
    assert "field 'deployment'" in err and "on_prem" in err and str(bad) in err


def test_ask_rules_lists_every_rule_with_its_quote(
    article_advisor: Advisor, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("app.cli.settings_or_exit", lambda prog: article_advisor.settings)
    monkeypatch.setattr("app.pipeline.make_embeddings", lambda settings: article_advisor.embeddings)
    assert ask_main(["--rules", "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    assert {r["language"] for r in rules} == {"ja", "en"}
    assert sum(1 for r in rules if r["source"] == "table") == 8  # four scenario rows, in both languages
    assert all(r["quote"] and r["condition"] for r in rules)


@pytest.fixture(scope="module")
def article_only_advisor(tmp_path_factory: pytest.TempPathFactory) -> Advisor:
    """The article without its English translation companion."""
    from fakes import FakeEmbeddings

    root = tmp_path_factory.mktemp("article-only")
    (root / "docs").mkdir()
    shutil.copy(ARTICLE, root / "docs")
    settings = Settings().with_(
        corpus_dir=root / "docs",
        translations_dir=root / "none",
        index_dir=root / "index",
        data_dir=root / "data",
        embedding_backend="fake",
    )
    run_ingest(settings, FakeEmbeddings())
    return Advisor(settings, FakeEmbeddings())


SELECTION_QUESTIONS = [
    "Which platform suits on-prem LLM training with a small ops team?",
    "We are cloud-first and scale nodes up and down all the time. Which should we choose?",
    "We train on our own racks and will also serve the model to customers. What do you suggest?",
    "We want one platform for training and inference, and we run in the cloud. Which one?",
    "We will not run any inference; it is purely for pretraining on our own hardware. Slurm or Kubernetes?",
    "GPUを使い切って最短で学習したい。どちらを選ぶべき？",
    "クラウドでノードを頻繁に増減させたい場合は？",
    "オンプレで学習し、推論サービスも提供したい。基盤が2つになっても構いません。どう組むのがいい？",
]


@pytest.mark.parametrize("question", SELECTION_QUESTIONS)
def test_the_verdict_is_the_same_with_and_without_the_translation_companion(
    article_advisor: Advisor, article_only_advisor: Advisor, question: str
) -> None:
    with_companion = article_advisor.ask(question).verdict
    without = article_only_advisor.ask(question).verdict
    assert with_companion is not None and without is not None
    assert with_companion.value == without.value
    assert with_companion.read_as == without.read_as


def test_questionnaire_citations_from_the_translation_say_so_and_carry_the_original(article_advisor: Advisor) -> None:
    rec = article_advisor.recommend(Profile(deployment="cloud", fleet="elastic", lang="en"))
    assert rec.citations and all(c.translation_of == "slurm-vs-k8s-article-ja" for c in rec.citations)
    assert all(c.original is not None and c.link for c in rec.citations)
