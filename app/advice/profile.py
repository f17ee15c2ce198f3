"""The questionnaire: a team's situation (``Profile``) → a recommendation from the same decision rules.

Each answered criterion is described as a situation (``app/profile.toml``, our own words in both
languages) and matched to the rules the documents state, exactly as a selection question is. The
criterion's verdict is its best-matching rule's; "what matters most" counts double. One platform wins
when only it is backed, or when it clearly outweighs the other; mixed answers give ``hybrid`` when the
team both trains and serves (the article's train-on-Slurm, serve-on-Kubernetes split) and ``depends``
otherwise — with both sides cited. A criterion no rule speaks to is listed without a verdict.

Deliberately left out: any verdict written here (the data file describes situations, never platforms).
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from app.advice.matcher import RuleMatcher
from app.advice.verdict import MATCH_FLOOR
from app.answer.compose import _Numbering, verdict_line
from app.models import MatchedRule, Profile, Reason, Recommendation, Verdict
from app.retrieval.snapshot import Snapshot
from core.contract import VerdictValue

PROFILE_PATH = Path(__file__).with_name("profile.toml")
PRIORITY_WEIGHT = 2.0
DOMINANCE = 2.5  # a platform wins a mixed profile only with well over twice the other's weight
CRITERIA = ("deployment", "workload", "fleet", "hpc_experience", "ops_team", "priority")
_LABELS = {
    "en": {
        "deployment": "Where it runs",
        "workload": "Workload",
        "fleet": "GPU fleet",
        "hpc_experience": "HPC experience",
        "ops_team": "Operations team",
        "priority": "What matters most",
    },
    "ja": {
        "deployment": "実行環境",
        "workload": "ワークロード",
        "fleet": "GPU台数",
        "hpc_experience": "HPC経験",
        "ops_team": "運用体制",
        "priority": "最も重視すること",
    },
}


@lru_cache(maxsize=2)
def situations(path: Path = PROFILE_PATH) -> dict[str, dict[str, dict[str, str]]]:
    with path.open("rb") as fh:
        return tomllib.load(fh)


def situation_of(criterion: str, answer: str, language: str) -> str:
    return situations()[criterion][answer][language]


def combine(weights: dict[str, float], both_workloads: bool) -> VerdictValue:
    """One verdict from the criteria's weighted verdicts."""
    slurm, k8s, hybrid = weights.get("slurm", 0.0), weights.get("kubernetes", 0.0), weights.get("hybrid", 0.0)
    if not (slurm or k8s or hybrid):
        return "depends"
    if slurm and k8s:
        if max(slurm, k8s) >= DOMINANCE * min(slurm, k8s):
            return "slurm" if slurm > k8s else "kubernetes"
        return "hybrid" if both_workloads or hybrid else "depends"
    if hybrid and hybrid >= max(slurm, k8s):
        return "hybrid"
    return "slurm" if slurm > k8s else "kubernetes"


def recommend(profile: Profile, matcher: RuleMatcher, snap: Snapshot) -> Recommendation:
    language = profile.lang
    numbering = _Numbering()
    reasons: list[Reason] = []
    weights: dict[str, float] = {}
    backing: list[MatchedRule] = []
    for criterion in CRITERIA:
        answer = getattr(profile, criterion)
        if answer is None:
            continue
        scored = matcher.scored(situation_of(criterion, answer, language), language, snap)
        best = scored[0] if scored and scored[0].score >= MATCH_FLOOR else None
        if best is None:
            reasons.append(Reason(criterion=criterion, answer=answer))
            continue
        chunk = snap.chunks.get(best.rule.chunk_id)
        n = numbering.cite(chunk, [best.rule.quote]) if chunk is not None else None
        weight = PRIORITY_WEIGHT if criterion == "priority" else 1.0
        weights[best.rule.verdict] = weights.get(best.rule.verdict, 0.0) + weight
        backing.append(best.model_copy(update={"n": n}))
        reasons.append(Reason(criterion=criterion, answer=answer, verdict=best.rule.verdict, rule=best.rule))
    citations = numbering.citations()
    by_chunk = {c.chunk_id: c for c in citations}
    reasons = [
        r.model_copy(
            update={"citations": [by_chunk[r.rule.chunk_id]] if r.rule and r.rule.chunk_id in by_chunk else []}
        )
        for r in reasons
    ]
    value = combine(weights, profile.workload == "training_and_serving")
    others = [m for m in backing if m.rule.verdict != value]
    verdict = Verdict(value=value, rules=backing, changes=[f"{m.rule.condition} → {m.rule.verdict}" for m in others])
    return Recommendation(
        verdict=value,
        reasons=reasons,
        citations=citations,
        answer=_markdown(verdict, reasons, backing, language),
        changes=verdict.changes,
    )


def _markdown(verdict: Verdict, reasons: list[Reason], backing: list[MatchedRule], language: str) -> str:
    labels = _LABELS["ja" if language == "ja" else "en"]
    head = verdict_line(verdict.model_copy(update={"rules": []}), language).split(" — ")[0]
    lines = [head, ""]
    numbers = {m.rule.id: m.n for m in backing}
    for r in reasons:
        if r.rule is None:
            none = "当てはまる記述なし" if language == "ja" else "no rule in the documents speaks to this"
            lines.append(f"- **{labels[r.criterion]}** ({r.answer}): {none}")
            continue
        marker = f" [{numbers.get(r.rule.id)}]" if numbers.get(r.rule.id) else ""
        lines.append(f"- **{labels[r.criterion]}** ({r.answer}) → {r.verdict}: {r.rule.condition}{marker}")
    return "\n".join(lines)
