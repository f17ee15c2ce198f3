"""app.platform_helper: questionnaire → questions → weighted, cited recommendation (fake ``ask``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.models import Answer, Citation
from app.platform_helper import (
    Choices,
    Factor,
    Point,
    assess,
    conditional_lean,
    decide,
    lean_of,
    plan,
    recommend,
    run,
)
from app.render import recommendation_markdown


def _cite(n: int, chunk: str) -> Citation:
    return Citation(n=n, doc_id=chunk.split("#")[0], chunk_id=chunk, title=f"Doc {chunk}", quote=f"quote {chunk}")


def _verdict_answer(question: str, verdict: str | None, chunks: list[str]) -> Answer:
    cites = [_cite(i + 1, c) for i, c in enumerate(chunks)]
    head = f"**Verdict: {verdict}** [1]" if verdict else "**Verdict:** the documents do not state one."
    lines = [head, "From the knowledge base:"] + [f"- evidence from {c} [{i + 1}]" for i, c in enumerate(chunks)]
    return Answer(question=question, answer="\n".join(lines), verdict=verdict, citations=cites)


def _scripted(by_keyword: dict[str, str | None]) -> tuple[Callable[[str], Answer], list[str]]:
    """An ``ask`` that answers by keyword in the question and records what was asked."""
    asked: list[str] = []

    def ask(question: str) -> Answer:
        asked.append(question)
        for word, verdict in by_keyword.items():
            if word.lower() in question.lower():
                return _verdict_answer(question, verdict, [f"{word}#0", "shared#1"])
        return _verdict_answer(question, None, ["misc#0"])

    return ask, asked


def test_plan_builds_one_question_per_choice_and_weights_priority() -> None:
    factors = plan(Choices(where="cloud", fleet="elastic", priority="integration"))
    assert [f.key for f in factors] == ["where", "workload", "fleet", "hpc", "ops", "priority"]
    assert "cloud" in factors[0].question and "elastic" in factors[2].question
    assert "integrates" in factors[5].question and factors[5].weight == 2.0
    assert all(f.weight == 1.0 for f in factors[:5])
    assert all("Slurm or Kubernetes" in f.question for f in factors)
    ja = plan(Choices(lang="ja"))
    assert all("SlurmとKubernetes" in f.question for f in ja)
    assert plan(Choices(where="on_prem"))[0].question != factors[0].question


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        ("Slurm", "Slurm"),
        ("Kubernetes", "Kubernetes"),
        ("K8s with Kueue", "Kubernetes"),
        ("it depends", None),
        ("Slurm for training, Kubernetes for serving", None),
        ("条件によります", None),
        (None, None),
        ("", None),
    ],
)
def test_lean_of(verdict: str | None, expected: str | None) -> None:
    assert lean_of(verdict) == expected


def test_assess_keeps_only_cited_sources_and_reads_verdict_line_when_unset() -> None:
    factor = Factor(key="where", label="On-prem", question="q")
    ans = _verdict_answer("q", "Slurm", ["a#0", "b#0", "c#0"])
    point = assess(factor, ans)
    assert point.lean == "Slurm"
    assert "[1]" in point.text and "evidence from a#0" in point.text
    assert [c.chunk_id for c in point.citations] == ["a#0"]  # only what the snippet cites
    llm = Answer(question="q", answer="Verdict: Kubernetes fits here [1]", citations=[_cite(1, "x#0")])
    assert assess(factor, llm).lean == "Kubernetes"
    refused = assess(factor, Answer(question="q", answer="no", refused=True))
    assert refused.refused and refused.lean is None and refused.citations == []


def _point(lean: str | None, weight: float = 1.0) -> Point:
    return Point(factor=Factor(key="k", label="L", question="q", weight=weight), lean=lean)


@pytest.mark.parametrize(
    ("leans", "expected"),
    [
        ([("Slurm", 2.0), ("Slurm", 1), ("Kubernetes", 1), (None, 1)], "Slurm"),
        ([("Kubernetes", 2.0), ("Kubernetes", 1), ("Slurm", 1)], "Kubernetes"),
        ([("Slurm", 2.0), ("Kubernetes", 1), ("Kubernetes", 1)], None),  # mixed → it depends
        ([("Slurm", 1), (None, 1), (None, 2.0)], None),  # one vote is not a clear lead
        ([(None, 1), (None, 2.0)], None),
    ],
)
def test_decide_is_a_weighted_vote(leans: list[tuple[str | None, float]], expected: str | None) -> None:
    rec = decide([_point(lean, w) for lean, w in leans])
    assert rec.choice == expected


def test_priority_weight_can_flip_the_result() -> None:
    # Same evidence, different top priority: the priority question's verdict decides the outcome.
    verdicts: dict[str, str | None] = {
        "utilisation": "Slurm",
        "integrates": "Kubernetes",
        "on-premises": "Slurm",
        "elastic": "Kubernetes",
    }
    ask, _ = _scripted(verdicts)
    slurm = recommend(Choices(where="on_prem", fleet="elastic", priority="utilisation"), ask)
    k8s = recommend(Choices(where="on_prem", fleet="elastic", priority="integration"), ask)
    assert slurm.scores["Slurm"] == 3.0 and slurm.scores["Kubernetes"] == 1.0 and slurm.choice == "Slurm"
    assert k8s.scores["Kubernetes"] == 3.0 and k8s.scores["Slurm"] == 1.0 and k8s.choice == "Kubernetes"


def test_recommendation_renders_reasons_tradeoffs_and_global_citations() -> None:
    ask, asked = _scripted({"on-premises": "Slurm", "utilisation": "Slurm", "elastic": "Kubernetes"})
    rec = recommend(Choices(where="on_prem", fleet="elastic", priority="utilisation"), ask)
    assert len(asked) == 6
    assert rec.choice == "Slurm"
    # "shared#1" is cited by several answers only if in their snippet; each chunk gets one global number.
    chunk_ids = [c.chunk_id for c in rec.citations]
    assert len(chunk_ids) == len(set(chunk_ids))
    assert [c.n for c in rec.citations] == list(range(1, len(rec.citations) + 1))
    for p in rec.points:
        for c in p.citations:
            assert f"[{c.n}]" in p.text
    md = recommendation_markdown(rec, key="t")
    assert "Recommendation · 推奨: **Slurm**" in md
    assert "Why Slurm" in md and "Trade-offs: what favours Kubernetes" in md and "Elastic fleet" in md
    assert "No clear verdict" in md
    assert '<a href="#src-t-1"' in md and 'id="src-t-1"' in md and "Sources · 出典" in md


def test_mixed_evidence_says_it_depends() -> None:
    ask, _ = _scripted({"on-premises": "Slurm", "elastic": "Kubernetes", "utilisation": "it depends"})
    rec = recommend(Choices(where="on_prem", fleet="elastic"), ask)
    assert rec.choice is None
    md = recommendation_markdown(rec)
    assert "It depends" in md and "Points for Slurm" in md and "Points for Kubernetes" in md


def test_run_reports_progress_then_result() -> None:
    ask, _ = _scripted({})
    steps = list(run(Choices(), ask))
    assert [s[0] for s in steps] == [0, 1, 2, 3, 4, 5, 6]
    assert all(s[2] is None for s in steps[:-1]) and steps[-1][2] is not None


def test_document_html_in_points_is_escaped() -> None:
    def ask(question: str) -> Answer:
        cite = _cite(1, "x#0").model_copy(update={"title": "<img src=x onerror=alert(1)>"})
        return Answer(
            question=question,
            answer="**Verdict: Slurm** <script>alert(1)</script> [1]",
            verdict="Slurm",
            citations=[cite],
        )

    md = recommendation_markdown(recommend(Choices(), ask))
    assert "<script>" not in md and "<img" not in md and "&lt;script&gt;" in md


MIXED = (
    "Verdict: it depends — Slurm — Scenario: dedicated on-premises cluster for training; Platform: Slurm [1]"
    " / Kubernetes — Scenario: training then inference on the same platform; Platform: Kubernetes [2]"
)


def test_conditional_verdict_takes_the_branch_matching_the_users_situation() -> None:
    lean, branch = conditional_lean(MIXED, ("on-prem", "dedicated")) or (None, "")
    assert lean == "Slurm" and branch.startswith("Slurm — Scenario: dedicated") and branch.endswith("[1]")
    assert conditional_lean(MIXED, ("inference", "serving")) == (
        "Kubernetes",
        "Kubernetes — Scenario: training then inference on the same platform; Platform: Kubernetes [2]",
    )
    assert conditional_lean(MIXED, ("training",)) is None  # both branches match: still mixed
    assert conditional_lean(MIXED, ("autoscaling",)) is None  # neither matches
    ja = "結論: 条件によります — Slurm — オンプレまたは専用HPCクラスタで学習 [1] / Kubernetes — 推論サービスも運用 [2]"
    assert conditional_lean(ja, ("オンプレ",)) is not None and conditional_lean(ja, ("推論",))[0] == "Kubernetes"  # type: ignore[index]


def test_assess_uses_the_matching_branch_of_an_it_depends_verdict() -> None:
    answer = Answer(
        question="q",
        answer=f"**{MIXED}**\nFrom the knowledge base:\n- row one [1]\n- row two [2]",
        verdict="it depends",
        citations=[_cite(1, "a#0"), _cite(2, "b#0")],
    )
    on_prem = plan(Choices(where="on_prem"))[0]
    point = assess(on_prem, answer)
    assert point.lean == "Slurm" and [c.chunk_id for c in point.citations] == ["a#0"]
    cloud = plan(Choices(where="cloud"))[0]
    undecided = assess(cloud, answer)
    assert undecided.lean is None and {c.chunk_id for c in undecided.citations} == {"a#0", "b#0"}
