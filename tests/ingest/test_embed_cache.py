"""The embedding cache: a text is embedded once per embedder, and a torn or corrupted entry is never a vector.

A real embedded Chroma and the cache file in tmp_path, with the counting fake embedder: rebuilds,
chunker changes and embedder switches embed only texts the cache has not seen; the cache stays bounded
without dropping the live generation's entries; a corrupted entry, an unreadable file or a writer killed
mid-transaction never yields a wrong vector. Server mode is tested in test_server_mode.py.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fakes import FakeEmbeddings
from paths import PROJECT_ROOT

from core.contract import embed_text
from core.settings import Settings
from ingest import indexer
from ingest.chunking import RawChunk
from ingest.cli import main as ingest_main
from ingest.embed_cache import CACHE_FILE, EmbeddingCache, SqliteVectors, cache_key, checksum
from ingest.indexer import IngestReport, run_ingest
from ingest.store import Store, StoredChunk
from ingest.unit_vectors import unit_texts


def live_chunks(settings: Settings) -> list[tuple[StoredChunk, list[float]]]:
    gen = Store.open(settings).current()
    assert gen is not None
    return list(zip(*gen.all_chunks(with_embeddings=True), strict=True))


def cache_rows(settings: Settings) -> dict[str, tuple[bytes, str]]:
    with sqlite3.connect(settings.index.index_dir / CACHE_FILE) as db:
        return {k: (v, s) for k, v, s in db.execute("SELECT key, vector, checksum FROM vectors")}


def assert_vectors_are_fresh(settings: Settings) -> None:
    """Every stored vector is what the embedder gives for the chunk's text now (no wrong vector got in)."""
    fresh = FakeEmbeddings()
    for chunk, vector in live_chunks(settings):
        assert vector == pytest.approx(fresh.embed_documents([embed_text(chunk)])[0], abs=1e-6), chunk.id


@pytest.fixture
def ingested(settings: Settings) -> tuple[FakeEmbeddings, IngestReport]:
    embeddings = FakeEmbeddings()
    report = run_ingest(settings, embeddings)
    assert report.embedded == report.cache_misses == report.chunks_total > 4 and report.cache_hits == 0
    return embeddings, report


# --- what gets embedded ---------------------------------------------------------------------------------


