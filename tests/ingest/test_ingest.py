"""Incremental ingest against a real embedded Chroma in tmp_path, with the counting fake embedder.

Only new or changed documents are embedded, no stale chunk survives a change, a different embedder or
chunk size rebuilds cleanly, and bad input stops the ingest before anything is written. The `ingest`
command is exercised in-process and once as the installed console script.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fakes import FakeEmbeddings
from paths import PROJECT_ROOT

from core.contract import embed_text
from core.settings import Settings
from ingest.cli import main
from ingest.documents import load_corpus
from ingest.indexer import IngestError, IngestReport, chunk_document, run_ingest
from ingest.store import UNITS_SUFFIX, Generation, Store, StoredChunk
from ingest.unit_vectors import unit_key, unit_texts

JSON_KEYS = {
    "docs_added",
    "docs_updated",
    "docs_unchanged",
    "docs_deleted",
    "chunks_total",
    "embedded",
    "cache_hits",
    "cache_misses",
    "units",
    "units_embedded",
    "seconds",
    "translations_stale",
    "translations_unaligned",
}

NEW_DOC = """---
id: "storage-en"
title: "Shared Storage Notes"
url: "https://example.test/storage-en"
---

# Shared Storage Notes

## Checkpoints

Checkpoints go to the parallel filesystem every thirty minutes. A restore takes four minutes.
"""


def live(settings: Settings) -> Generation:
    gen = Store.open(settings).current()
    assert gen is not None
    return gen


def collection_names(settings: Settings) -> set[str]:
    """The collections, a generation's unit vectors counted with it."""
    return {c.name.removesuffix(UNITS_SUFFIX) for c in Store.open(settings).client.list_collections()}


def chunks_of(gen: Generation) -> list[StoredChunk]:
    chunks, _ = gen.all_chunks()
    return chunks


def doc_chunk_count(settings: Settings, doc_id: str) -> int:
    """What the chunker makes of one document now, computed without the store."""
    docs, errors = load_corpus(settings.index.corpus_dir)
    assert errors == []
    (doc,) = [d for d in docs if d.id == doc_id]
    return len(chunk_document(doc, settings, None))


def top_texts(settings: Settings, embeddings: FakeEmbeddings, query: str, k: int = 3) -> list[str]:
    gen = live(settings)
    hits = gen.query(embeddings.embed_query(query), k)
    return [c.text for c in gen.get([h.chunk_id for h in hits])]


@pytest.fixture
def ingested(settings: Settings) -> tuple[FakeEmbeddings, IngestReport]:
    embeddings = FakeEmbeddings()
    return embeddings, run_ingest(settings, embeddings)


# --- incremental behaviour ----------------------------------------------------------------------------


def test_first_ingest_indexes_both_documents(settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]) -> None:
    embeddings, report = ingested
    assert (report.docs_added, report.docs_updated, report.docs_deleted) == (2, 0, 0)
    assert report.chunks_total > 0
    assert report.embedded == report.chunks_total
    assert embeddings.calls == report.embedded + report.units_embedded and report.units_embedded == report.units > 0
    gen = live(settings)
    assert gen.name == report.generation
    chunks = chunks_of(gen)
    assert len(chunks) == gen.count() == report.chunks_total
    assert len({c.id for c in chunks}) == len(chunks)
    assert {c.doc_id for c in chunks} == {"gateway-en", "scheduler-ja"}
    assert sum(c.doc_id == "gateway-en" for c in chunks) == doc_chunk_count(settings, "gateway-en")
    info = Store.open(settings).info()
    assert info is not None
    assert (info.documents, info.chunks, info.meta.embedder) == (2, report.chunks_total, "fake:128")
    assert collection_names(settings) == {settings.index.collection, gen.name}
    units = Store.open(settings).unit_vectors(gen.name)
    assert units is not None and units.count() == report.units
    assert "Minor releases ship three times a year." in " ".join(top_texts(settings, embeddings, "minor releases"))


def test_a_no_op_reingest_embeds_nothing(settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]) -> None:
    embeddings, first = ingested
    calls = embeddings.calls
    again = run_ingest(settings, embeddings)
    assert embeddings.calls == calls
    assert again.embedded == 0
    assert (again.docs_added, again.docs_updated, again.docs_unchanged, again.docs_deleted) == (0, 0, 2, 0)
    assert again.generation == first.generation
    assert again.chunks_total == first.chunks_total
    assert not again.rebuilt


