"""Selection questions and verdicts built from a read situation (pure, no models)."""

from __future__ import annotations

import pytest

from app.advice.verdict import build_verdict, is_selection_question, needs, one_version, situation_of
from core.contract import Rule
from core.situation import read


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which platform should we use for on-prem training?", True),
        ("オンプレで学習するならどちらがいい？", True),
        ("Slurm or Kubernetes for a small team?", True),
        ("SlurmとKubernetesのどっちがいい？", True),
        ("Which platform suits on-prem LLM training with a small ops team?", True),
        ("社内にHPC経験者がいるならどちらを選ぶべき？", True),
        ("How many control plane nodes does Kubernetes need?", False),
        ("Pyxisとは何？", False),
        # どちらも/どっちも mean "both": a question about both is not a choice between them
        ("SlurmとKubernetesはどちらもGPUを扱える？", False),
        ("KAI SchedulerとVolcano、どっちもCNCFのプロジェクト？", False),
        # factual and how-to questions never get a verdict
        ("GPU利用率はSlurmとKubernetesでどれくらい違いますか？", False),
        ("MPI Operatorをデプロイしたあと、MPIJobのカスタムリソースが入っているかはどう確認すれば？", False),
        ("How do I submit a job with sbatch?", False),
        ("In the ROI table, what does initial setup involve for Slurm versus Kubernetes?", False),
        ("Slurm's MPI guide lists launch methods. Which one does it discourage?", False),
        ("Intel MPIをSlurmで使うとき、PMIxとPMI-2のどっちを使うべき？", False),
        ("クラウドでノードを頻繁に増減させたい場合は？", True),
        ("学習はSlurm、推論はKubernetesみたいに分けるハイブリッド構成ってアリ？", True),
        # a choice asked with a bare interrogative, after the situation
        ("学習も推論もやる。別基盤でOK。何がいい？", True),
        ("CI/CD連携が最重要。どっち？", True),
        ("チームはHPC未経験です。どれを選びますか？", True),
        ("Our cloud nodes autoscale constantly. Which one?", True),
        ("We own 8 nodes in a colo and only train. What should we use?", True),
        # ... but not a value chosen in a configuration
        ("rootless Docker と scrun の組み合わせで、コンテナのネットワークドライバは何にする？", False),
        ("Which one is the default, cons_tres or linear?", False),
    ],
)
def test_selection_questions(question: str, expected: bool) -> None:
    assert is_selection_question(question) is expected


def _rule(i: int, condition: str, verdict: str, language: str = "en", doc: str = "a", source: str = "table") -> Rule:
    return Rule(
        id=f"{doc}#0:r{i}",
        doc_id=doc,
        chunk_id=f"{doc}#0",
        section="S",
        language=language,
        condition=condition,
        verdict=verdict,  # type: ignore[arg-type]
        quote=condition,
        source=source,  # type: ignore[arg-type]
        facets=read(condition).values(),
    )


# our own wording of the article's kind of rules; their facets are read by the same reader as questions
RULES = [
    _rule(0, "LLM training on an on-premises dedicated HPC cluster", "slurm"),
    _rule(1, "cloud-first with nodes scaled out and in frequently", "kubernetes"),
    _rule(2, "after training also run inference services on the same infrastructure", "kubernetes"),
    _rule(3, "long training runs on a Slurm cluster and inference on Kubernetes", "hybrid", source="statement"),
]


def test_rules_are_read_into_facets() -> None:
    assert [r.facets for r in RULES] == [
        {"deployment": "on_prem"},
        {"deployment": "cloud", "fleet": "elastic"},
        {"workload": "training_and_serving", "one_platform": "yes"},
        {"workload": "training_and_serving", "one_platform": "no"},
    ]


@pytest.mark.parametrize(
    ("situation", "verdict"),
    [
        ("We train LLMs on our own on-prem GPU cluster.", "slurm"),
        ("オンプレのHPCクラスタで学習したい", "slurm"),
        ("We are cloud-first and our node count changes every day.", "kubernetes"),
        ("We train on-prem and will also serve the model to customers.", "hybrid"),
        ("We train on-prem and serve the model too, all on one platform.", "kubernetes"),
        ("We will not run any inference; on-prem only.", "slurm"),
    ],
)
def test_a_read_situation_gets_the_verdict_of_the_rules_it_meets(situation: str, verdict: str) -> None:
    built = build_verdict(read(situation), RULES, "en")
    assert built is not None and built.value == verdict


def test_the_verdict_says_what_it_read_and_each_vote_cites_its_rule() -> None:
    built = build_verdict(read("We train LLMs on our own on-prem GPU cluster."), RULES, "en")
    assert built is not None
    assert built.read_as == ["on-prem"]
    assert built.situation["deployment"].span.lower() == "on-prem"
    assert [(v.facet, v.platform, v.rule.id) for v in built.votes] == [("deployment", "slurm", RULES[0].id)]


def test_what_would_change_it_is_said_in_human_words() -> None:
    built = build_verdict(read("We train LLMs on our own on-prem GPU cluster."), RULES, "en")
    assert built is not None and built.changes
    for change in built.changes:
        assert "_" not in change and "→ kubernetes" not in change  # labels, never raw values
    assert any(c.startswith("if you also served the trained models → hybrid") for c in built.changes)
    ja = build_verdict(read("オンプレで学習したい"), RULES, "ja")
    assert ja is not None and any("学習後に推論サービスも提供するなら" in c for c in ja.changes)


def test_no_situation_gives_no_verdict_and_the_facts_to_ask_for() -> None:
    assert build_verdict(read("Slurm or Kubernetes?"), RULES, "en") is None
    assert needs(read("Slurm or Kubernetes?"), "en")[:2] == ["where it runs", "GPU fleet"]
    assert "where it runs" not in needs(read("We are on-prem."), "en")


def test_the_questionnaire_passes_facets_directly() -> None:
    built = build_verdict(situation_of({"deployment": "cloud", "fleet": "elastic"}), RULES, "ja")
    assert built is not None and built.value == "kubernetes" and built.read_as == ["クラウド", "台数が伸縮"]


def test_one_version_of_a_translated_rule_in_the_question_language() -> None:
    ja = _rule(0, "オンプレで学習", "slurm", "ja", doc="art-ja")
    en = _rule(0, "on-prem training", "slurm", "en", doc="art-en")
    other = _rule(0, "a rule with no translation", "kubernetes", "en", doc="b")
    translated = {"art-en": "art-ja"}
    assert one_version([ja, en, other], "en", translated) == [en, other]
    assert one_version([ja, en, other], "ja", translated) == [ja, other]
