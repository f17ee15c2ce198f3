"""Load test: the web app on loopback driven by concurrent clients (``load_clients``); stops by itself.

Starts the app in a child process (this script with ``--serve PORT``) over the configured index
(``load_settings()``: by default the real ``.index``), waits until the models are loaded, then runs N client
threads, each asking M questions from ``evals/golden.jsonl`` (round-robin, every client starting at a
different question) through the ``/ask`` endpoint, one at a time, each in a fresh session. Prints
throughput, latency p50/p95/max, error count, the memory of the app and its answer workers (RSS and PSS
sums, after warm-up and the peak sampled every 100 ms during the run; ``RssSampler`` says why both) and the
CPU time per question of the app and of the clients, as one Markdown table, then where a question's
time went (``stage_breakdown``): queue wait, wait for an answer worker, pipeline, rendering, Gradio's
serialisation, and the rest. The stage timings come from the app (``ADVISOR_STAGE_LOG``, a file) and
Gradio's profiler (``GRADIO_PROFILING=1``, a loopback endpoint), both enabled for this child only.

    .venv/bin/python bench/load_test.py                        # 32 clients x 10 questions, <= 300 s
    .venv/bin/python bench/load_test.py --clients 4 --questions 5 --max-seconds 120 --json

Bounded: loopback only, a hard wall-clock limit after which the app is stopped and unfinished
questions count as errors, and the app is always stopped on exit.

Deliberately left out: the LLM backends (they measure the LLM server, not this app), the browser
(rendering happens client-side), and statistics over repeated runs (one run on a shared machine).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the bench package, when run as a script

from bench.load_clients import CLIENTS, Results, client_worker
from bench.stage_breakdown import format_breakdown, per_question, read_stage_log, summarise
from core.numeric import percentile

PROJECT_ROOT = Path(__file__).resolve().parent.parent
QUIET_ENV = {
    "ANONYMIZED_TELEMETRY": "False",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(port: int) -> None:
    """Child process: the app as `app` runs it, but always on 127.0.0.1:port."""
    from app.web.ui import build_app, launch_options
    from core.settings import load_settings

    settings = load_settings({"host": "127.0.0.1", "port": port})
    options = {**launch_options(settings), "server_name": "127.0.0.1", "server_port": port, "quiet": True}
    build_app(settings).launch(**options)


def load_questions(path: Path) -> list[str]:
    questions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            if isinstance(item.get("question"), str) and item["question"].strip():
                questions.append(item["question"])
    if not questions:
        raise SystemExit(f"load_test: no questions in {path}")
    return questions


class RssSampler(threading.Thread):
    """Peak memory of a process and its children, sampled until stopped: the sum of their RSS, and of their
    PSS (proportional set size: a page shared by n processes counts 1/n in each). The RSS sum counts the
    pages every answer worker maps from the same files (the tokenizer's dictionary, the embedding model,
    the libraries) once per process; the PSS sum is the memory the app takes from the machine."""

    def __init__(self, pid: int, every_s: float = 0.1, pss_every: int = 10) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.pss_every = pss_every  # PSS costs more to read: every tenth sample (once a second)
        self.proc = psutil.Process(pid)
        self.every_s = every_s
        self.peak = self.peak_pss = 0
        self._halt = threading.Event()

    def current(self, pss: bool = True) -> tuple[int, int]:
        """(RSS sum, PSS sum) in bytes; the PSS sum is 0 unless asked for."""
        total_rss = total_pss = 0
        with contextlib.suppress(psutil.Error):
            for proc in [self.proc, *self.proc.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    if pss:
                        mem = proc.memory_full_info()  # /proc/PID/smaps_rollup
                        total_rss, total_pss = total_rss + mem.rss, total_pss + getattr(mem, "pss", mem.rss)
                    else:
                        total_rss += proc.memory_info().rss
        return total_rss, total_pss

    def cpu_seconds(self) -> tuple[float, float]:
        """User + system CPU seconds so far: (the app's own process, its children: the answer workers)."""
        own = children = 0.0
        with contextlib.suppress(psutil.Error):
            for proc in [self.proc, *self.proc.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    times = proc.cpu_times()
                    if proc.pid == self.proc.pid:
                        own += times.user + times.system
                    else:
                        children += times.user + times.system
        return own, children

    def run(self) -> None:
        n = 0
        while not self._halt.is_set():
            rss, pss = self.current(pss=n % self.pss_every == 0)
            self.peak, self.peak_pss = max(self.peak, rss), max(self.peak_pss, pss)
            n += 1
            self._halt.wait(self.every_s)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)
        rss, pss = self.current()
        self.peak, self.peak_pss = max(self.peak, rss), max(self.peak_pss, pss)


def wait_until_ready(url: str, app: subprocess.Popen[bytes], deadline: float) -> str:
    """Wait for the page, then for the models to load; return the status line."""
    from gradio_client import Client

    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise RuntimeError(f"the app exited with code {app.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                break
        time.sleep(0.25)
    else:
        raise RuntimeError("the app did not serve its page before the time limit")
    client = Client(url, verbose=False, analytics_enabled=False, download_files=False)
    try:
        while time.monotonic() < deadline:
            status = str(client.predict(api_name="/status"))
            if "Loading" not in status:
                return status
            time.sleep(0.5)
    finally:
        client.close()
    raise RuntimeError("the models did not finish loading before the time limit")


@contextlib.contextmanager
def launched_app(max_seconds: float) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    """The app in a child process: (process, url, its stage log); stopped on exit, or killed at the limit."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with tempfile.NamedTemporaryFile(prefix="load-test-app-", suffix=".log", delete=False) as log:
        log_path = Path(log.name)
    stage_path = log_path.with_suffix(".stages.jsonl")
    # Stage timings, for this child only: the app's own (a file) and Gradio's profiler (a loopback endpoint).
    env = {**os.environ, **QUIET_ENV, "ADVISOR_STAGE_LOG": str(stage_path), "GRADIO_PROFILING": "1"}
    with log_path.open("wb") as log_file:
        app = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(port)],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    # The hard limit: whatever the clients are doing, the app is stopped at the deadline (+ grace).
    watchdog = threading.Timer(max_seconds + 10, app.kill)
    watchdog.daemon = True
    watchdog.start()
    print(f"load_test: app pid {app.pid} on {url} (log {log_path})", file=sys.stderr, flush=True)
    try:
        yield app, url, stage_path
    finally:
        watchdog.cancel()
        app.terminate()
        try:
            app.wait(timeout=20)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait(timeout=20)


@dataclass
class Drive:
    """What the clients did, and the app's CPU seconds (own, answer workers) and the clients' meanwhile."""

    results: Results
    wall_s: float
    ui_cpu: float
    workers_cpu: float
    bench_cpu: float


def drive_clients(
    args: argparse.Namespace, url: str, questions: list[str], deadline: float, sampler: RssSampler
) -> Drive:
    """Start the clients together (a barrier), wait for all of them or the deadline."""
    results = Results()
    make = functools.partial(CLIENTS[args.client], url, args.backend, args.k)
    barrier = threading.Barrier(args.clients + 1)
    threads = [
        threading.Thread(
            target=client_worker,
            args=(make, i, questions, args.questions, deadline, barrier, results),
            name=f"client-{i}",
            daemon=True,
        )
        for i in range(args.clients)
    ]
    for t in threads:
        t.start()
    with contextlib.suppress(threading.BrokenBarrierError):
        barrier.wait(timeout=max(0.0, deadline - time.monotonic()))
    t0 = time.perf_counter()
    (ui_cpu0, workers_cpu0), bench_cpu0 = sampler.cpu_seconds(), _own_cpu_seconds()
    for t in threads:
        t.join(timeout=max(0.0, deadline + 5 - time.monotonic()))
    wall_s = time.perf_counter() - t0
    (ui_cpu, workers_cpu), bench_cpu = sampler.cpu_seconds(), _own_cpu_seconds()
    stuck = sum(t.is_alive() for t in threads)
    if stuck:
        results.error(f"{stuck} client(s) still running at the wall-clock limit")
    return Drive(results, wall_s, ui_cpu - ui_cpu0, workers_cpu - workers_cpu0, bench_cpu - bench_cpu0)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from core.settings import load_settings

    questions = load_questions(args.golden)
    started = time.monotonic()
    deadline = started + args.max_seconds
    with launched_app(args.max_seconds) as (app, url, stage_path):
        status = wait_until_ready(url, app, deadline)
        if "unavailable" in status.lower() or "No index" in status:
            raise RuntimeError(f"the index is not usable: {status}")
        ready_s = time.monotonic() - started
        sampler = RssSampler(app.pid)
        idle_rss, idle_pss = sampler.current()
        sampler.start()
        print(f"load_test: ready after {ready_s:.1f}s; {args.clients} clients x {args.questions} questions",
              file=sys.stderr, flush=True)  # fmt: skip
        drive = drive_clients(args, url, questions, deadline, sampler)
        sampler.stop()
        traces = gradio_traces(url)
    results, n = drive.results, len(drive.results.latencies_ms)
    lat = results.latencies_ms
    p50, p95 = percentile(lat, 50), percentile(lat, 95)
    split = per_question(results.samples, read_stage_log(stage_path), traces)
    stage_path.unlink(missing_ok=True)

    def per_q(seconds: float) -> float | None:
        return round(1000 * seconds / n, 1) if n else None

    return {
        "clients": args.clients,
        "client": args.client,
        "questions_each": args.questions,
        "concurrency": load_settings().web.concurrency,
        "completed": n,
        "errors": len(results.errors),
        "refused": results.refused,
        "wall_s": round(drive.wall_s, 2),
        "throughput_qps": round(n / drive.wall_s, 2) if drive.wall_s > 0 else 0.0,
        "p50_ms": None if p50 is None else round(p50, 1),
        "p95_ms": None if p95 is None else round(p95, 1),
        "max_ms": round(max(lat), 1) if lat else float("nan"),
        "ready_s": round(ready_s, 1),
        "idle_rss_mb": round(idle_rss / 2**20, 1),
        "peak_rss_mb": round(sampler.peak / 2**20, 1),
        "idle_pss_mb": round(idle_pss / 2**20, 1),
        "peak_pss_mb": round(sampler.peak_pss / 2**20, 1),
        # CPU per answered question: the app (and its workers) and this process (the clients).
        "ui_cpu_ms_per_q": per_q(drive.ui_cpu),
        "workers_cpu_ms_per_q": per_q(drive.workers_cpu),
        "client_cpu_ms_per_q": per_q(drive.bench_cpu),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "stages_n": len(split),
        "stages": summarise(split),
        "error_samples": results.errors[:5],
    }


def _own_cpu_seconds() -> float:
    times = psutil.Process().cpu_times()
    return times.user + times.system


def gradio_traces(url: str) -> list[dict[str, Any]]:
    """Gradio's per-event profile (queue wait, pre/postprocessing), from the child's loopback endpoint."""
    try:
        response = httpx.get(f"{url}gradio_api/profiling/traces", timeout=10)
        response.raise_for_status()
        data = response.json()
    except (httpx.HTTPError, ValueError):
        return []
    return data if isinstance(data, list) else []


COLUMNS = [
    ("clients", "clients"),
    ("questions_each", "questions/client"),
    ("concurrency", "app concurrency"),
    ("completed", "answered"),
    ("errors", "errors"),
    ("refused", "refused"),
    ("wall_s", "wall s"),
    ("throughput_qps", "q/s"),
    ("p50_ms", "p50 ms"),
    ("p95_ms", "p95 ms"),
    ("max_ms", "max ms"),
    ("idle_rss_mb", "RSS after warm-up MB"),
    ("peak_rss_mb", "peak RSS MB"),
    ("peak_pss_mb", "peak PSS MB"),
    ("ui_cpu_ms_per_q", "UI process CPU ms/q"),
    ("workers_cpu_ms_per_q", "workers CPU ms/q"),
    ("client_cpu_ms_per_q", "client CPU ms/q"),
]


def format_table(row: dict[str, Any]) -> str:
    head = "| " + " | ".join(title for _, title in COLUMNS) + " |"
    rule = "|" + "|".join("---:" for _ in COLUMNS) + "|"
    return "\n".join([head, rule, "| " + " | ".join(str(row[key]) for key, _ in COLUMNS) + " |"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    parser.add_argument("--questions", type=int, default=10, help="questions per client (default 10)")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="hard wall-clock limit (default 300)")
    parser.add_argument("--golden", type=Path, default=PROJECT_ROOT / "evals" / "golden.jsonl")
    parser.add_argument("--backend", default="extractive", help="answer backend sent with each question")
    parser.add_argument("--k", type=int, default=5, help="passages per answer")
    parser.add_argument(
        "--client", choices=sorted(CLIENTS), default="http", help="how clients talk to the app (load_clients)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON instead of a table")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.update(QUIET_ENV)
    if args.serve:
        serve(args.serve)
        return 0
    if args.clients < 1 or args.questions < 1 or args.max_seconds <= 0:
        parser.error("--clients, --questions and --max-seconds must be positive")
    try:
        row = run(args)
    except RuntimeError as exc:
        print(f"load_test: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(row, ensure_ascii=False, indent=2))
    else:
        print(f"Load test: {row['clients']} clients x {row['questions_each']} questions, {os.cpu_count()} CPUs, "
              f"app ready after {row['ready_s']} s\n")  # fmt: skip
        print(format_table(row))
        for sample in row["error_samples"]:
            print(f"- error: {sample}")
        print(f"\nload average (1, 5, 15 min) at the end: {row['load_average']}\n")
        print(format_breakdown(row["stages"], row["stages_n"]))
    return 0 if row["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
