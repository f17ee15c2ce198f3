"""app.web.http_api on the real server (app.web.server): the health probe and the feedback API, without a login.

Each test serves the whole app (FastAPI + the mounted Gradio UI) on a free loopback port over the fixture
corpus's index, in this process, and talks to it with httpx. Logins: tests/app/web/test_access.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
from ports import free_port

from app.web.feedback import MAX_COMMENT_CHARS
from app.web.server import create_server, running
from core.settings import Settings

RATING = {"message_id": "m-1", "question": "How often do minor releases ship?", "answer": "Three times a year [1].",
          "rating": "up", "comment": "  clear  ", "language": "en",
          "citations": [{"n": 1, "doc_id": "release-en", "chunk_id": "release-en#0", "title": "Releases"}]}  # fmt: skip


def wait_healthy(url: str, timeout: float = 120) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        resp = httpx.get(f"{url}healthz", timeout=10)
        if resp.status_code == 200 or time.monotonic() > deadline:
            return resp
        time.sleep(0.2)


@pytest.fixture
def served(indexed: Settings) -> Iterator[str]:
    with running(create_server(indexed), indexed, free_port()) as url:
        yield url


def test_health_is_200_with_the_generation_once_ready(served: str, indexed: Settings) -> None:
    resp = wait_healthy(served)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["status"] == "ok" and body["generation"] and body["documents"] == 2
    assert body["answer_workers"] == 0 and body["answering"] == "in-process"
    assert httpx.get(served).status_code == 200  # the UI is still served at /


def test_health_is_503_with_the_reason_without_an_index(settings: Settings) -> None:
    with running(create_server(settings), settings, free_port()) as url:
        deadline = time.monotonic() + 60
        while (resp := httpx.get(f"{url}healthz")).json()["reason"].startswith("starting"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert resp.status_code == 503
        assert resp.json()["status"] == "unavailable" and "ingest" in resp.json()["reason"]


def test_post_stores_one_record_per_message_and_get_exports_json_lines(served: str) -> None:
    resp = httpx.post(f"{served}api/feedback", json=RATING)
    assert resp.status_code == 201, resp.text
    stored = resp.json()
    assert stored["message_id"] == "m-1" and stored["rating"] == "up" and stored["comment"] == "clear"
    assert stored["timestamp"].endswith("Z") and stored["citations"][0]["doc_id"] == "release-en"
    assert httpx.post(f"{served}api/feedback", json={**RATING, "rating": "down"}).status_code == 201
    assert httpx.post(f"{served}api/feedback", json={**RATING, "message_id": "m-2"}).status_code == 201
    export = httpx.get(f"{served}api/feedback")
    assert export.status_code == 200 and export.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in export.text.splitlines()]
    assert sorted((r["message_id"], r["rating"]) for r in lines) == [("m-1", "down"), ("m-2", "up")]


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        ({"rating": "meh"}, 422, "rating: Input should be 'up' or 'down'"),
        ({"comment": "x" * (MAX_COMMENT_CHARS + 1)}, 422, f"comment: String should have at most {MAX_COMMENT_CHARS}"),
        ({"question": None}, 422, "question: required"),
        ({"message_id": ""}, 422, "message_id: String should have at least 1 character"),
        ({"colour": "blue"}, 422, "colour: unknown field"),
    ],
)
def test_bad_input_is_a_4xx_with_a_message_and_stores_nothing(
    served: str, change: dict[str, object], status: int, message: str
) -> None:
    body = {k: v for k, v in {**RATING, **change}.items() if v is not None}
    resp = httpx.post(f"{served}api/feedback", json=body)
    assert resp.status_code == status and message in resp.json()["error"], resp.text
    assert httpx.get(f"{served}api/feedback").text == ""


def test_a_body_that_is_not_a_json_object_is_400(served: str) -> None:
    for content in (b"rating=up", b"[1, 2]"):
        resp = httpx.post(f"{served}api/feedback", content=content, headers={"content-type": "application/json"})
        assert resp.status_code == 400 and "JSON object" in resp.json()["error"]
    assert httpx.get(f"{served}api/feedback").text == ""
