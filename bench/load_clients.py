"""The load test's clients: each asks its questions through the UI's ``/ask`` endpoint, one at a time.

Two ways to speak Gradio's queue protocol, chosen by ``--client``:

- ``http`` (default): a few lines of httpx — join the queue, read the session's event stream until the
  event completes. Light, so the measurement is of the app rather than of the clients sharing its cores.
- ``gradio``: ``gradio_client.Client``, as a Python user of the API would. It spends several times more
  CPU per question (a heartbeat stream and a new connection per session), which on a small machine
  is taken from the app being measured.

Every question is a new session (no follow-up context); a question counts as an error when the request
fails or the app answers with one of its error messages (they start with ⚠️).

Deliberately left out: the browser (the page renders client-side) and the app's other endpoints.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from bench.stage_breakdown import Sample

ERROR_PREFIX = "⚠️"  # app.web.render's error messages (index unavailable, internal error, bad question, busy)


@dataclass
class Results:
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    refused: int = 0
    samples: list[Sample] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ok(self, sample: Sample, refused: bool) -> None:
        with self.lock:
            self.latencies_ms.append(sample.latency_ms)
            self.samples.append(sample)
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


class Asker(Protocol):
    def ask(self, question: str, timeout: float) -> tuple[str, Any]:
        """(session hash, final outputs) of one question asked in a new session."""
        ...

    def close(self) -> None: ...


class GradioAsker:
    def __init__(self, url: str, backend: str, k: int) -> None:
        from gradio_client import Client

        self.client = Client(url, verbose=False, analytics_enabled=False, download_files=False)
        self.backend, self.k = backend, k

    def ask(self, question: str, timeout: float) -> tuple[str, Any]:
        self.client.reset_session()
        job = self.client.submit(question, self.backend, self.k, api_name="/ask")
        return self.client.session_hash, job.result(timeout=timeout)

    def close(self) -> None:
        self.client.close()


class HttpAsker:
    """Gradio's queue protocol over one keep-alive connection: POST queue/join, then GET queue/data (SSE)."""

    def __init__(self, url: str, backend: str, k: int) -> None:
        self.http = httpx.Client(base_url=url, timeout=httpx.Timeout(30.0, read=None))
        config = self.http.get("config").raise_for_status().json()
        ask = next((d for d in config["dependencies"] if d.get("api_name") == "ask"), None)
        if ask is None:
            raise RuntimeError("the app has no /ask endpoint")
        self.fn_index = int(ask["id"])
        self.backend, self.k = backend, k

    def ask(self, question: str, timeout: float) -> tuple[str, Any]:
        from gradio_client.utils import apply_diff

        session = uuid.uuid4().hex[:11]
        body = {
            # question, backend, k, UI language, conversation (a State: the server keeps it per session)
            "data": [question, self.backend, self.k, "en", None],
            "fn_index": self.fn_index,
            "session_hash": session,
            "event_data": None,
            "trigger_id": None,
        }
        self.http.post("gradio_api/queue/join", json=body, timeout=timeout).raise_for_status()
        outputs: list[Any] | None = None
        deadline = time.monotonic() + timeout
        with self.http.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if time.monotonic() > deadline:
                    raise TimeoutError("no answer before the time limit")
                if not line.startswith("data:"):
                    continue
                msg = json.loads(line[5:])
                data = (msg.get("output") or {}).get("data")
                if msg.get("msg") == "process_generating" and data is not None:
                    # The first update is whole; the later ones are diffs against it.
                    outputs = (
                        data if outputs is None else [apply_diff(o, d) for o, d in zip(outputs, data, strict=True)]
                    )
                elif msg.get("msg") == "process_completed":
                    if not msg.get("success", False):
                        raise RuntimeError(f"the event failed: {msg.get('output')}")
                    return session, outputs if outputs is not None else data
                elif msg.get("msg") in ("unexpected_error", "server_stopped"):
                    raise RuntimeError(str(msg))
        raise RuntimeError("the event stream ended before the event completed")

    def close(self) -> None:
        self.http.close()


CLIENTS: dict[str, Callable[[str, str, int], Asker]] = {"http": HttpAsker, "gradio": GradioAsker}


def client_worker(
    make: Callable[[], Asker],
    index: int,
    questions: list[str],
    count: int,
    deadline: float,
    start: threading.Barrier,
    results: Results,
) -> None:
    """One client: connect, wait for the others, then ask ``count`` questions one after another."""
    try:
        asker = make()
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
            submitted, t0 = time.time(), time.perf_counter()
            try:
                session, outputs = asker.ask(question, remaining)
                text = assistant_text(outputs)
            except Exception as exc:
                results.error(f"client {index} q{j + 1}: {type(exc).__name__}: {exc}")
                continue
            elapsed = (time.perf_counter() - t0) * 1000
            if text.lstrip().startswith(ERROR_PREFIX) or not text.strip():
                results.error(f"client {index} q{j + 1}: app error: {text.strip()[:200]}")
            else:
                results.ok(Sample(session, submitted, elapsed), "does not support an answer" in text)
    except threading.BrokenBarrierError:
        results.error(f"client {index}: start barrier broken (limit reached while connecting)")
    finally:
        with contextlib.suppress(Exception):
            asker.close()
