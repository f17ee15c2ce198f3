"""Faults: an ingest killed or failing at any point leaves the previous index answering, and the next
ingest converges; a deleted or corrupted index folder gives a clear error that names the fix.

The SIGKILL tests run the ingest in a child process (a small script with a slowed-down embedder or
store write) and kill it once it has reached the phase under test, while this process keeps the index
open the way the app does.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fakes import FakeEmbeddings

from core.settings import Settings
from ingest.cli import main
from ingest.indexer import IngestReport, run_ingest
from ingest.store import UNITS_SUFFIX, Generation, IndexUnavailable, Store, StoredChunk

# Run by the child: ingest with either a slow embedder or a slow store write, touching a marker file
# as soon as the phase under test has started. argv: corpus index marker phase
CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path

    from fakes import FakeEmbeddings
    from ingest.indexer import run_ingest
    from core.settings import Settings
    from ingest.store import Generation

    corpus, index, marker, phase = sys.argv[1:5]
    settings = Settings().with_(corpus_dir=corpus, index_dir=index, embedding_backend="fakes:FakeEmbeddings",
                        chunk_size=300, chunk_min=60)

    class SlowEmbeddings(FakeEmbeddings):
        def embed_documents(self, texts):
            Path(marker).write_text("embedding")
            time.sleep(120)
            return super().embed_documents(texts)

    if phase == "write":
        original_add = Generation.add

        def slow_add(self, chunks, vectors):
            half = max(1, len(chunks) // 2)
            original_add(self, chunks[:half], vectors[:half])  # half of the new generation is on disk
            Path(marker).write_text("writing")
            time.sleep(120)
            original_add(self, chunks[half:], vectors[half:])

        Generation.add = slow_add
        embeddings = FakeEmbeddings()
    else:
        embeddings = SlowEmbeddings()
    run_ingest(settings, embeddings)
    print("finished")
    """
)


def state(gen: Generation) -> list[tuple[StoredChunk, list[float]]]:
    chunks, vectors = gen.all_chunks(with_embeddings=True)
    return sorted(zip(chunks, vectors, strict=True), key=lambda pair: pair[0].id)


def live(settings: Settings) -> Generation:
    gen = Store.open(settings).current()
    assert gen is not None
    return gen


def names(store: Store) -> set[str]:
    """The collections, a generation's unit vectors counted with it."""
    return {c.name.removesuffix(UNITS_SUFFIX) for c in store.client.list_collections()}


def change_corpus(corpus: Path) -> None:
    """A change that needs embedding: one document edited, one added."""
    doc = corpus / "gateway-en.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("512 MB", "640 MB"), encoding="utf-8")
    (corpus / "extra-en.md").write_text("# Extra\n\nQuota review happens every quarter.\n", encoding="utf-8")


def run_child_and_kill(settings: Settings, phase: str, tmp_path: Path) -> None:
    script = tmp_path / "child_ingest.py"
    script.write_text(CHILD, encoding="utf-8")
    marker = tmp_path / f"marker-{phase}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADVISOR_")}
    args = [
        sys.executable,
        str(script),
        str(settings.index.corpus_dir),
        str(settings.index.index_dir),
        str(marker),
        phase,
    ]
    child = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, child.communicate()[1].decode()
            assert time.monotonic() < deadline, "the child never reached the phase under test"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    assert marker.read_text() == ("writing" if phase == "write" else "embedding")


def clean_state(settings: Settings, tmp_path: Path) -> list[tuple[StoredChunk, list[float]]]:
    """What a clean ingest of the same corpus into a fresh index stores."""
    fresh = settings.with_(index_dir=tmp_path / "clean-index")
    run_ingest(fresh, FakeEmbeddings())
    return state(live(fresh))