def test_every_unit_of_the_index_has_its_own_vector(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    _, report = ingested
    gen = live(settings)
    texts = unit_texts(chunks_of(gen))
    assert len(texts) == report.units > report.chunks_total  # a chunk holds several units
    table = Store.open(settings).unit_vectors(gen.name)
    assert table is not None
    keys, matrix = table.vectors()
    assert sorted(keys) == sorted(unit_key(t) for t in texts)
    expected = dict(zip(map(unit_key, texts), FakeEmbeddings().embed_documents(texts), strict=True))
    for key, row in zip(keys, matrix, strict=True):
        assert row == pytest.approx(expected[key], abs=1e-6)


def test_a_changed_document_embeds_only_its_new_units(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    embeddings, _ = ingested
    old = set(unit_texts(chunks_of(live(settings))))
    doc = settings.index.corpus_dir / "gateway-en.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("512 MB", "640 MB"), encoding="utf-8")
    report = run_ingest(settings, embeddings)
    new = unit_texts(chunks_of(live(settings)))
    assert 0 < report.units_embedded == len(set(new) - old) < report.units == len(new)


def test_changing_one_document_re_embeds_only_its_changed_chunks(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    embeddings, first = ingested
    before_chunks, before_vectors = live(settings).all_chunks(with_embeddings=True)
    before_texts = {embed_text(c) for c in before_chunks}
    ja_before = {
        c.id: (c.text, v) for c, v in zip(before_chunks, before_vectors, strict=True) if c.doc_id == "scheduler-ja"
    }
    doc = settings.index.corpus_dir / "gateway-en.md"
    text = doc.read_text(encoding="utf-8").replace("512 MB", "768 MB")
    doc.write_text(text + "\n## Zebracorn\n\nThe zebracorn dashboard shows queue depth per tenant.\n", encoding="utf-8")
    calls = embeddings.calls

    report = run_ingest(settings, embeddings)

    gateway_chunks = doc_chunk_count(settings, "gateway-en")
    assert (report.docs_updated, report.docs_unchanged, report.docs_added) == (1, 1, 0)
    chunks, vectors = live(settings).all_chunks(with_embeddings=True)
    # Only the gateway's chunks whose text changed are embedded; its other chunks come from the cache.
    changed = {embed_text(c) for c in chunks if c.doc_id == "gateway-en"} - before_texts
    assert 0 < report.embedded == len(changed) == embeddings.calls - calls - report.units_embedded < gateway_chunks
    assert (report.cache_hits, report.cache_misses) == (gateway_chunks - len(changed), len(changed))
    assert len({c.id for c in chunks}) == len(chunks) == report.chunks_total
    all_text = "\n".join(c.text for c in chunks)
    assert "512 MB" not in all_text and all_text.count("768 MB") == 1
    assert all_text.count("zebracorn dashboard") == 1
    assert sum(c.doc_id == "gateway-en" for c in chunks) == gateway_chunks
    assert len({c.doc_hash for c in chunks if c.doc_id == "gateway-en"}) == 1
    # The unchanged document kept its stored vectors (copied, not recomputed).
    ja_after = {c.id: (c.text, v) for c, v in zip(chunks, vectors, strict=True) if c.doc_id == "scheduler-ja"}
    assert ja_after.keys() == ja_before.keys()
    for cid, (chunk_text, vector) in ja_after.items():
        assert chunk_text == ja_before[cid][0]
        assert vector == pytest.approx(ja_before[cid][1], abs=1e-6)
    top = top_texts(settings, embeddings, "zebracorn dashboard queue depth", k=1)
    assert "zebracorn dashboard" in top[0]
    # The previous generation is kept for in-flight readers, and dropped by the next ingest.
    assert collection_names(settings) == {settings.index.collection, report.generation, first.generation}
    run_ingest(settings, embeddings)
    assert collection_names(settings) == {settings.index.collection, report.generation}


def test_deleting_a_document_removes_its_chunks(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    embeddings, first = ingested
    calls = embeddings.calls
    (settings.index.corpus_dir / "scheduler-ja.md").unlink()
    report = run_ingest(settings, embeddings)
    assert (report.docs_deleted, report.docs_unchanged, report.embedded) == (1, 1, 0)
    assert embeddings.calls == calls
    chunks = chunks_of(live(settings))
    assert {c.doc_id for c in chunks} == {"gateway-en"}
    assert report.chunks_total == len(chunks) == doc_chunk_count(settings, "gateway-en") < first.chunks_total
    assert not any("管理ノード" in t for t in top_texts(settings, embeddings, "管理ノード 台数", k=10))


def test_adding_a_document_embeds_only_the_new_one(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    embeddings, first = ingested
    calls = embeddings.calls
    (settings.index.corpus_dir / "storage-en.md").write_text(NEW_DOC, encoding="utf-8")
    report = run_ingest(settings, embeddings)
    new_chunks = doc_chunk_count(settings, "storage-en")
    assert (report.docs_added, report.docs_unchanged) == (1, 2)
    assert report.embedded == embeddings.calls - calls - report.units_embedded == new_chunks
    assert report.chunks_total == first.chunks_total + new_chunks
    assert "parallel filesystem" in top_texts(settings, embeddings, "checkpoints parallel filesystem", k=1)[0]


def test_a_different_embedder_rebuilds_from_scratch(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    _, first = ingested
    other = FakeEmbeddings(dim=64)
    report = run_ingest(settings, other)
    assert report.rebuilt
    assert report.embedded == other.calls - report.units_embedded == report.chunks_total == first.chunks_total
    assert report.docs_added == 2  # nothing is carried over from an incompatible generation
    gen = live(settings)
    assert gen.meta is not None and gen.meta.embedder == "fake:64"
    _, vectors = gen.all_chunks(with_embeddings=True)
    assert {len(v) for v in vectors} == {64}
    assert gen.query(other.embed_query("gateway"), 2)
    assert "(full rebuild)" in report.summary()


def test_a_different_chunk_size_rebuilds(settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]) -> None:
    embeddings, first = ingested
    smaller = settings.with_(chunk_size=100, chunk_min=0)
    calls = embeddings.calls
    before = {embed_text(c) for c in chunks_of(live(settings))}
    report = run_ingest(smaller, embeddings)
    assert report.rebuilt
    assert report.chunks_total > first.chunks_total
    new_texts = {embed_text(c) for c in chunks_of(live(smaller))} - before
    assert 0 < report.embedded == embeddings.calls - calls == len(new_texts)
    assert report.cache_hits + report.cache_misses == report.chunks_total
    gen = live(smaller)
    assert gen.meta is not None and gen.meta.chunk_size == 100
    assert all(len(c.text) <= 100 for c in chunks_of(gen))


def test_rebuild_flag_rebuilds_everything_from_the_cache(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    embeddings, first = ingested
    calls = embeddings.calls
    before = {c.id: v for c, v in zip(*live(settings).all_chunks(with_embeddings=True), strict=True)}
    report = run_ingest(settings, embeddings, rebuild=True)
    assert report.rebuilt and report.generation != first.generation
    assert (report.embedded, embeddings.calls - calls) == (0, 0)
    assert (report.cache_hits, report.cache_misses) == (first.chunks_total, 0)
    after = {c.id: v for c, v in zip(*live(settings).all_chunks(with_embeddings=True), strict=True)}
    assert after.keys() == before.keys()
    assert all(after[k] == pytest.approx(before[k], abs=1e-7) for k in before)


# --- bad input ----------------------------------------------------------------------------------------


def test_bad_input_raises_and_leaves_the_index_untouched(
    settings: Settings, ingested: tuple[FakeEmbeddings, IngestReport]
) -> None:
    embeddings, first = ingested
    store = Store.open(settings)
    pointer_before = dict(store.client.get_collection(settings.index.collection).metadata or {})
    texts_before = sorted(c.text for c in chunks_of(live(settings)))
    names_before = collection_names(settings)
    (settings.index.corpus_dir / "gateway-en.md").write_text(
        NEW_DOC.replace("storage-en", "gateway-en"), encoding="utf-8"
    )
    (settings.index.corpus_dir / "broken.md").write_bytes(b"---\nid: [oops\n---\n\xff")
    calls = embeddings.calls

    with pytest.raises(IngestError) as caught:
        run_ingest(settings, embeddings)

    assert "nothing was written" in str(caught.value)
    assert [e.path for e in caught.value.errors] == ["broken.md"]
    assert embeddings.calls == calls
    assert live(settings).name == first.generation
    assert sorted(c.text for c in chunks_of(live(settings))) == texts_before
    assert collection_names(settings) == names_before
    assert dict(store.client.get_collection(settings.index.collection).metadata or {}) == pointer_before


def test_bad_input_on_a_first_ingest_creates_no_index(settings: Settings) -> None:
    (settings.index.corpus_dir / "broken.md").write_text("---\nurl: not-a-url\n---\nText.\n", encoding="utf-8")
    with pytest.raises(IngestError):
        run_ingest(settings, FakeEmbeddings())
    assert not settings.index.index_dir.exists()


def test_an_empty_corpus_is_an_error(settings: Settings, tmp_path: Path) -> None:
    empty = settings.with_(corpus_dir=tmp_path / "empty")
    empty.index.corpus_dir.mkdir()
    with pytest.raises(IngestError, match="no documents"):
        run_ingest(empty, FakeEmbeddings())


def test_skip_invalid_ingests_the_rest_and_reports_the_skipped(settings: Settings) -> None:
    (settings.index.corpus_dir / "broken.md").write_text("---\nid: bad id\n---\nText.\n", encoding="utf-8")
    report = run_ingest(settings, FakeEmbeddings(), skip_invalid=True)
    assert report.docs_added == 2
    assert [(e.path, "'id'" in e.reason) for e in report.skipped] == [("broken.md", True)]
    assert {c.doc_id for c in chunks_of(live(settings))} == {"gateway-en", "scheduler-ja"}
    assert "1 file(s) skipped" in report.summary()


# --- the `ingest` command -----------------------------------------------------------------------------


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake embedder via the environment, and a working directory without a developer's .env."""
    for key in list(os.environ):
        if key.startswith("ADVISOR_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("ADVISOR_EMBEDDING_BACKEND", "fake")
    monkeypatch.chdir(tmp_path)


def test_cli_json_prints_exactly_one_object_with_the_summary_keys(
    cli_env: None, corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--corpus", str(corpus_dir), "--index", str(tmp_path / "idx"), "--json"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    first = json.loads(out)
    assert set(first) == JSON_KEYS
    assert first["docs_added"] == 2 and first["embedded"] == first["cache_misses"] == first["chunks_total"] > 0
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["embedded"], second["docs_unchanged"], second["chunks_total"]) == (0, 2, first["chunks_total"])


def test_cli_reports_every_bad_file_and_fails(
    cli_env: None, corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (corpus_dir / "bad-one.md").write_bytes(b"\xff\xfe")
    (corpus_dir / "bad-two.md").write_text("---\nurl: nope\n---\nText.\n", encoding="utf-8")
    code = main(["--corpus", str(corpus_dir), "--index", str(tmp_path / "idx")])
    err = capsys.readouterr().err
    assert code != 0
    assert "error: bad-one.md: not valid UTF-8" in err
    assert "error: bad-two.md: front matter field 'url'" in err
    assert not (tmp_path / "idx").exists()


def test_cli_skip_invalid_and_plain_summary(
    cli_env: None, corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (corpus_dir / "bad.md").write_text("", encoding="utf-8")
    assert main(["--corpus", str(corpus_dir), "--index", str(tmp_path / "idx"), "--skip-invalid"]) == 0
    captured = capsys.readouterr()
    assert "skipped: bad.md: document is empty" in captured.err
    assert captured.out.startswith("ingest: 2 added, 0 updated, 0 unchanged, 0 deleted;")


def test_cli_rejects_a_bad_setting_without_a_traceback(
    cli_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ADVISOR_CHUNK_SIZE", "5")
    with pytest.raises(SystemExit) as caught:
        main(["--json"])
    assert caught.value.code == 2
    assert "ADVISOR_CHUNK_SIZE" in capsys.readouterr().err


def test_installed_console_script(corpus_dir: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADVISOR_")}
    env["ADVISOR_EMBEDDING_BACKEND"] = "fakes:FakeEmbeddings"
    script = str(PROJECT_ROOT / ".venv" / "bin" / "ingest")
    args = [script, "--corpus", str(corpus_dir), "--index", str(tmp_path / "idx"), "--json"]
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary) == JSON_KEYS and summary["docs_added"] == 2
    (corpus_dir / "broken.md").write_text("---\nid: [\n---\nx\n", encoding="utf-8")
    failed = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert failed.returncode != 0
    assert "error: broken.md: malformed front matter" in failed.stderr


def test_new_generations_get_the_configured_hnsw_search_breadth(settings: Settings) -> None:
    # Chroma's default breadth (100) gave a slightly different top 30 from one process to the next
    tuned = settings.with_(hnsw_ef_search=321)
    run_ingest(tuned, FakeEmbeddings())
    gen = Store.open(tuned).current()
    assert gen is not None and gen.ef_search == 321
