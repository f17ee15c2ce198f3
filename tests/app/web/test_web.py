"""app.web.ui against a launched app: gradio_client questions, re-ingest pick-up, errors, files, auth.

Each test launches the real Gradio server on a free loopback port over a fake-embedder index built
from the fixture corpus, and talks to it the way a client would.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_openai_server import FakeLLMServer
from fakes import FakeEmbeddings
from gradio_client import Client
from ports import free_port

from app.web import main as web
from app.web.ui import build_app, launch_options
from core.settings import Settings
from ingest.indexer import run_ingest

JA_QUESTION = "AlphaはGPUを何%まで使い切りましたか？"
EN_QUESTION = "How often do minor releases ship?"
NEW_DOC = """---
id: "queue-en"
title: "Queue Notes"
url: "https://example.test/queue-en"
language: "en"
license: "CC0-1.0"
completeness: "full"
---

# Queue Notes

## Limits

The zebra queue accepts at most forty-two pending jobs per tenant before it rejects new submissions.
"""


@contextlib.contextmanager
def launched(settings: Settings, **overrides: Any) -> Iterator[str]:
    demo = build_app(settings)
    options = {**launch_options(settings), "server_port": free_port(), "prevent_thread_lock": True, "quiet": True}
    options.update(overrides)
    _, url, _ = demo.launch(**options)
    try:
        yield url
    finally:
        demo.close()


def ask(client: Client, question: str, backend: str = "extractive", k: int = 5, lang: str = "en") -> tuple[str, str]:
    """(rendered assistant message, passages panel) of the final answer."""
    _, chat, passages, _ = client.predict(question, backend, k, lang, api_name="/ask")
    assert chat[-1]["role"] == "assistant"
    return "".join(part["text"] for part in chat[-1]["content"] if part.get("type") == "text"), passages


def client_for(url: str, **kw: Any) -> Client:
    return Client(url, verbose=False, **kw)


def test_japanese_and_english_questions_answer_with_citations(indexed: Settings) -> None:
    with launched(indexed) as url:
        client = client_for(url)
        ja, ja_passages = ask(client, JA_QUESTION)
        assert "92%" in ja
        assert '<sup class="cite"><a href="#src-' in ja and "ジョブスケジューラ比較メモ" in ja
        assert "<details><summary>" in ja and "https://example.test/scheduler-ja#:~:text=" in ja  # a deep link
        assert "relevance" in ja_passages and "ジョブスケジューラ比較メモ" in ja_passages
        assert "&#96;" not in ja_passages
        en, _ = ask(client, EN_QUESTION)
        assert "three times a year" in en and '<sup class="cite">' in en and "Gateway Operations Guide" in en
        status = client.predict(api_name="/status")
        assert "**2** documents" in status and "fake:128" in status


def test_reingested_index_is_picked_up_without_restart(indexed: Settings) -> None:
    with launched(indexed) as url:
        client = client_for(url)
        assert "**2** documents" in client.predict(api_name="/status")
        (indexed.index.corpus_dir / "queue-en.md").write_text(NEW_DOC, encoding="utf-8")
        run_ingest(indexed, FakeEmbeddings())
        assert "**3** documents" in client.predict(api_name="/status")
        # The retriever re-reads the index pointer every few seconds; the new document must show up in
        # the searched passages within that delay (whether the answerer quotes it is its own business).
        deadline = time.monotonic() + 15
        passages = ""
        while "Queue Notes" not in passages and time.monotonic() < deadline:
            _, passages = ask(client, "How many pending jobs does the zebra queue accept per tenant?")
            time.sleep(0.5)
        assert "Queue Notes" in passages


def test_missing_index_says_run_ingest_then_recovers(settings: Settings) -> None:
    with launched(settings) as url:
        client = client_for(url)
        status = client.predict(api_name="/status")
        deadline = time.monotonic() + 20
        while "Loading" in status and time.monotonic() < deadline:
            time.sleep(0.2)
            status = client.predict(api_name="/status")
        assert "run `ingest`" in status
        answer, _ = ask(client, EN_QUESTION)
        assert "run `ingest`" in answer and "unavailable" in answer
        run_ingest(settings, FakeEmbeddings())
        answer, _ = ask(client, EN_QUESTION)
        assert "three times a year" in answer
        assert "**2** documents" in client.predict(api_name="/status")


def test_overlong_question_gets_friendly_message_with_limit(indexed: Settings) -> None:
    limit = indexed.answer.max_question_chars
    with launched(indexed) as url:
        client = client_for(url)
        answer, _ = ask(client, "x" * (limit + 1))
        assert "⚠️" in answer and f"{limit:,}" in answer and "Sources" not in answer
        # A blank question changes nothing (no empty bubble, no error).
        assert all(
            out == {"__type__": "update"} for out in client.predict("  ", "extractive", 5, "en", api_name="/ask")
        )


def test_llm_backend_streams_partial_answers(indexed: Settings) -> None:
    chunks = ["Alpha used GPUs ", "up to 92% ", "of capacity [1]."]
    with FakeLLMServer(chunks=chunks) as server:
        settings = indexed.with_(openai_base_url=server.openai_url)
        with launched(settings) as url:
            job = client_for(url).submit(JA_QUESTION, "openai", 3, "en", api_name="/ask")
            job.result(timeout=60)
            texts = ["".join(p["text"] for p in out[1][-1]["content"]) for out in job.outputs()]
    assert any("Alpha used GPUs" in t and "92%" not in t for t in texts), texts  # a partial arrived first
    assert "92%" in texts[-1] and '<sup class="cite">' in texts[-1]


def test_questionnaire_returns_the_advisors_recommendation(indexed: Settings) -> None:
    with launched(indexed) as url:
        # One value per facet, in core/facets.toml's order: deployment, fleet, workload, one_platform, …
        md = client_for(url).predict(
            "en", "on_prem", "unset", "training", "unset", "unset", "unset", "unset", api_name="/recommend"
        )
    assert "Recommendation" in md and 'class="verdict' in md and 'class="verdict-line"' in md
    # One line per answered facet, in the UI language and its human labels.
    assert "<b>Where it runs:</b> on-prem" in md and "<b>Workload:</b> training only" in md
    assert "<b>GPU fleet:</b>" not in md and "on_prem" not in md.replace("#q-", "")


def test_llm_backend_without_server_answers_extractively_with_a_plain_notice(indexed: Settings) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    settings = indexed.with_(openai_base_url=dead)
    with launched(settings) as url:
        answer, _ = ask(client_for(url), EN_QUESTION, backend="openai")
    assert "The language model is not available right now" in answer and "three times a year" in answer
    assert dead not in answer and "LLMUnavailable" not in answer and "ADVISOR_" not in answer


def test_answer_framing_follows_the_question_and_status_the_ui_language(indexed: Settings) -> None:
    with launched(indexed) as url:
        client = client_for(url)
        ja, _ = ask(client, JA_QUESTION, lang="en")
        en, _ = ask(client, EN_QUESTION, lang="ja")
        assert "**出典**" in ja and "Sources" not in ja  # a Japanese question, framed in Japanese
        assert "**Sources**" in en and "出典" not in en
        assert "文書" in client.predict("ja", api_name="/status")
        assert "documents" in client.predict("en", api_name="/status")


TRAVERSALS = [
    "file=/etc/passwd",
    "gradio_api/file=/etc/passwd",
    "gradio_api/file=../../../../../../etc/passwd",
    "gradio_api/file=%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "gradio_api/file=%2Fetc%2Fpasswd",
    "static/../../../../etc/passwd",
    "assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
]


def test_files_outside_the_ui_are_refused(indexed: Settings) -> None:
    with launched(indexed) as url:
        client = client_for(url)
        ask(client, EN_QUESTION)
        indexed.web.feedback_path.parent.mkdir(parents=True, exist_ok=True)
        indexed.web.feedback_path.write_text('{"secret": "feedback"}\n', encoding="utf-8")
        sqlite = next(indexed.index.index_dir.rglob("*.sqlite3"))
        with httpx.Client() as http:
            for path in TRAVERSALS:
                # Raw paths: no client-side normalisation of "..", as an attacker would send them.
                resp = http.send(http.build_request("GET", url + path))
                assert resp.status_code >= 400 and "root:x:" not in resp.text, (path, resp.status_code)
            # The app's own data (feedback, index) is not reachable either.
            for target in (indexed.web.feedback_path, sqlite, Path(__file__).resolve()):
                resp = http.get(f"{url}gradio_api/file={target}")
                assert resp.status_code in (400, 403, 404), (target, resp.status_code)
                assert "secret" not in resp.text
            assert http.get(f"{url}monitoring").status_code >= 400  # no monitoring dashboard
            assert http.get(f"{url}gradio_api/runs").status_code >= 400  # no run history page
            assert http.get(url).status_code == 200  # the UI itself is served


def test_launch_options_are_safe_by_default(settings: Settings) -> None:
    options = launch_options(settings)
    assert options["server_name"] == "127.0.0.1" and options["share"] is False and "auth" not in options
    assert "allowed_paths" not in options and options["run_history"] is False
    demo = build_app(settings)
    assert demo.analytics_enabled is False
    assert demo._queue.max_size == settings.web.concurrency * 16  # bounded queue...
    assert demo._queue.default_concurrency_limit == settings.web.concurrency  # ...running `concurrency` at once
    # Questions skip Gradio's limits: the handler awaits the answering, which bounds what may wait.
    ask_fn = next(fn for fn in demo.fns.values() if fn.api_name == "ask")
    assert ask_fn.concurrency_limit is None and settings.web.max_pending == 64
    assert os.environ.get("GRADIO_ANALYTICS_ENABLED") == "False"


@pytest.mark.server
def test_unreachable_chroma_server_is_reported_and_recovers(settings: Settings, tmp_path: Path) -> None:
    chroma = Path(sys.executable).parent / "chroma"
    assert chroma.exists(), "the chroma CLI comes with chromadb"
    port = free_port()
    server_settings = settings.with_(chroma_host="127.0.0.1", chroma_port=port)
    with launched(server_settings) as url:
        client = client_for(url)
        answer, _ = ask(client, EN_QUESTION)
        assert "unreachable" in answer.lower() and "Chroma" in answer
        proc = subprocess.Popen(
            [str(chroma), "run", "--path", str(tmp_path / "chroma"), "--host", "127.0.0.1", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).status_code == 200:
                        break
                time.sleep(0.2)
            run_ingest(server_settings, FakeEmbeddings())
            answer, _ = ask(client, EN_QUESTION)
            assert "three times a year" in answer
            assert "**2** documents" in client.predict(api_name="/status")
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def test_main_only_parses_flags_and_serves(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from app.web import server

    served: list[Settings] = []
    monkeypatch.setattr(server, "serve", served.append)
    monkeypatch.delenv("ADVISOR_USERS_FILE", raising=False)
    users = tmp_path / "users"
    assert web.main(["--host", "127.0.0.2", "--port", "7999", "--users", str(users)]) == 0
    assert (served[0].web.host, served[0].web.port, served[0].web.users_file) == ("127.0.0.2", 7999, users)
    with pytest.raises(SystemExit):
        web.main(["--auth", "bob:pw"])  # a password on the command line is no longer accepted
    with pytest.raises(SystemExit):
        web.main(["--port", "70000"])