@pytest.mark.parametrize("phase", ["embed", "write"])
def test_sigkill_mid_ingest_keeps_the_old_index_and_a_rerun_converges(
    settings: Settings, tmp_path: Path, phase: str
) -> None:
    first = run_ingest(settings, FakeEmbeddings())
    store = Store.open(settings)  # held open across the kill, like the running app
    old = store.current()
    assert old is not None
    old_state = state(old)
    probe = FakeEmbeddings().embed_query("control plane memory")
    old_hits = old.query(probe, 3)
    change_corpus(settings.index.corpus_dir)

    run_child_and_kill(settings, phase, tmp_path)

    # The old index still answers, unchanged, both for the open store and a fresh one.
    for reader in (store, Store.open(settings)):
        gen = reader.current()
        assert gen is not None and gen.name == first.generation
        assert gen.count() == first.chunks_total
        assert gen.query(probe, 3) == old_hits
        assert "512 MB" in " ".join(c.text for c in gen.get([h.chunk_id for h in old_hits]))
    assert state(live(settings)) == old_state
    leftovers = names(store) - {settings.index.collection, first.generation}
    if phase == "write":
        assert len(leftovers) == 1, "the killed write should have left a half-built generation"
    else:
        assert leftovers == set(), "nothing is written before the embedding finishes"

    rerun = run_ingest(settings, FakeEmbeddings())

    assert (rerun.docs_added, rerun.docs_updated, rerun.docs_unchanged) == (1, 1, 1)
    assert state(live(settings)) == clean_state(settings, tmp_path)
    assert names(store) == {settings.index.collection, rerun.generation, first.generation}
    assert not leftovers & names(store)
    assert "640 MB" in " ".join(c.text for c in live(settings).all_chunks()[0])


