"""Chroma server mode end to end: ingest and answer through a real `chroma run` server on loopback.

`.ci/run` starts one server and exports ADVISOR_TEST_CHROMA_HOST/ADVISOR_TEST_CHROMA_PORT; without
them the session fixture starts its own and stops it afterwards. Every test uses its own collection
name, so tests never see each other's data on a shared server. The core retrieval and answer tests
run in both modes (embedded PersistentClient and server). The fault test starts a private server,
kills it during queries and restarts it on the same port and data folder.

Deliberately left out: the UI's view of a server outage (tests/test_web.py) and an embedded index
folder that is deleted or corrupted (tests/test_ingest_faults.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import chromadb
import httpx
import numpy as np
import pytest
from chromadb.config import Settings as ChromaSettings
from fakes import FakeEmbeddings
from ports import free_port

from app.cli import main as ask_main
from app.models import Answer
from app.pipeline import Advisor
from core.settings import Settings
from ingest.embed_cache import ServerVectors, checksum
from ingest.indexer import run_ingest
from ingest.store import IndexUnavailable, Store

pytestmark = pytest.mark.server

CHROMA = Path(sys.executable).parent / "chroma"
JA_QUESTION = "Alphaの管理ノードは何台必要？"
EN_QUESTION = "How much memory does the gateway control plane need?"
OFF_TOPIC = "What is a good recipe for sourdough bread?"


class ChromaServer:
    """A `chroma run` child process on loopback that can be killed and restarted on the same port/path."""

    def __init__(self, path: Path, port: int | None = None) -> None:
        self.path = path
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        assert CHROMA.exists(), "the chroma CLI comes with chromadb"
        self.proc = subprocess.Popen(
            [str(CHROMA), "run", "--path", str(self.path), "--host", self.host, "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.proc.returncode} (port {self.port} taken?)")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma run did not answer its heartbeat on port {self.port} within {timeout:.0f}s")

    def kill(self) -> None:
        """SIGKILL: no shutdown handshake, like a crashed or OOM-killed server."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=20)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """(host, port) of a running Chroma server: the CI one if exported, else one started here."""
    host = os.environ.get("ADVISOR_TEST_CHROMA_HOST")
    if host:
        yield host, int(os.environ.get("ADVISOR_TEST_CHROMA_PORT", "8000"))
        return
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server"))
    server.start()
    try:
        yield server.host, server.port
    finally:
        server.stop()


def unique_collection() -> str:
    # Chroma names: 3-512 of [a-zA-Z0-9._-], starting and ending with an alphanumeric.
    return f"t{uuid.uuid4().hex[:16]}"


def http_client(host: str, port: int) -> chromadb.api.ClientAPI:
    return chromadb.HttpClient(host=host, port=port, settings=ChromaSettings(anonymized_telemetry=False))


def drop_collections(host: str, port: int, prefix: str) -> None:
    """Leave a shared server as we found it (our pointer, every generation and the embedding cache)."""
    with contextlib.suppress(Exception):
        client = http_client(host, port)
        for col in client.list_collections():
            if col.name == prefix or col.name.startswith(f"{prefix}-"):
                client.delete_collection(col.name)


@pytest.fixture
def server_settings(settings: Settings, chroma_server: tuple[str, int]) -> Iterator[Settings]:
    host, port = chroma_server
    configured = settings.with_(chroma_host=host, chroma_port=port, collection=unique_collection())
    yield configured
    drop_collections(host, port, configured.index.collection)


@pytest.fixture(params=["embedded", "server"])
def mode_settings(request: pytest.FixtureRequest, settings: Settings) -> Settings:
    if request.param == "embedded":
        return settings
    configured: Settings = request.getfixturevalue("server_settings")
    return configured


@pytest.fixture
def advisor(mode_settings: Settings) -> Advisor:
    embeddings = FakeEmbeddings()
    run_ingest(mode_settings, embeddings)
    return Advisor(mode_settings, embeddings)


def assert_cited_from(answer: Answer, doc_id: str, fact: str) -> None:
    assert not answer.refused, answer.answer
    assert fact in answer.answer
    assert answer.citations and answer.citations[0].doc_id == doc_id
    assert "[1]" in answer.answer
    by_id = {p.chunk_id: p for p in answer.passages}
    for citation in answer.citations:  # every quote is the text of the passage it cites (up to whitespace)
        assert citation.quote.strip()
        for line in citation.quote.splitlines():
            assert " ".join(line.split()) in " ".join(by_id[citation.chunk_id].text.split())


# --- ingest through the server ---------------------------------------------------------------------


def test_ingest_goes_to_the_server_not_to_a_local_folder(server_settings: Settings) -> None:
    embeddings = FakeEmbeddings()
    report = run_ingest(server_settings, embeddings)
    assert (report.docs_added, report.docs_updated, report.docs_deleted) == (2, 0, 0)
    assert report.chunks_total == report.embedded == embeddings.calls - report.units_embedded > 0
    assert not server_settings.index.index_dir.exists()  # nothing was written to the embedded folder
    # A separate client sees the pointer and the generation it names on the server.
    assert server_settings.index.chroma_host is not None
    client = http_client(server_settings.index.chroma_host, server_settings.index.chroma_port)
    names = {c.name for c in client.list_collections()}
    assert {server_settings.index.collection, report.generation} <= names
    pointer = client.get_collection(server_settings.index.collection)
    assert (pointer.metadata or {})["current"] == report.generation
    assert client.get_collection(report.generation).count() == report.chunks_total
    info = Store.open(server_settings).info()
    assert info is not None and (info.documents, info.chunks) == (2, report.chunks_total)


def test_incremental_reingest_through_the_server(server_settings: Settings) -> None:
    embeddings = FakeEmbeddings()
    first = run_ingest(server_settings, embeddings)
    calls = embeddings.calls

    again = run_ingest(server_settings, embeddings)
    assert again.embedded == 0 and embeddings.calls == calls
    assert (again.docs_unchanged, again.generation) == (2, first.generation)

    doc = server_settings.index.corpus_dir / "gateway-en.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("512 MB", "4096 MB"), encoding="utf-8")
    changed = run_ingest(server_settings, embeddings)
    assert (changed.docs_updated, changed.docs_unchanged) == (1, 1)
    gen = Store.open(server_settings).current()
    assert gen is not None and gen.name == changed.generation != first.generation
    chunks, _ = gen.all_chunks()
    gateway = [c for c in chunks if c.doc_id == "gateway-en"]
    rewritten = [c for c in gateway if "4096 MB" in c.text]
    # only the changed document is chunked again, and only its changed chunk is embedded (the rest: cache)
    assert changed.embedded == len(rewritten) == embeddings.calls - calls - changed.units_embedded == 1
    assert changed.cache_hits == len(gateway) - 1
    assert changed.chunks_total == len(chunks) == first.chunks_total
    assert "4096 MB" in Advisor(server_settings, embeddings).ask(EN_QUESTION).answer


def test_moving_an_embedded_index_to_a_server_re_embeds_nothing(settings: Settings, server_settings: Settings) -> None:
    embeddings = FakeEmbeddings()
    local = run_ingest(settings, embeddings)
    folder = settings.index.index_dir
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    moved = run_ingest(server_settings, embeddings)  # same corpus and index folder, a Chroma host set
    assert (moved.embedded, moved.cache_hits, moved.units_embedded) == (0, local.chunks_total, 0)
    assert embeddings.calls == local.chunks_total + local.units_embedded  # the local ingest's, none after
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before  # the folder is read, never written
    # The server now holds the vectors itself: without the folder, a rebuild still embeds nothing.
    shutil.rmtree(folder)
    again = run_ingest(server_settings, embeddings, rebuild=True)
    assert (again.embedded, again.cache_hits, again.units_embedded) == (0, local.chunks_total, 0)
    assert embeddings.calls == local.chunks_total + local.units_embedded
    assert not folder.exists()
    assert server_settings.index.chroma_host is not None
    names = {c.name for c in http_client(server_settings.index.chroma_host, server_settings.index.chroma_port)
             .list_collections()}  # fmt: skip
    assert any(n.startswith(f"{server_settings.index.collection}-cache-") for n in names)


def test_the_server_cache_drops_bad_entries_and_stays_bounded(
    server_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = Store.open(server_settings).keyed_vectors("cache-test")
    cache = ServerVectors(table)
    clock = iter(range(100))
    monkeypatch.setattr("ingest.embed_cache.time.time", lambda: float(next(clock)))
    good = np.arange(1, 5, dtype=np.float32)
    for key in "abcd":
        cache.put({key: good})
    # a vector that is not the one its checksum was made from: a torn or tampered entry
    table.put(["d"], [good + 1], [{"checksum": checksum("d", good), "used": 9.0}])
    got = cache.get(["a", "d", "missing"])
    assert set(got) == {"a"} and got["a"].tolist() == good.tolist()
    assert table.count() == 3  # the bad entry was dropped
    assert cache.shrink(2, keep={"c"}) == 1  # a was just used and c is kept: b, the oldest other, goes
    assert set(cache.get(list("abc"))) == {"a", "c"}


# --- the core answer tests, embedded and server ------------------------------------------------------


def test_japanese_question_gets_cited_answer(advisor: Advisor) -> None:
    answer = advisor.ask(JA_QUESTION)
    assert answer.language == "ja"
    assert_cited_from(answer, "scheduler-ja", "1 台")


def test_english_question_gets_cited_answer(advisor: Advisor) -> None:
    answer = advisor.ask(EN_QUESTION)
    assert_cited_from(answer, "gateway-en", "512 MB")
    assert answer.citations[0].section == "Installing"


def test_out_of_scope_question_is_refused(advisor: Advisor) -> None:
    answer = advisor.ask(OFF_TOPIC)
    assert answer.refused and answer.citations == []


def test_dense_retrieval_ranks_the_right_document_first(advisor: Advisor) -> None:
    assert advisor.retrieve("Minor releases ship three times a year", 3, mode="dense")[0].doc_id == "gateway-en"
    assert advisor.retrieve("管理ノード 更新頻度 Alpha Beta", 3, mode="dense")[0].doc_id == "scheduler-ja"


def test_embedded_and_server_return_the_same_ranking(settings: Settings, server_settings: Settings) -> None:
    embeddings = FakeEmbeddings()
    run_ingest(settings, embeddings)
    run_ingest(server_settings, embeddings)
    local, remote = Advisor(settings, embeddings), Advisor(server_settings, embeddings)
    for question in (JA_QUESTION, EN_QUESTION, "gatewayctl restart logs"):
        ours = [(p.chunk_id, round(p.score, 4)) for p in local.retrieve(question, 5)]
        theirs = [(p.chunk_id, round(p.score, 4)) for p in remote.retrieve(question, 5)]
        assert ours == theirs, question


# --- the server dies during queries and comes back ----------------------------------------------------


def ask_cli(monkeypatch: pytest.MonkeyPatch, settings: Settings, question: str) -> int:
    monkeypatch.chdir(settings.index.corpus_dir)  # no developer .env in the working directory
    monkeypatch.setenv("ADVISOR_CHROMA_HOST", str(settings.index.chroma_host))
    monkeypatch.setenv("ADVISOR_CHROMA_PORT", str(settings.index.chroma_port))
    monkeypatch.setenv("ADVISOR_EMBEDDING_BACKEND", "fake")
    monkeypatch.setenv("ADVISOR_COLLECTION", settings.index.collection)
    return ask_main([question])


def test_server_killed_during_queries_gives_clean_errors_and_recovers(
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = ChromaServer(tmp_path / "private-chroma")
    server.start()
    try:
        configured = settings.with_(chroma_host=server.host, chroma_port=server.port, collection=unique_collection())
        embeddings = FakeEmbeddings()
        run_ingest(configured, embeddings)
        advisor = Advisor(configured, embeddings)
        assert "512 MB" in advisor.ask(EN_QUESTION).answer

        # Questions keep coming from another thread while the server is killed under them: each one
        # either answers or fails with IndexUnavailable, never with a raw client or HTTP error.
        outcomes: list[str] = []
        unexpected: list[BaseException] = []
        stop = threading.Event()

        def keep_asking() -> None:
            while not stop.is_set():
                try:
                    advisor.ask(EN_QUESTION if len(outcomes) % 2 else JA_QUESTION)
                    outcomes.append("answer")
                except IndexUnavailable:
                    outcomes.append("unavailable")
                except BaseException as exc:
                    unexpected.append(exc)
                    return
                time.sleep(0.01)

        worker = threading.Thread(target=keep_asking, daemon=True)
        worker.start()
        deadline = time.monotonic() + 20
        while outcomes.count("answer") < 5 and time.monotonic() < deadline and not unexpected:
            time.sleep(0.02)
        server.kill()
        while outcomes.count("unavailable") < 5 and time.monotonic() < deadline and not unexpected:
            time.sleep(0.02)
        stop.set()
        worker.join(timeout=20)
        assert not unexpected, repr(unexpected)
        assert outcomes.count("answer") >= 5 and outcomes.count("unavailable") >= 5, outcomes
        assert "answer" not in outcomes[outcomes.index("unavailable") :]  # the server stays dead

        # Both paths say what is wrong: a cached index being searched, and a fresh pointer read.
        for ttl in (60.0, 0.0):
            advisor.retriever.pointer_ttl_s = ttl
            with pytest.raises(IndexUnavailable, match=r"Chroma server") as caught:
                advisor.ask(EN_QUESTION)
            assert "\n" not in str(caught.value).strip()

        assert ask_cli(monkeypatch, configured, EN_QUESTION) == 1
        captured = capsys.readouterr()
        err = captured.err.strip()
        assert captured.out == ""
        assert err.startswith("ask: ") and "\n" not in err, err
        assert "Chroma server" in err and f"{server.port}" in err and "Traceback" not in err

        server.start()  # same port, same data folder
        advisor.retriever.pointer_ttl_s = 0.0
        answer = advisor.ask(EN_QUESTION)  # the same Advisor, no restart
        assert "512 MB" in answer.answer and answer.citations[0].doc_id == "gateway-en"
        assert ask_cli(monkeypatch, configured, JA_QUESTION) == 0
        assert "1 台" in capsys.readouterr().out
    finally:
        server.stop()
