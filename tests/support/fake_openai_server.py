"""A tiny LLM server on loopback for tests: OpenAI-compatible and Ollama-compatible chat endpoints.

Serves canned completions so the real HTTP path (LangChain chat model → SDK → HTTP → our parsing) runs in
tests without a model:

- ``POST /v1/chat/completions`` — JSON when ``stream`` is false, Server-Sent Events otherwise
  (``data: {...}`` chunks carrying ``choices[0].delta.content``, then ``data: [DONE]``).
- ``POST /api/chat`` — Ollama's format: one JSON object when ``stream`` is false, NDJSON lines otherwise.

Every request body is recorded (``server.requests``) so tests can inspect the prompt. ``mode`` switches
to a 500 error (``"error"``) or to a server that accepts the request and never answers (``"hang"``).
``gate`` makes a stream pause after its first chunk until the test sets it, proving that text arrives
incrementally. ``reply`` (request body → text) replaces the canned chunks with an answer made per request,
as one chunk: the translation tests' word-swapping "translator". Deliberately left out: tools, embeddings,
authentication checks, keep-alive.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

Mode = Literal["ok", "error", "hang"]


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    def content(self, role: str) -> str:
        """All message text sent with ``role`` (system / user / assistant), joined."""
        return "\n".join(str(m.get("content", "")) for m in self.messages if m.get("role") == role)


@dataclass
class FakeLLMServer:
    """Start with ``with FakeLLMServer(chunks=[...]) as server:``; the completion is ``"".join(chunks)``."""

    chunks: list[str] = field(default_factory=lambda: ["Hello", " world."])
    mode: Mode = "ok"
    gate: threading.Event | None = None
    hang_s: float = 30.0
    reply: Callable[[dict[str, Any]], str] | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    finished_streams: int = 0
    _httpd: ThreadingHTTPServer | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def base_url(self) -> str:
        """Root URL (what Ollama clients take)."""
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI clients (ends in /v1)."""
        return self.base_url + "/v1"

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def start(self) -> FakeLLMServer:
        server = self

        class Handler(_Handler):
            fake = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # A short poll interval keeps shutdown() (and so each test's teardown) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases hanging handlers so nothing outlives the test
        if self.gate is not None:
            self.gate.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def wait_or_stop(self, seconds: float) -> None:
        self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer
    # HTTP/1.0: every response ends by closing the connection, so streams need no chunked encoding.
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def do_GET(self) -> None:
        """The servers' model lists: what the UI's health check asks for."""
        if self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        elif self.path == "/api/tags":
            self._json(200, {"models": [{"name": "fake"}]})
        else:
            self._json(404, {"error": f"no route {self.path}"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        body = json.loads(raw or b"{}")
        fake = self.fake
        fake.requests.append(RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body))

        if self.path not in ("/v1/chat/completions", "/api/chat"):
            self._json(404, {"error": f"no route {self.path}"})
            return
        if fake.mode == "hang":
            fake.wait_or_stop(fake.hang_s)
            return
        if fake.mode == "error":
            if self.path == "/api/chat":
                self._json(500, {"error": "fake server failure"})
            else:
                self._json(500, {"error": {"message": "fake server failure", "type": "server_error"}})
            return

        model = str(body.get("model", "fake"))
        streaming = bool(body.get("stream", False))
        chunks = [fake.reply(body)] if fake.reply is not None else fake.chunks
        if self.path == "/api/chat":
            if streaming:
                self._stream(_ollama_lines(model, chunks), "application/x-ndjson")
            else:
                self._json(200, _ollama_line(model, "".join(chunks), done=True))
        elif streaming:
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(_sse_events(model, chunks, usage), "text/event-stream")
        else:
            self._json(200, _completion(model, "".join(chunks)))

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, pieces: list[bytes], content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for i, piece in enumerate(pieces):
            self.wfile.write(piece)
            self.wfile.flush()
            if i == 0 and self.fake.gate is not None:
                self.fake.gate.wait(10)
        self.fake.finished_streams += 1


def _completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _sse_events(model: str, chunks: list[str], usage: bool) -> list[bytes]:
    def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        payload = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": choices,
            **extra,
        }
        return f"data: {json.dumps(payload)}\n\n".encode()

    events = [
        event([{"index": 0, "delta": {"role": "assistant", "content": c}, "finish_reason": None}]) for c in chunks
    ]
    events.append(event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    if usage:
        events.append(event([], usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}))
    events.append(b"data: [DONE]\n\n")
    return events


def _ollama_line(model: str, content: str, done: bool) -> dict[str, Any]:
    line: dict[str, Any] = {
        "model": model,
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": content},
        "done": done,
    }
    if done:
        line.update(done_reason="stop", total_duration=1000, prompt_eval_count=10, eval_count=5)
    return line


def _ollama_lines(model: str, chunks: list[str]) -> list[bytes]:
    lines = [_ollama_line(model, c, done=False) for c in chunks]
    lines.append(_ollama_line(model, "", done=True))
    return [(json.dumps(line) + "\n").encode() for line in lines]