def test_rebuild_of_an_unchanged_corpus_embeds_nothing(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    embeddings = FakeEmbeddings()
    monkeypatch.setattr("ingest.cli.settings_or_exit", lambda prog, overrides=None: settings)
    monkeypatch.setattr("ingest.cli.make_embeddings", lambda s: embeddings)
    assert ingest_main(["--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["embedded"] == first["cache_misses"] == first["chunks_total"] > 0
    assert embeddings.calls == first["embedded"] + first["units_embedded"]  # chunks, then their evidence units
    assert ingest_main(["--rebuild", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["embedded"], again["cache_hits"], again["cache_misses"]) == (0, first["chunks_total"], 0)
    assert again["units_embedded"] == 0 and embeddings.calls == first["chunks_total"] + first["units_embedded"]
    assert ingest_main(["--rebuild"]) == 0
    assert f"0 embedded (cache: {first['chunks_total']} hits, 0 misses)" in capsys.readouterr().out
    assert_vectors_are_fresh(settings)


def test_a_chunker_change_re_embeds_only_the_chunks_whose_text_changed(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport], monkeypatch: pytest.MonkeyPatch
) -> None:
    embeddings, first = ingested
    calls = embeddings.calls
    monkeypatch.setattr(indexer, "CHUNKER_VERSION", "test-chunker-2")  # a new version that cuts the same
    same = run_ingest(settings, embeddings)
    assert same.rebuilt and (same.embedded, same.cache_hits, embeddings.calls) == (0, first.chunks_total, calls)

    real = indexer.chunk_markdown

    def marks_tables(*args: Any, **kwargs: Any) -> list[RawChunk]:
        return [c if c.kind != "table" else RawChunk(c.section, c.text + "\n", c.kind) for c in real(*args, **kwargs)]

    monkeypatch.setattr(indexer, "chunk_markdown", marks_tables)
    monkeypatch.setattr(indexer, "CHUNKER_VERSION", "test-chunker-3")  # ...and one that cuts tables differently
    changed = run_ingest(settings, embeddings)
    tables = sum(1 for c, _ in live_chunks(settings) if c.kind == "table")
    assert 0 < tables < changed.chunks_total
    assert (changed.embedded, embeddings.calls - calls) == (tables, tables)
    assert (changed.cache_hits, changed.cache_misses) == (changed.chunks_total - tables, tables)
    assert_vectors_are_fresh(settings)


def test_an_embedder_switched_back_embeds_nothing(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    embeddings, first = ingested
    other = FakeEmbeddings(dim=64)
    assert run_ingest(settings, other).embedded == first.chunks_total  # another embedder: its own vectors
    back = run_ingest(settings, embeddings)
    assert back.rebuilt and (back.embedded, back.cache_hits) == (0, first.chunks_total)
    assert run_ingest(settings, other).embedded == 0


def test_an_interrupted_ingest_keeps_the_batches_it_embedded(settings: Settings) -> None:
    class Interrupted(FakeEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            if self.calls >= 2:
                raise KeyboardInterrupt
            return super().embed_documents(texts)

    small_batches = settings.with_(embedding_batch_size=2)
    with pytest.raises(KeyboardInterrupt):
        run_ingest(small_batches, Interrupted())
    assert Store.open(small_batches).current() is None  # nothing published
    report = run_ingest(small_batches, FakeEmbeddings())
    assert (report.cache_hits, report.embedded) == (2, report.chunks_total - 2)
    assert_vectors_are_fresh(small_batches)


def test_identical_texts_are_embedded_once(settings: Settings) -> None:
    cache = EmbeddingCache("fake:128", SqliteVectors(settings.index.index_dir / CACHE_FILE))
    embeddings = FakeEmbeddings()
    vectors, stats = cache.embed(["same", "other", "same"], embeddings, batch=8)
    assert (stats.hits, stats.misses, stats.embedded, embeddings.calls) == (0, 3, 2, 2)
    assert vectors[0] == vectors[2] != vectors[1]


# --- bounded ---------------------------------------------------------------------------------------------


def test_the_cache_is_bounded_but_keeps_the_live_generation(settings: Settings) -> None:
    path = settings.index.index_dir / CACHE_FILE
    embeddings = FakeEmbeddings()
    first = run_ingest(settings, embeddings, cache=EmbeddingCache(embeddings.spec, SqliteVectors(path), max_entries=3))
    assert len(cache_rows(settings)) == first.chunks_total + first.units > 3  # the live generation is never evicted
    doc = settings.index.corpus_dir / "gateway-en.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("512 MB", "640 MB"), encoding="utf-8")
    second = run_ingest(settings, embeddings, cache=EmbeddingCache(embeddings.spec, SqliteVectors(path), max_entries=3))
    assert second.embedded > 0
    chunks = [c for c, _ in live_chunks(settings)]
    live_keys = {cache_key(embeddings.spec, t) for t in [*map(embed_text, chunks), *unit_texts(chunks)]}
    assert set(cache_rows(settings)) == live_keys  # the replaced texts' entries went


def test_the_least_recently_used_entries_go_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter(range(100))
    monkeypatch.setattr("ingest.embed_cache.time.time", lambda: float(next(clock)))
    store = SqliteVectors(tmp_path / CACHE_FILE)
    for key in "abcd":
        store.put({key: np.ones(4, dtype=np.float32)})
    assert set(store.get(["a"])) == {"a"}  # a is used again: now the newest
    assert store.shrink(2, keep={"b"}) == 2
    assert set(store.get(list("abcd"))) == {"a", "b"}  # c and d were the oldest not kept


# --- crash safety ----------------------------------------------------------------------------------------


def test_a_corrupted_entry_is_a_miss_never_a_vector(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    embeddings, first = ingested
    rows = cache_rows(settings)
    flipped, cut = sorted(rows)[:2]
    blob = bytearray(rows[flipped][0])
    blob[5] ^= 0x40  # one bit of one float: still a well-formed vector, no longer the one written
    with sqlite3.connect(settings.index.index_dir / CACHE_FILE) as db:
        db.execute("UPDATE vectors SET vector = ? WHERE key = ?", (bytes(blob), flipped))
        db.execute("UPDATE vectors SET vector = ? WHERE key = ?", (rows[cut][0][:-6], cut))  # a torn write
    calls = embeddings.calls
    report = run_ingest(settings, embeddings, rebuild=True)
    assert report.embedded + report.units_embedded == embeddings.calls - calls == 2  # chunk or unit entries
    assert report.cache_hits == first.chunks_total - report.embedded
    assert_vectors_are_fresh(settings)
    assert cache_rows(settings)[flipped] == rows[flipped]  # replaced by the re-embedded vector


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_an_unreadable_cache_file_is_set_aside(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport], damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    _, first = ingested
    path = settings.index.index_dir / CACHE_FILE
    if damage == "garbage":
        path.write_bytes(b"not a database at all" * 100)
    else:
        with path.open("r+b") as f:
            f.truncate(path.stat().st_size // 2)
    with caplog.at_level(logging.WARNING, logger="ingest.embed_cache"):
        report = run_ingest(settings, FakeEmbeddings(), rebuild=True)
    assert report.chunks_total == first.chunks_total
    assert_vectors_are_fresh(settings)  # whatever survived the damage, no wrong vector was read
    if damage == "garbage":
        assert report.embedded == first.chunks_total
        assert "set aside" in caplog.text and path.with_name(CACHE_FILE + ".corrupt").exists()
    again = run_ingest(settings, FakeEmbeddings(), rebuild=True)
    assert again.embedded == 0  # the cache works again


WRITER = """
import sys
import numpy as np
from ingest.embed_cache import SqliteVectors
from pathlib import Path

store = SqliteVectors(Path(sys.argv[1]))
rng = np.random.default_rng(0)
n = 0
while True:  # batches of 200 entries, one transaction each, until killed
    store.put({f"k{n + i}": rng.random(384, dtype=np.float32) for i in range(200)})
    n += 200
    print(n, flush=True)
"""


@pytest.fixture
def killed_writer(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / CACHE_FILE
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        for _ in range(5):  # a few transactions committed, the next one under way
            proc.stdout.readline()
        time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=20)
        yield path
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_writer_killed_mid_write_leaves_only_whole_entries(killed_writer: Path) -> None:
    with sqlite3.connect(killed_writer) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute("SELECT key, vector, checksum FROM vectors").fetchall()
    assert len(rows) >= 1000 and len(rows) % 200 == 0  # whole transactions only
    for key, blob, stored in rows:
        assert len(blob) == 384 * 4 and checksum(key, np.frombuffer(blob, dtype="<f4")) == stored
    assert len(SqliteVectors(killed_writer).get([k for k, _, _ in rows])) == len(rows)
