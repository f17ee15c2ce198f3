"""Selection questions, rule matching and verdicts (pure, no models)."""

from __future__ import annotations

import pytest

from app.advice.verdict import decide, is_selection_question, match, one_version, situation_parts
from app.models import MatchedRule
from core.contract import Rule


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
    )


RULES = [
    _rule(0, "LLM training on an on-premises dedicated HPC cluster", "slurm"),
    _rule(1, "cloud-first with nodes scaled out and in frequently", "kubernetes"),
    _rule(2, "after training also run inference services on the same infrastructure", "kubernetes"),
    _rule(3, "long training runs on a Slurm cluster and inference on Kubernetes", "hybrid", source="statement"),
]


def _scored(situation: str) -> list[MatchedRule]:
    return match(situation, RULES, lambda t: t, {})


def _verdict(situation: str) -> str:
    parts = situation_parts(situation)
    return decide(_scored(situation), situation, [_scored(p) for p in parts] if len(parts) > 1 else []).value


@pytest.mark.parametrize(
    ("situation", "verdict"),
    [
        ("Which platform suits LLM training on our on-premises HPC cluster?", "slurm"),
        ("We are cloud-first and nodes are scaled in and out frequently", "kubernetes"),
        ("We also want to run inference services on the same infrastructure after training", "kubernetes"),
        ("Nothing here matches anything at all", "depends"),
    ],
)
def test_situations_get_the_verdict_of_the_rule_they_match(situation: str, verdict: str) -> None:
    assert decide(_scored(situation), situation).value == verdict


def test_conflicting_rules_with_training_and_serving_give_hybrid_citing_both_sides() -> None:
    situation = "LLM training on our on-premises HPC cluster, then inference services on another cluster"
    assert _verdict(situation) == "hybrid"
    parts = situation_parts(situation)
    result = decide(_scored(situation), situation, [_scored(p) for p in parts])
    cited = {m.rule.verdict for m in result.rules}
    assert "slurm" in cited and cited & {"kubernetes", "hybrid"}


def test_one_platform_for_training_and_serving_is_not_a_hybrid() -> None:
    situation = "LLM training on our on-premises HPC cluster, then inference services on the same infrastructure"
    assert _verdict(situation) == "kubernetes"


def test_conflict_without_serving_is_depends() -> None:
    situation = "on-premises HPC cluster training, but cloud-first with nodes scaled frequently"
    result = decide(_scored(situation), situation)
    assert result.value in ("depends", "hybrid") and len({m.rule.verdict for m in result.rules}) >= 2


def test_similarity_carries_a_match_across_languages() -> None:
    ja = "オンプレのHPCクラスタで学習したい"  # shares no word with the English rules
    plain = match(ja, RULES, lambda t: t, {})
    assert max(m.score for m in plain) < 0.3
    sims = {RULES[0].id: 0.9, RULES[1].id: 0.5, RULES[2].id: 0.5, RULES[3].id: 0.55}
    crossed = match(ja, RULES, lambda t: t, {}, sims)
    assert crossed[0].rule.verdict == "slurm" and crossed[0].score > plain[0].score


def test_one_version_of_a_translated_rule_in_the_question_language() -> None:
    ja = _rule(0, "オンプレで学習", "slurm", "ja", doc="art-ja")
    en = _rule(0, "on-prem training", "slurm", "en", doc="art-en")
    other = _rule(0, "a rule with no translation", "kubernetes", "en", doc="b")
    translated = {"art-en": "art-ja"}
    assert one_version([ja, en, other], "en", translated) == [en, other]
    assert one_version([ja, en, other], "ja", translated) == [ja, other]
