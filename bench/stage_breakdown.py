"""Where a question's time goes under load: client latencies joined with the app's stage timings (pure).

The load test knows, per question, its session, when it was submitted (wall clock) and how long the client
waited. The app it starts writes per question (``app.web.stages``, enabled by ``ADVISOR_STAGE_LOG``) when the
chat handler started and the time spent waiting for an answerer, in the pipeline and rendering; Gradio's own
profiler (``GRADIO_PROFILING=1``, loopback) adds its queue wait and its pre/postprocessing. Joined by session,
each question's latency splits into additive stages; the rest is transport (SSE, the client) and scheduling.

    >>> s = Sample("a", submitted=100.0, latency_ms=500.0)
    >>> stage = {"session": "a", "started": 100.2, "worker_wait_ms": 10, "pipeline_ms": 100, "render_ms": 20}
    >>> rows = per_question([s], [stage], [{"session_hash": "a", "queue_wait_ms": 150.0, "postprocess_ms": 30.0}])
    >>> [round(rows[0][k]) for k in ("queue", "pipeline", "serialise", "transport")]
    [200, 100, 30, 140]

Deliberately left out: collecting the numbers (``bench/load_test.py``) and any statistics across runs.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.numeric import percentile

# (key, label): additive stages of one question's latency, in the order they happen.
STAGES = [
    ("queue", "queue wait (submission → handler start)"),
    ("gradio_queue", "  of which in Gradio's queue"),
    ("worker_wait", "wait for an answer worker"),
    ("pipeline", "pipeline (Advisor.stream)"),
    ("render", "rendering (app.web)"),
    ("serialise", "serialisation (Gradio pre/postprocess)"),
    ("transport", "transport, scheduling, client (rest)"),
    ("latency", "client-observed latency"),
]
ADDITIVE = ("queue", "worker_wait", "pipeline", "render", "serialise")


@dataclass(frozen=True)
class Sample:
    """One answered question as the client saw it."""

    session: str
    submitted: float  # wall-clock seconds
    latency_ms: float


def read_stage_log(path: Path) -> list[dict[str, Any]]:
    """The app's stage lines; a torn last line (the app was stopped mid-write) is skipped."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def per_question(
    samples: Iterable[Sample], stages: Iterable[dict[str, Any]], traces: Iterable[dict[str, Any]]
) -> list[dict[str, float]]:
    """Each sample with a stage line split into stages (ms); samples the app did not log are left out."""
    by_session = {str(row["session"]): row for row in stages}
    gradio = {str(t.get("session_hash")): t for t in traces}
    out = []
    for s in samples:
        row = by_session.get(s.session)
        if row is None:
            continue
        trace = gradio.get(s.session, {})
        split = {
            "queue": max(0.0, (float(row["started"]) - s.submitted) * 1000),
            "gradio_queue": float(trace.get("queue_wait_ms", 0.0)),
            "worker_wait": float(row.get("worker_wait_ms", 0.0)),
            "pipeline": float(row.get("pipeline_ms", 0.0)),
            "render": float(row.get("render_ms", 0.0)),
            "serialise": sum(
                float(trace.get(k, 0.0)) for k in ("preprocess_ms", "postprocess_ms", "streaming_diff_ms")
            ),
            "latency": s.latency_ms,
        }
        split["transport"] = max(0.0, s.latency_ms - sum(split[k] for k in ADDITIVE))
        out.append(split)
    return out


def summarise(rows: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Per stage: mean, p50, p95 (ms) and its share of the mean latency (%)."""
    if not rows:
        return {}
    mean_latency = statistics.fmean(r["latency"] for r in rows) or 1.0
    out = {}
    for key, _ in STAGES:
        values = [r[key] for r in rows]
        mean = statistics.fmean(values)
        out[key] = {
            "mean_ms": round(mean, 1),
            "p50_ms": round(percentile(values, 50) or 0.0, 1),
            "p95_ms": round(percentile(values, 95) or 0.0, 1),
            "share_pct": round(100 * mean / mean_latency, 1),
        }
    return out


def format_breakdown(summary: dict[str, dict[str, float]], n: int) -> str:
    if not summary:
        return "(no stage timings: the app wrote no stage log)"
    lines = [
        f"Where the time goes ({n} questions):\n",
        "| stage | mean ms | p50 ms | p95 ms | share of mean latency |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, label in STAGES:
        row = summary[key]
        lines.append(f"| {label} | {row['mean_ms']} | {row['p50_ms']} | {row['p95_ms']} | {row['share_pct']} % |")
    return "\n".join(lines)
