"""Load test: the web app on loopback driven by concurrent `gradio_client` clients; stops by itself.

Starts the app in a child process (this script with ``--serve PORT``) over the configured index
(``load_settings()``: by default the real ``.index``), waits until the models are loaded, then runs N client
threads, each asking M questions from ``evals/golden.jsonl`` (round-robin, every client starting at a
different question) through the ``/ask`` endpoint, one at a time, each in a fresh session. Prints
throughput, latency p50/p95/max, error count and the app process's RSS (idle after warm-up, and the
peak sampled every 100 ms during the run) as one Markdown table.

    .venv/bin/python bench/load_test.py                        # 16 clients x 20 questions, <= 300 s
    .venv/bin/python bench/load_test.py --clients 4 --questions 5 --max-seconds 120 --json

Bounded: loopback only, a hard wall-clock limit after which the app is stopped and unfinished
questions count as errors, and the app is always stopped on exit.

Deliberately left out: the LLM backends (they measure the LLM server, not this app), the browser
(rendering happens client-side), and statistics over repeated runs (one run on a shared machine).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from core.numeric import percentile

PROJECT_ROOT = Path(__file__).resolve().parent.parent
QUIET_ENV = {
    "ANONYMIZED_TELEMETRY": "False",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
ERROR_PREFIX = "⚠️"  # app.web.render's error messages (index unavailable, internal error, bad question)


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
    """Peak resident memory of a process and its children, sampled until stopped."""

    def __init__(self, pid: int, every_s: float = 0.1) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.proc = psutil.Process(pid)
        self.every_s = every_s
        self.peak = 0
        self._halt = threading.Event()

    def current(self) -> int:
        total = 0
        with contextlib.suppress(psutil.Error):
            total = self.proc.memory_info().rss
            for child in self.proc.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    total += child.memory_info().rss
        return total

    def run(self) -> None:
        while not self._halt.is_set():
            self.peak = max(self.peak, self.current())
            self._halt.wait(self.every_s)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


@dataclass
class Results:
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ok(self, ms: float, refused: bool) -> None:
        with self.lock:
            self.latencies_ms.append(ms)
            self.refused += int(refused)

    def error(self, message: str) -> None:
        with self.lock:
            self.errors.append(message[:300])


def assistant_text(outputs: Any) -> str:
    """The final assistant message of an /ask result: (textbox, chatbot, passages, feedback note)."""
    chat = outputs[1]
    parts = chat[-1]["content"]
    if isinstance(parts, str):
        return parts
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


def client_worker(
    url: str,
    index: int,
    questions: list[str],
    count: int,
    deadline: float,
    start: threading.Barrier,
    results: Results,
    backend: str,
    k: int,
) -> None:
    from gradio_client import Client

    try:
        client = Client(url, verbose=False, analytics_enabled=False, download_files=False)
    except Exception as exc:
        results.error(f"client {index}: cannot connect: {type(exc).__name__}: {exc}")
        with contextlib.suppress(threading.BrokenBarrierError):
            start.wait(timeout=max(0.0, deadline - time.monotonic()))
        return
    try:
        start.wait(timeout=max(0.0, deadline - time.monotonic()))
        for j in range(count):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                results.error(f"client {index}: wall-clock limit reached before question {j + 1}")
                continue
            question = questions[(index * count + j) % len(questions)]
            client.reset_session()  # every question is a new conversation (no follow-up context)
            t0 = time.perf_counter()
            try:
                job = client.submit(question, backend, k, api_name="/ask")
                text = assistant_text(job.result(timeout=remaining))
            except Exception as exc:
                results.error(f"client {index} q{j + 1}: {type(exc).__name__}: {exc}")
                continue
            elapsed = (time.perf_counter() - t0) * 1000
            if text.lstrip().startswith(ERROR_PREFIX) or not text.strip():
                results.error(f"client {index} q{j + 1}: app error: {text.strip()[:200]}")
            else:
                results.ok(elapsed, "does not support an answer" in text)
    except threading.BrokenBarrierError:
        results.error(f"client {index}: start barrier broken (limit reached while connecting)")
    finally:
        with contextlib.suppress(Exception):
            client.close()


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


def run(args: argparse.Namespace) -> dict[str, Any]:
    questions = load_questions(args.golden)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    started = time.monotonic()
    deadline = started + args.max_seconds
    env = {**os.environ, **QUIET_ENV}
    with tempfile.NamedTemporaryFile(prefix="load-test-app-", suffix=".log", delete=False) as log:
        log_path = Path(log.name)
    with log_path.open("wb") as log_file:
        app = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(port)],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    # The hard limit: whatever the clients are doing, the app is stopped at the deadline (+ grace).
    watchdog = threading.Timer(args.max_seconds + 10, app.kill)
    watchdog.daemon = True
    watchdog.start()
    try:
        print(f"load_test: app pid {app.pid} on {url} (log {log_path})", file=sys.stderr, flush=True)
        status = wait_until_ready(url, app, deadline)
        if "unavailable" in status.lower() or "No index" in status:
            raise RuntimeError(f"the index is not usable: {status}")
        ready_s = time.monotonic() - started
        sampler = RssSampler(app.pid)
        idle_rss = sampler.current()
        sampler.start()
        print(f"load_test: ready after {ready_s:.1f}s; {args.clients} clients x {args.questions} questions",
              file=sys.stderr, flush=True)  # fmt: skip
        results = Results()
        barrier = threading.Barrier(args.clients + 1)
        threads = [
            threading.Thread(
                target=client_worker,
                args=(url, i, questions, args.questions, deadline, barrier, results, args.backend, args.k),
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
        for t in threads:
            t.join(timeout=max(0.0, deadline + 5 - time.monotonic()))
        wall_s = time.perf_counter() - t0
        sampler.stop()
        stuck = sum(t.is_alive() for t in threads)
        if stuck:
            results.error(f"{stuck} client(s) still running at the wall-clock limit")
    finally:
        watchdog.cancel()
        app.terminate()
        try:
            app.wait(timeout=20)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait(timeout=20)
    from core.settings import load_settings

    lat = results.latencies_ms
    p50, p95 = percentile(lat, 50), percentile(lat, 95)
    return {
        "clients": args.clients,
        "questions_each": args.questions,
        "concurrency": load_settings().web.concurrency,
        "completed": len(lat),
        "errors": len(results.errors),
        "refused": results.refused,
        "wall_s": round(wall_s, 2),
        "throughput_qps": round(len(lat) / wall_s, 2) if wall_s > 0 else 0.0,
        "p50_ms": None if p50 is None else round(p50, 1),
        "p95_ms": None if p95 is None else round(p95, 1),
        "max_ms": round(max(lat), 1) if lat else float("nan"),
        "ready_s": round(ready_s, 1),
        "idle_rss_mb": round(idle_rss / 2**20, 1),
        "peak_rss_mb": round(sampler.peak / 2**20, 1),
        "error_samples": results.errors[:5],
    }


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
]


def format_table(row: dict[str, Any]) -> str:
    head = "| " + " | ".join(title for _, title in COLUMNS) + " |"
    rule = "|" + "|".join("---:" for _ in COLUMNS) + "|"
    return "\n".join([head, rule, "| " + " | ".join(str(row[key]) for key, _ in COLUMNS) + " |"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument("--questions", type=int, default=20, help="questions per client (default 20)")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="hard wall-clock limit (default 300)")
    parser.add_argument("--golden", type=Path, default=PROJECT_ROOT / "evals" / "golden.jsonl")
    parser.add_argument("--backend", default="extractive", help="answer backend sent with each question")
    parser.add_argument("--k", type=int, default=5, help="passages per answer")
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
    return 0 if row["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
