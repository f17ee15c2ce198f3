"""Several app replicas: two `app` processes sharing one real Chroma server and one feedback database.

Each test ingests the fixture corpus into its own collection on the Chroma server (`.ci/run` starts one; else
the session fixture of tests/ingest/test_server_mode.py does), starts two `app` processes on free loopback
ports, checks both answer the same question the same way, posts 200 ratings alternately to the two from 8
clients, checks each replica lists all 200 exactly once, then kills one (SIGKILL) and checks the other stays
healthy and still takes ratings. Once with SQLite in one shared data folder, once with a real PostgreSQL
started from Debian's packages (tests/support/postgres.py): skipped when it is not installed, failed in CI.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from app_process import AppProcess
from fakes import FakeEmbeddings
from gradio_client import Client
from ports import free_port
from postgres import PostgresServer

from core.settings import Settings
from ingest.indexer import run_ingest
from tests.ingest.test_server_mode import chroma_server, drop_collections, unique_collection

__all__ = ["chroma_server"]  # the session fixture, used here by name

pytestmark = pytest.mark.server

RATINGS = 200
CLIENTS = 8
QUESTION = "How often do minor releases ship?"


@pytest.fixture
def replica_settings(settings: Settings, chroma_server: tuple[str, int]) -> Iterator[Settings]:
    host, port = chroma_server
    configured = settings.with_(
        chroma_host=host, chroma_port=port, collection=unique_collection(),
        embedding_backend="fakes:FakeEmbeddings", answer_workers=0,
    )  # fmt: skip
    run_ingest(configured, FakeEmbeddings())
    yield configured
    drop_collections(host, port, configured.index.collection)


def _rating(i: int) -> dict[str, object]:
    return {"message_id": f"msg-{i:03d}", "question": f"question {i}", "answer": f"answer {i} [1]",
            "rating": "up" if i % 3 else "down", "comment": f"comment {i}"}  # fmt: skip


def _post_all(replicas: list[AppProcess]) -> list[int]:
    """200 ratings from 8 clients, each rating to the next replica in turn; their status codes."""

    def client(n: int) -> list[int]:
        with httpx.Client(timeout=30) as http:
            return [
                http.post(f"{replicas[i % 2].url}api/feedback", json=_rating(i)).status_code
                for i in range(n, RATINGS, CLIENTS)
            ]

    with ThreadPoolExecutor(CLIENTS) as pool:
        return [code for codes in pool.map(client, range(CLIENTS)) for code in codes]


def _listed(replica: AppProcess) -> list[str]:
    resp = httpx.get(f"{replica.url}api/feedback", timeout=30)
    assert resp.status_code == 200
    return [json.loads(line)["message_id"] for line in resp.text.splitlines()]


def _answer(replica: AppProcess) -> str:
    client = Client(replica.url, verbose=False)
    _, chat, _, _ = client.predict(QUESTION, "extractive", 5, "en", api_name="/ask")
    text = "".join(part["text"] for part in chat[-1]["content"] if part.get("type") == "text")
    return re.sub(r"· [^<·]*</sub>", "· …</sub>", text)  # the answer, without how long it took (ms or s)


def run_replicas(settings: Settings, folder: Path) -> None:
    replicas = [AppProcess(settings, free_port(), folder / f"replica-{n}") for n in range(2)]
    try:
        health = [r.wait_healthy() for r in replicas]
        assert health[0]["generation"] == health[1]["generation"] and health[0]["documents"] == 2
        first, second = (_answer(r) for r in replicas)
        assert "three times a year" in first and first == second  # one index, the same answers

        codes = _post_all(replicas)
        assert codes == [201] * RATINGS
        expected = sorted(f"msg-{i:03d}" for i in range(RATINGS))
        for replica in replicas:
            listed = _listed(replica)
            assert sorted(listed) == expected and len(set(listed)) == RATINGS  # all of them, each once

        replicas[0].kill()
        survivor = replicas[1]
        health_after = httpx.get(f"{survivor.url}healthz", timeout=10)
        assert health_after.status_code == 200 and health_after.json()["status"] == "ok"
        assert httpx.post(f"{survivor.url}api/feedback", json=_rating(RATINGS)).status_code == 201
        assert len(_listed(survivor)) == RATINGS + 1
    finally:
        for replica in replicas:
            replica.stop()


def test_two_replicas_share_one_sqlite_data_folder(replica_settings: Settings, tmp_path: Path) -> None:
    run_replicas(replica_settings, tmp_path)
    assert (replica_settings.web.data_dir / "advisor.db").exists()


def test_two_replicas_share_one_postgresql_database(
    replica_settings: Settings, postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.create_database(f"advisor_{uuid.uuid4().hex[:8]}")
    # Separate data folders: nothing is shared but the Chroma server and the database, as on two machines.
    run_replicas(replica_settings.with_(database_url=url, data_dir=tmp_path / "own-data"), tmp_path)
    assert not (tmp_path / "own-data" / "advisor.db").exists()
