"""Latency of the default answer path, per stage, after warm-up.

    .venv/bin/python bench/bench_ask.py [--rounds 2] [--golden evals/golden.jsonl]

Prints model-load and warm-up time, then p50/p95 per stage (query embedding, dense search, BM25,
fusion, answer) and end to end, over every golden question asked ``--rounds`` times. Uses the real
index (settings from ADVISOR_* and .env); run `ingest` first. Targets on a 2-core machine: p50 ≤ 250 ms, p95 ≤ 600 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.pipeline import Advisor  # noqa: E402
from core.numeric import percentile  # noqa: E402
from core.settings import load_settings  # noqa: E402

STAGES = ["embed_query", "dense", "bm25", "fusion", "retrieve", "answer"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="times each question is asked")
    parser.add_argument("--golden", type=Path, default=ROOT / "evals" / "golden.jsonl")
    args = parser.parse_args()

    questions = [json.loads(line)["question"] for line in args.golden.read_text(encoding="utf-8").splitlines() if line]
    settings = load_settings()
    started = time.perf_counter()
    advisor = Advisor(settings)
    advisor.warm_up()
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    for question in questions[:5]:
        advisor.ask(question)
    warm_s = time.perf_counter() - started

    per_stage: dict[str, list[float]] = {stage: [] for stage in STAGES}
    totals: list[float] = []
    for _ in range(args.rounds):
        for question in questions:
            t0 = time.perf_counter()
            answer = advisor.ask(question)
            totals.append((time.perf_counter() - t0) * 1000)
            for stage in STAGES:
                if stage in answer.timings_ms:
                    per_stage[stage].append(answer.timings_ms[stage])

    print(f"embedder: {advisor.embeddings.spec}; questions: {len(questions)} x {args.rounds}")
    print(f"model load + index snapshot: {load_s:.2f} s; warm-up (5 questions): {warm_s:.2f} s\n")
    print("| stage | n | p50 ms | p95 ms | mean ms |")
    print("|---|---|---|---|---|")
    for stage in [*STAGES, "total"]:
        values = totals if stage == "total" else per_stage[stage]
        if not values:
            continue
        print(
            f"| {stage} | {len(values)} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} "
            f"| {statistics.fmean(values):.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