def test_an_exception_mid_write_keeps_the_previous_index_live(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run_ingest(settings, FakeEmbeddings())
    before = state(live(settings))
    store = Store.open(settings)
    names_before = names(store)
    change_corpus(settings.index.corpus_dir)
    original_add = Generation.add

    def failing_add(self: Generation, chunks: list[StoredChunk], vectors: list[list[float]]) -> None:
        original_add(self, chunks[:1], vectors[:1])
        raise OSError("disk full")

    monkeypatch.setattr(Generation, "add", failing_add)
    with pytest.raises(OSError, match="disk full"):
        run_ingest(settings, FakeEmbeddings())
    assert live(settings).name == first.generation
    assert state(live(settings)) == before
    assert names(store) == names_before  # the half-built generation was dropped

    monkeypatch.undo()
    report = run_ingest(settings, FakeEmbeddings())
    assert (report.docs_added, report.docs_updated) == (1, 1)


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_a_failing_publish_drops_the_new_generation(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    first = run_ingest(settings, FakeEmbeddings())
    store = Store.open(settings)
    names_before = names(store)
    change_corpus(settings.index.corpus_dir)

    def failing_publish(
        self: Store, gen: Generation, documents: int, stale: object = (), unaligned: object = None
    ) -> None:
        raise error()

    monkeypatch.setattr(Store, "publish", failing_publish)
    with pytest.raises(error):
        run_ingest(settings, FakeEmbeddings())
    assert live(settings).name == first.generation
    assert names(store) == names_before


# --- a broken index folder ------------------------------------------------------------------------------


@pytest.fixture
def open_index(settings: Settings) -> tuple[Store, IngestReport]:
    report = run_ingest(settings, FakeEmbeddings())
    store = Store.open(settings)
    assert store.current() is not None
    return store, report


def test_index_folder_deleted_while_open(settings: Settings, open_index: tuple[Store, IngestReport]) -> None:
    store, first = open_index
    gen = store.current()
    assert gen is not None
    shutil.rmtree(settings.index.index_dir)
    # Chroma would keep answering from the deleted file; the store notices and says what to do.
    with pytest.raises(IndexUnavailable, match=r"deleted or replaced.*run `ingest`"):
        store.current()
    with pytest.raises(IndexUnavailable, match="deleted or replaced"):
        gen.query(FakeEmbeddings().embed_query("gateway"), 2)
    with pytest.raises(IndexUnavailable, match="deleted or replaced"):
        store.info()
    # The fix works in the same process: a fresh open sees the new folder, not the cached old one.
    assert Store.open(settings).current() is None
    report = run_ingest(settings, FakeEmbeddings())
    assert report.docs_added == 2 and report.chunks_total == first.chunks_total
    assert live(settings).count() == first.chunks_total


def test_index_folder_replaced_while_open(settings: Settings, open_index: tuple[Store, IngestReport]) -> None:
    store, _ = open_index
    shutil.rmtree(settings.index.index_dir)
    (settings.index.corpus_dir / "gateway-en.md").unlink()
    report = run_ingest(settings, FakeEmbeddings())  # a new index in the same place
    with pytest.raises(IndexUnavailable, match="deleted or replaced"):
        store.current_name()
    reopened = live(settings)
    assert reopened.name == report.generation
    assert {c.doc_id for c in reopened.all_chunks()[0]} == {"scheduler-ja"}


def test_corrupted_index_names_the_fix(
    settings: Settings,
    open_index: tuple[Store, IngestReport],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, _ = open_index
    gen = store.current()
    assert gen is not None
    sqlite = settings.index.index_dir / "chroma.sqlite3"
    sqlite.write_bytes(os.urandom(64) + b"garbage, not a database" * 4096)
    fix = r"corrupted.*delete the folder and run `ingest`"
    with pytest.raises(IndexUnavailable, match=fix):
        store.current()
    with pytest.raises(IndexUnavailable, match=fix):
        gen.query(FakeEmbeddings().embed_query("gateway"), 2)
    with pytest.raises(IndexUnavailable, match=fix):
        run_ingest(settings, FakeEmbeddings())
    # The command says the same, without a traceback.
    for key in list(os.environ):
        if key.startswith("ADVISOR_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("ADVISOR_EMBEDDING_BACKEND", "fake")
    monkeypatch.chdir(tmp_path)
    args = ["--corpus", str(settings.index.corpus_dir), "--index", str(settings.index.index_dir), "--json"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "delete the folder and run `ingest`" in captured.err
    assert '"error"' in captured.out
    # Following the advice works, in the same process.
    shutil.rmtree(settings.index.index_dir)
    assert main(args) == 0


def test_a_corrupted_index_in_a_fresh_process(settings: Settings, tmp_path: Path) -> None:
    run_ingest(settings, FakeEmbeddings())
    (settings.index.index_dir / "chroma.sqlite3").write_bytes(b"\x00garbage" * 10_000)
    code = (
        "import sys\nfrom core.settings import Settings\nfrom ingest.store import Store, IndexUnavailable\n"
        "try:\n    Store.open(Settings().with_(index_dir=sys.argv[1])).current()\n"
        "except IndexUnavailable as exc:\n    print(exc)\n    sys.exit(3)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(settings.index.index_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 3, done.stderr
    assert str(settings.index.index_dir) in done.stdout and "delete the folder and run `ingest`" in done.stdout


def test_an_index_path_that_is_a_file(settings: Settings) -> None:
    settings.index.index_dir.write_text("not a folder")
    with pytest.raises(IndexUnavailable, match=str(settings.index.index_dir)):
        Store.open(settings)


def test_a_generation_replaced_under_a_reader(settings: Settings, open_index: tuple[Store, IngestReport]) -> None:
    store, _ = open_index
    held = store.current()
    assert held is not None
    for word in ("one", "two"):  # two ingests: the held generation is first kept, then pruned
        with (settings.index.corpus_dir / "gateway-en.md").open("a", encoding="utf-8") as f:
            f.write(f"\nAppendix {word}.\n")
        run_ingest(settings, FakeEmbeddings())
    assert held.name not in names(store)
    with pytest.raises(IndexUnavailable, match="reopen"):
        held.query(FakeEmbeddings().embed_query("gateway"), 2)
    assert store.current() is not None
