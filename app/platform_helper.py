"""The "Which platform?" helper: questionnaire answers → cited retrieval questions → a recommendation.

Each choice (where it runs, workload, fleet, team experience, ops headcount, top priority) becomes one
platform-selection question asked through the same ``ask`` as the chat, so every point carries the
citations of a real answer. The recommendation is *derived* from what comes back: each answer's
verdict (Slurm, Kubernetes, or none/mixed) is a vote weighted by the user's priorities — the question
built from "what matters most" counts double — and the result is a platform only when one side clearly
leads; otherwise it is "it depends", with the points for each side laid out.

    plan(Choices(where="on_prem", ...)) → [Factor(key="where", question="Which should we choose ... ?"), ...]
    decide([Point(lean="Slurm", weight=2), Point(lean="Kubernetes", weight=1)]) → Recommendation(choice=None)

Deliberately left out: a table of canned verdicts (nothing here knows which platform wins), LLM
calls of its own — the answer backend is whatever ``ask`` uses — and rendering (``app.render``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Literal

from pydantic import BaseModel, Field

from app.models import Answer, Citation

Lean = Literal["Slurm", "Kubernetes"]
Ask = Callable[[str], Answer]

PRIORITY_WEIGHT = 2.0
_PLATFORMS: dict[Lean, re.Pattern[str]] = {
    "Slurm": re.compile(r"slurm", re.I),
    "Kubernetes": re.compile(r"kubernetes|k8s", re.I),
}
_MARKER = re.compile(r"\[(\d{1,3})\]")
_VERDICT_LINE = re.compile(r"^\W*(verdict|結論)\W", re.I)
_VERDICT_PREFIX = re.compile(r"^\W*(verdict|結論)[^—]*—\s*", re.I)
_SHORT_VERDICT = 60  # a verdict line shorter than this gets its first evidence line alongside
_SNIPPET_CHARS = 280


class Choices(BaseModel):
    """The questionnaire, with the values the UI offers."""

    where: Literal["on_prem", "cloud"] = "on_prem"
    workload: Literal["training", "training_serving"] = "training"
    fleet: Literal["fixed", "elastic"] = "fixed"
    hpc: Literal["experienced", "new"] = "experienced"
    ops: Literal["small", "large"] = "small"
    priority: Literal["utilisation", "integration"] = "utilisation"
    lang: Literal["en", "ja"] = "en"


# (dimension, option) → (label, English question, Japanese question, cues). Questions are phrased as
# selection questions so the answerer states a verdict when the documents support one. Cues are words
# that describe the chosen situation; they only pick, from a conditional verdict ("Slurm when X /
# Kubernetes when Y"), the branch whose condition is the user's — they never name a platform.
_QUESTIONS: dict[tuple[str, str], tuple[str, str, str, tuple[str, ...]]] = {
    ("where", "on_prem"): (
        "On-premises cluster · オンプレミス",
        "Which should we choose for distributed LLM training on an on-premises GPU cluster: Slurm or Kubernetes?",
        "オンプレミスのGPUクラスタでLLMの分散学習を行うなら、SlurmとKubernetesのどちらを選ぶべきですか？",
        (
            "on-prem",
            "on prem",
            "オンプレ",
            "専用",
            "dedicated",
            "bare metal",
        ),
    ),
    ("where", "cloud"): (
        "Cloud GPUs · クラウド",
        "Which should we choose for distributed LLM training on cloud GPUs: Slurm or Kubernetes?",
        "クラウドのGPUでLLMの分散学習を行うなら、SlurmとKubernetesのどちらを選ぶべきですか？",
        (
            "cloud",
            "クラウド",
            "managed",
            "マネージド",
        ),
    ),
    ("workload", "training"): (
        "Training only · 学習のみ",
        "Which is the better fit for large multi-node LLM training jobs only: Slurm or Kubernetes?",
        "大規模なマルチノードのLLM学習ジョブだけを動かすなら、SlurmとKubernetesのどちらが適していますか？",
        (
            "トレーニング",
            "training only",
            "batch",
            "バッチ",
            "長時間",
        ),
    ),
    ("workload", "training_serving"): (
        "Training and serving · 学習と推論サービング",
        "Which platform should we choose to run both LLM training and model serving: Slurm or Kubernetes?",
        "LLMの学習と推論サービングの両方を動かすなら、SlurmとKubernetesのどちらを選ぶべきですか？",
        (
            "serving",
            "inference",
            "推論",
            "サービング",
        ),
    ),
    ("fleet", "fixed"): (
        "Fixed fleet · 固定台数",
        "Which is better for a fixed-size GPU cluster with a steady queue of training jobs: Slurm or Kubernetes?",
        "台数が固定されたGPUクラスタで学習ジョブを順に流すなら、SlurmとKubernetesのどちらが適していますか？",
        (
            "fixed",
            "固定",
            "static",
            "専用",
            "dedicated",
        ),
    ),
    ("fleet", "elastic"): (
        "Elastic fleet · 伸縮するフリート",
        "Which is better for an elastic GPU fleet that scales up and down automatically: Slurm or Kubernetes?",
        "自動でスケールする伸縮型のGPUフリートなら、SlurmとKubernetesのどちらが適していますか？",
        (
            "elastic",
            "autoscal",
            "伸縮",
            "スケールアウト",
            "自動スケール",
            "scale out",
            "burst",
        ),
    ),
    ("hpc", "experienced"): (
        "Team with HPC experience · HPC経験あり",
        "Our team has HPC and batch scheduler experience; which should we choose, Slurm or Kubernetes?",
        "HPCとバッチスケジューラの経験があるチームなら、SlurmとKubernetesのどちらを選ぶべきですか？",
        (
            "HPC",
            "MPI",
            "研究",
            "research",
        ),
    ),
    ("hpc", "new"): (
        "Team new to HPC · HPC経験なし",
        "Our team has no HPC experience but knows containers; which should we choose, Slurm or Kubernetes?",
        "HPCの経験はないがコンテナに慣れたチームなら、SlurmとKubernetesのどちらを選ぶべきですか？",
        (
            "container",
            "コンテナ",
            "cloud-native",
            "クラウドネイティブ",
            "DevOps",
        ),
    ),
    ("ops", "small"): (
        "Small ops team · 少人数の運用",
        "With a small operations team of one or two people, which is easier to run: Slurm or Kubernetes?",
        "運用担当が1〜2人の小さなチームなら、SlurmとKubernetesのどちらが運用しやすいですか？",
        (
            "simple",
            "シンプル",
            "簡単",
            "small team",
            "少人数",
        ),
    ),
    ("ops", "large"): (
        "Dedicated platform team · 専任の基盤チーム",
        "With a dedicated platform operations team, which should we choose: Slurm or Kubernetes?",
        "専任の基盤運用チームがあるなら、SlurmとKubernetesのどちらを選ぶべきですか？",
        (
            "platform team",
            "SRE",
            "運用チーム",
        ),
    ),
    ("priority", "utilisation"): (
        "Priority: GPU utilisation and cost · 重視: GPU利用率とコスト",
        "Which gives higher GPU utilisation and lower cost for LLM training: Slurm or Kubernetes?",
        "LLM学習でGPU利用率が高くコストを抑えられるのは、SlurmとKubernetesのどちらですか？",
        (
            "utili",
            "利用率",
            "cost",
            "コスト",
            "効率",
        ),
    ),
    ("priority", "integration"): (
        "Priority: integration with the stack · 重視: 他システムとの統合",
        "Which integrates better with the rest of the ML stack (CI/CD, serving, monitoring): Slurm or Kubernetes?",
        "CI/CD・サービング・監視など他のMLスタックとの統合に優れているのは、SlurmとKubernetesのどちらですか？",
        (
            "integrat",
            "統合",
            "CI/CD",
            "service mesh",
            "ecosystem",
            "エコシステム",
        ),
    ),
}
DIMENSIONS = ("where", "workload", "fleet", "hpc", "ops", "priority")


class Factor(BaseModel):
    key: str
    label: str
    question: str
    weight: float = 1.0
    cues: tuple[str, ...] = ()


class Point(BaseModel):
    """What one answer said about one factor, with the citations (renumbered later) behind it."""

    factor: Factor
    lean: Lean | None = None
    text: str = ""
    citations: list[Citation] = Field(default_factory=list)
    refused: bool = False


class Recommendation(BaseModel):
    choice: Lean | None
    scores: dict[str, float]
    points: list[Point]
    citations: list[Citation] = Field(default_factory=list, description="All cited sources, renumbered.")


def plan(choices: Choices) -> list[Factor]:
    """One question per dimension, built from the chosen option; the top priority weighs double."""
    factors = []
    for dim in DIMENSIONS:
        option = str(getattr(choices, dim))
        label, en, ja, cues = _QUESTIONS[(dim, option)]
        weight = PRIORITY_WEIGHT if dim == "priority" else 1.0
        factors.append(
            Factor(key=dim, label=label, question=ja if choices.lang == "ja" else en, weight=weight, cues=cues)
        )
    return factors


def lean_of(text: str | None) -> Lean | None:
    """The platform a verdict names, if it names exactly one: ``"Slurm"`` → Slurm, ``"it depends"`` → None."""
    if not text:
        return None
    named = [name for name, pattern in _PLATFORMS.items() if pattern.search(text)]
    return named[0] if len(named) == 1 else None


def _lines(answer: Answer) -> list[str]:
    """Answer lines without bullets or bold, each still carrying its [n] markers."""
    return [ln.replace("**", "").strip().lstrip("-*• ").strip() for ln in answer.answer.splitlines()]


def _verdict_line(answer: Answer) -> str | None:
    # The extractive answerer opens with "Verdict: ..." (結論: ...); LLM answers may do so too.
    return next((ln for ln in _lines(answer) if _VERDICT_LINE.match(ln)), None)


def _first_platform(text: str) -> Lean | None:
    found = [(m.start(), name) for name, pattern in _PLATFORMS.items() if (m := pattern.search(text))]
    return min(found)[1] if found else None


def conditional_lean(line: str, cues: tuple[str, ...]) -> tuple[Lean, str] | None:
    """From "it depends — Slurm — <when A> [1] / Kubernetes — <when B> [2]", the branch matching the cues.

    Each " / "-separated branch belongs to the platform it names first; when the cues (words for the
    user's situation) appear in the branches of exactly one platform, that platform and its branch.
    """
    matched: dict[Lean, str] = {}
    for branch in re.split(r"\s+/\s+", _VERDICT_PREFIX.sub("", line)):
        platform = _first_platform(branch)
        if platform and any(cue.lower() in branch.lower() for cue in cues):
            matched.setdefault(platform, branch.strip())
    return next(iter(matched.items())) if len(matched) == 1 else None


def _shorten(text: str) -> str:
    if len(text) <= _SNIPPET_CHARS:
        return text
    # Keep every marker of the cut text, so the shortened point still cites all it drew on.
    markers = " ".join(f"[{m}]" for m in dict.fromkeys(_MARKER.findall(text)))
    return _MARKER.sub("", text[: _SNIPPET_CHARS - 1]).rstrip() + "… " + markers


def _snippet(answer: Answer, verdict: str | None) -> str:
    """The verdict line, plus the first evidence line when the verdict is short (answer-local markers)."""
    cited = [ln for ln in _lines(answer) if _MARKER.search(ln)]
    evidence = [ln for ln in cited if ln != verdict]
    if verdict and _MARKER.search(verdict):
        chosen = [verdict] + (evidence[:1] if len(_MARKER.sub("", verdict)) < _SHORT_VERDICT else [])
    else:
        chosen = evidence[:1]
    return _shorten(" — ".join(chosen))


def assess(factor: Factor, answer: Answer) -> Point:
    """Turn one answer into a point: its lean (from the verdict), a cited snippet and its citations."""
    if answer.refused:
        return Point(factor=factor, refused=True)
    line = _verdict_line(answer)
    lean = lean_of(answer.verdict or line)
    text = _snippet(answer, line)
    if lean is None and line:
        branch = conditional_lean(line, factor.cues)
        if branch:
            lean, text = branch[0], _shorten(branch[1])
    used = {int(m) for m in _MARKER.findall(text)}
    citations = [c for c in answer.citations if c.n in used]
    return Point(factor=factor, lean=lean, text=text, citations=citations)


def decide(points: list[Point]) -> Recommendation:
    """Weighted vote over the points' leans; a platform only when it clearly leads, else None."""
    scores: dict[str, float] = {"Slurm": 0.0, "Kubernetes": 0.0, "none": 0.0}
    for p in points:
        scores[p.lean or "none"] += p.factor.weight
    s, k = scores["Slurm"], scores["Kubernetes"]
    choice: Lean | None = None
    # A clear lead: at least two weighted votes ahead and twice the other side.
    if abs(s - k) >= 2 and max(s, k) >= 2 * min(s, k):
        choice = "Slurm" if s > k else "Kubernetes"
    renumbered, merged = _renumber(points)
    return Recommendation(choice=choice, scores=scores, points=renumbered, citations=merged)


def _renumber(points: list[Point]) -> tuple[list[Point], list[Citation]]:
    """Give every cited chunk one global number across all answers and rewrite the markers."""
    by_chunk: dict[str, Citation] = {}
    out: list[Point] = []
    for p in points:
        mapping: dict[int, int] = {}
        for c in p.citations:
            known = by_chunk.get(c.chunk_id)
            if known is None:
                known = c.model_copy(update={"n": len(by_chunk) + 1})
                by_chunk[c.chunk_id] = known
            elif c.quote not in known.quote:
                known.quote = f"{known.quote}\n{c.quote}"
            mapping[c.n] = known.n
        text = _MARKER.sub(functools.partial(_remap, mapping=mapping), p.text)
        out.append(p.model_copy(update={"text": text, "citations": [by_chunk[c.chunk_id] for c in p.citations]}))
    return out, list(by_chunk.values())


def _remap(match: re.Match[str], mapping: dict[int, int]) -> str:
    n = int(match.group(1))
    return f"[{mapping[n]}]" if n in mapping else ""  # a marker without a citation is dropped


def run(choices: Choices, ask: Ask) -> Iterator[tuple[int, int, Recommendation | None]]:
    """Ask each planned question; yields (done, total, None) as it goes and finally the recommendation."""
    factors = plan(choices)
    points: list[Point] = []
    for i, factor in enumerate(factors):
        yield i, len(factors), None
        points.append(assess(factor, ask(factor.question)))
    yield len(factors), len(factors), decide(points)


def recommend(choices: Choices, ask: Ask) -> Recommendation:
    final: Recommendation | None = None
    for _, _, result in run(choices, ask):
        final = result or final
    assert final is not None
    return final
