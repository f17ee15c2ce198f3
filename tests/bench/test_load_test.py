"""bench/load_test.py and its helpers: the per-stage split of a question's latency (pure), and one small run
of the whole load test — app, answer workers, clients, stage log — over the fake-embedder index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fakes import FakeEmbeddings
from paths import FIXTURES, PROJECT_ROOT

from bench.stage_breakdown import STAGES, Sample, format_breakdown, per_question, read_stage_log, summarise
from core.settings import Settings
from ingest.indexer import run_ingest


def test_latency_splits_into_stages_joined_by_session(tmp_path: Path) -> None:
    log = tmp_path / "stages.jsonl"
    rows = [
        {"session": "a", "started": 10.5, "worker_wait_ms": 300.0, "pipeline_ms": 100.0, "render_ms": 5.0},
        {"session": "b", "started": 20.1, "worker_wait_ms": 0.0, "pipeline_ms": 90.0, "render_ms": 4.0},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"session": "c", "sta', encoding="utf-8")
    assert [r["session"] for r in read_stage_log(log)] == ["a", "b"]  # the torn last line is skipped
    samples = [Sample("a", 10.0, 1000.0), Sample("b", 20.0, 200.0), Sample("unlogged", 30.0, 50.0)]
    traces = [{"session_hash": "a", "queue_wait_ms": 400.0, "postprocess_ms": 20.0, "preprocess_ms": 5.0}]
    split = per_question(samples, read_stage_log(log), traces)
    assert len(split) == 2  # a question the app did not log is left out
    a, b = split
    assert (a["queue"], a["gradio_queue"], a["serialise"]) == (500.0, 400.0, 25.0)
    assert a["transport"] == 1000.0 - (500.0 + 300.0 + 100.0 + 5.0 + 25.0)
    assert round(b["queue"]) == 100 and b["serialise"] == 0.0 and round(b["transport"]) == 6
    summary = summarise(split)
    assert set(summary) == {key for key, _ in STAGES}
    assert summary["latency"] == {"mean_ms": 600.0, "p50_ms": 600.0, "p95_ms": 960.0, "share_pct": 100.0}
    table = format_breakdown(summary, len(split))
    assert "| pipeline (Advisor.stream) | 95.0 |" in table and "2 questions" in table
    assert summarise([]) == {} and "no stage timings" in format_breakdown({}, 0)


def test_a_small_load_test_answers_through_the_workers_and_prints_the_breakdown(settings: Settings) -> None:
    run_ingest(settings, FakeEmbeddings())
    env = {
        **os.environ,
        "ADVISOR_CORPUS_DIR": str(settings.index.corpus_dir),
        "ADVISOR_TRANSLATIONS_DIR": str(settings.index.translations_folder),
        "ADVISOR_INDEX_DIR": str(settings.index.index_dir),
        "ADVISOR_DATA_DIR": str(settings.web.data_dir),
        "ADVISOR_EMBEDDING_BACKEND": "fakes:FakeEmbeddings",  # importable by the app and its workers
        "ADVISOR_CHUNK_SIZE": str(settings.index.chunk_size),
        "ADVISOR_CHUNK_MIN": str(settings.index.chunk_min),
        "ADVISOR_ANSWER_WORKERS": "2",
    }
    args = [
        "--clients",
        "3",
        "--questions",
        "2",
        "--max-seconds",
        "120",
        "--golden",
        str(FIXTURES / "golden-mini.jsonl"),
    ]
    done = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "bench" / "load_test.py"), *args, "--json"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    row = json.loads(done.stdout)
    assert (row["completed"], row["errors"], row["client"]) == (6, 0, "http")
    assert row["stages_n"] == 6  # every question's stages came back from the app
    assert row["stages"]["pipeline"]["mean_ms"] > 0 and row["stages"]["latency"]["share_pct"] == 100.0
    assert row["workers_cpu_ms_per_q"] > 0 and row["peak_pss_mb"] > 0
