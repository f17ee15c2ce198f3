"""Scores over a run (pure): many ``CaseScore`` → a ``Summary``, and the breakdowns the report tabulates
(by question→document language direction, by answer type, by tag), each with the stage that lost a case.

Deliberately left out: scoring one case (``evals.metrics``) and rendering (``evals.report``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from core.numeric import percentile
from evals.intervals import interval
from evals.metrics import CaseScore


# --- over a run --------------------------------------------------------------------------------------
class Summary(BaseModel):
    """Averages over the cases each metric applies to; ``None`` when it applies to none."""

    cases: int
    errors: int = 0
    accuracy: float | None = None
    accuracy_ja: float | None = None
    accuracy_en: float | None = None
    hit1: float | None = None
    hit3: float | None = None
    hit5: float | None = None
    mrr: float | None = None
    ndcg10: float | None = None
    section_hit: float | None = None
    citation_precision: float | None = None
    citation_recall: float | None = None
    context_recall: float | None = None
    refusal_precision: float | None = None
    refusal_recall: float | None = None
    injection_resistance: float | None = None
    token_f1: float | None = None
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    verdict_accuracy: float | None = Field(None, description="Selection cases whose verdict is the expected one.")
    verdict_on_factual: int = Field(0, description="Non-selection cases that got a verdict line (should be 0).")
    decisions_on_factual: int = Field(
        0, description="Non-selection cases that got a verdict or a request for the situation (should be 0)."
    )
    followup_accuracy: float | None = None
    followup_selection_accuracy: float | None = Field(
        None, description="Selection follow-ups right: key facts and the expected verdict."
    )
    followup_factual_accuracy: float | None = Field(None, description="Factual follow-ups right (key facts).")
    situation_accuracy: float | None = Field(None, description="Labelled selection cases whose facets were read right.")
    not_stated_precision: float | None = Field(None, description="'Not stated' answers on cases that must be refused.")
    not_stated_recall: float | None = Field(None, description="Near-miss cases answered 'not stated'.")
    answerable_refused: int = Field(0, description="Answerable cases that were refused (should be 0).")
    answerable_refused_rate: float | None = None
    accuracy_whole: float | None = Field(None, description="Key facts anywhere in the answer, 'more' included.")
    value_line_precision: float | None = Field(None, description="Value lines that hold a key fact.")
    value_line_coverage: float | None = Field(None, description="Answerable cases that open with a value line.")
    value_lines: int = 0
    median_answer_chars: float | None = Field(None, description="Median length of what the user reads first.")
    leads_repeating: int = Field(0, description="Answers whose lead shows a line twice.")
    leads_announcing_nothing: int = Field(
        0, description="Answers whose lead quotes an announcement ('…the following flags:') without what it announces."
    )
    intervals: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="95 % bootstrap intervals of the headline figures."
    )


def mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def summarize(scores: Sequence[CaseScore]) -> Summary:
    """Macro-average every metric over the cases it applies to."""
    refused = [s for s in scores if s.refused]
    should_refuse = [s for s in scores if s.expected_refuse]
    injections = [s for s in scores if s.injection_resisted is not None]
    latencies = [s.latency_ms for s in scores if s.error is None]
    answerable = [s for s in scores if not s.expected_refuse]
    lines = [s for s in answerable if s.value_line]
    headline = {
        "accuracy": [float(s.accurate) for s in scores],
        "accuracy_whole": [float(s.accurate_whole) for s in scores],
        "value_line_precision": [float(bool(s.value_line_right)) for s in lines],
        "value_line_coverage": [float(s.value_line) for s in answerable],
        "refusal_recall": [float(s.refused) for s in should_refuse],
        "not_stated_recall": [float(s.not_stated) for s in scores if s.near_miss],
        "answerable_refused_rate": [float(s.refused) for s in answerable],
    }
    return Summary(
        accuracy_whole=mean(float(s.accurate_whole) for s in scores),
        value_line_precision=mean(float(bool(s.value_line_right)) for s in lines),
        value_line_coverage=mean(float(s.value_line) for s in answerable),
        value_lines=len(lines),
        median_answer_chars=percentile([float(s.answer_chars) for s in scores if not s.refused], 50),
        leads_repeating=sum(1 for s in scores if s.repeats),
        leads_announcing_nothing=sum(1 for s in scores if s.announces_nothing),
        intervals={k: ci for k, v in headline.items() if (ci := interval(v)) is not None},
        cases=len(scores),
        errors=sum(1 for s in scores if s.error is not None),
        accuracy=mean(float(s.accurate) for s in scores),
        accuracy_ja=mean(float(s.accurate) for s in scores if s.lang == "ja"),
        accuracy_en=mean(float(s.accurate) for s in scores if s.lang == "en"),
        hit1=mean(s.hit1 for s in scores),
        hit3=mean(s.hit3 for s in scores),
        hit5=mean(s.hit5 for s in scores),
        mrr=mean(s.rr for s in scores),
        ndcg10=mean(s.ndcg10 for s in scores),
        section_hit=mean(s.section_hit for s in scores),
        citation_precision=mean(s.citation_precision for s in scores),
        citation_recall=mean(s.citation_recall for s in scores),
        context_recall=mean(s.context_complete for s in scores),
        refusal_precision=mean(float(s.expected_refuse) for s in refused),
        refusal_recall=mean(float(s.refused) for s in should_refuse),
        injection_resistance=mean(float(bool(s.injection_resisted)) for s in injections),
        token_f1=mean(s.f1 for s in scores),
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        verdict_accuracy=mean(float(s.verdict == s.expected_verdict) for s in scores if s.expected_verdict),
        verdict_on_factual=sum(1 for s in scores if not s.selection and s.verdict is not None),
        decisions_on_factual=sum(1 for s in scores if not s.selection and (s.verdict is not None or s.asked_situation)),
        followup_accuracy=mean(float(s.accurate) for s in scores if s.followup),
        followup_selection_accuracy=mean(
            float(s.accurate and s.verdict == s.expected_verdict) for s in scores if s.followup and s.expected_verdict
        ),
        followup_factual_accuracy=mean(float(s.accurate) for s in scores if s.followup and not s.expected_verdict),
        situation_accuracy=mean(
            float(s.situation == s.expected_situation) for s in scores if s.expected_situation is not None and s.verdict
        ),
        not_stated_precision=mean(float(s.expected_refuse) for s in scores if s.not_stated),
        not_stated_recall=mean(float(s.not_stated) for s in scores if s.near_miss),
        answerable_refused=sum(1 for s in scores if not s.expected_refuse and s.refused),
        answerable_refused_rate=mean(float(s.refused) for s in scores if not s.expected_refuse),
    )


DIRECTIONS = ("en->en", "ja->ja", "en->ja", "ja->en")


def by_direction(scores: Sequence[CaseScore]) -> dict[str, dict[str, float | int]]:
    """Per direction: cases, accuracy, key facts in contexts, and the failures per stage."""
    out: dict[str, dict[str, float | int]] = {}
    for direction in [*DIRECTIONS, "refuse"]:
        group = [s for s in scores if s.direction == direction]
        if not group:
            continue
        row: dict[str, float | int] = {
            "cases": len(group),
            "accuracy": sum(s.accurate for s in group) / len(group),
            "contexts": sum(1 for s in group if s.context_complete == 1.0) / len(group),
        }
        for stage in STAGES:
            row[stage] = sum(1 for s in group if s.stage == stage)
        out[direction] = row
    return out


STAGES = ("retrieval", "evidence", "refusal", "situation", "verdict")


def by_answer_type(scores: Sequence[CaseScore]) -> dict[str, dict[str, float | int]]:
    """Per labelled answer type (a near-miss under its asked type, as 'none'): cases, accuracy, the share the
    system typed the same way, and the failures per stage."""
    out: dict[str, dict[str, float | int]] = {}
    for kind in sorted({s.answer_type for s in scores if s.answer_type}):
        group = [s for s in scores if s.answer_type == kind]
        row: dict[str, float | int] = {
            "cases": len(group),
            "accuracy": sum(s.accurate for s in group) / len(group),
            "typed": sum(1 for s in group if s.predicted_type == kind) / len(group),
        }
        for stage in STAGES:
            row[stage] = sum(1 for s in group if s.stage == stage)
        out[kind] = row
    return out


def breakdown(scores: Sequence[CaseScore]) -> dict[str, tuple[int, float]]:
    """Accuracy per tag and per language: name -> (cases, accuracy), for the report."""
    groups: dict[str, list[bool]] = {}
    for s in scores:
        for key in [f"lang:{s.lang}", *(f"tag:{t}" for t in s.tags)]:
            groups.setdefault(key, []).append(s.accurate)
    return {k: (len(v), sum(v) / len(v)) for k, v in sorted(groups.items())}
