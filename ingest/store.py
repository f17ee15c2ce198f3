"""The Chroma boundary: with ``ingest.chroma_client`` and ``ingest.keyed_vectors``, the only code touching chromadb types.

Layout. The index is a set of *generations*: immutable data collections ``<name>-g<stamp>`` plus one
small *pointer* collection ``<name>`` whose metadata names the current generation. An ingest builds a
new generation beside the live one (copying unchanged documents' vectors, embedding only what
changed) and then flips the pointer in one metadata update. A crash or SIGKILL at any moment leaves
the pointer on the previous, complete generation, so the index keeps answering; the next ingest
deletes the debris. The same scheme works embedded (PersistentClient) and client/server (HttpClient).
An embedded folder that is deleted, replaced or corrupted under an open store surfaces as
``IndexUnavailable`` with the fix, never as a stale answer or a raw Chroma error. In server mode the
embedding cache keeps its vectors beside the index, in ``<name>-cache-<embedder digest>`` collections
(``KeyedVectors``: ids are keys, never searched).

Deliberately left out: LangChain's record manager. Our state (document hashes) lives in the chunk
metadata of the generation itself, so there is no second store that could drift out of sync with the
vectors, and nothing extra to host in server mode.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from core.contract import DenseHit, IndexInfo, IndexMeta, IndexUnavailable, StoredChunk, load_facts
from core.numeric import cosine_rows
from core.settings import Settings
from ingest.chroma_client import SQLITE, file_id, friendly_error, is_not_found, open_client, system_token
from ingest.keyed_vectors import KeyedVectors

__all__ = [
    "UNITS_SUFFIX",
    "DenseHit",
    "Generation",
    "IndexInfo",
    "IndexMeta",
    "IndexUnavailable",
    "KeyedVectors",
    "Store",
    "StoredChunk",
    "load_facts",
    "open_client",
]

_COPY_BATCH = 500
# A generation's unit vectors (``ingest.unit_vectors``) live in ``<generation>-units``, made, published and
# pruned with it.
UNITS_SUFFIX = "-units"


def _to_stored(chunk_id: str, text: str | None, meta: Any) -> StoredChunk:
    m = dict(meta or {})
    return StoredChunk(
        id=chunk_id,
        doc_id=str(m.get("doc_id", "")),
        doc_hash=str(m.get("doc_hash", "")),
        title=str(m.get("title", "")),
        url=str(m.get("url", "")),
        section=str(m.get("section", "")),
        kind=str(m.get("kind", "text")),
        language=str(m.get("language", "")),
        index=int(m.get("index", 0)),
        text=text or "",
        verbatim=bool(m.get("verbatim", True)),
        translation_of=str(m.get("translation_of", "")),
        original_section=str(m.get("original_section", "")),
        license=str(m.get("license", "")),
        completeness=str(m.get("completeness", "")),
        rules=str(m.get("rules", "")),
        facts=str(m.get("facts", "")),
    )


def _chunk_metadata(chunk: StoredChunk) -> dict[str, Any]:
    return chunk.model_dump(exclude={"id", "text"})


class Generation:
    """One data collection (a complete or in-progress index generation)."""

    def __init__(self, collection: Collection, store: Store | None = None):
        self._col = collection
        self._store = store

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn Chroma failures into IndexUnavailable with a fix, for readers holding this generation."""
        if self._store is None:
            yield
            return
        self._store.check()
        try:
            yield
        except IndexUnavailable:
            raise
        except Exception as exc:
            if is_not_found(exc):
                raise IndexUnavailable(
                    f"index generation '{self.name}' is gone (a newer ingest replaced it); reopen the index"
                ) from exc
            raise friendly_error(exc, self._store.index_dir) from exc

    @property
    def name(self) -> str:
        return str(self._col.name)

    @property
    def meta(self) -> IndexMeta | None:
        m = dict(self._col.metadata or {})
        try:
            return IndexMeta.model_validate(m)
        except Exception:
            return None

    @property
    def ef_search(self) -> int | None:
        """The HNSW search breadth this generation was created with."""
        hnsw: dict[str, Any] = dict((self._col.configuration or {}).get("hnsw") or {})
        value = hnsw.get("ef_search")
        return int(value) if value is not None else None

    def count(self) -> int:
        with self._guard():
            return int(self._col.count())

    def all_chunks(self, with_embeddings: bool = False) -> tuple[list[StoredChunk], list[list[float]]]:
        """Every chunk (and optionally its vector), in batches so huge indexes stay bounded."""
        chunks: list[StoredChunk] = []
        vectors: list[list[float]] = []
        total = self.count()
        include: list[Any] = ["documents", "metadatas"] + (["embeddings"] if with_embeddings else [])
        for offset in range(0, total, _COPY_BATCH):
            with self._guard():
                got = self._col.get(limit=_COPY_BATCH, offset=offset, include=include)
            docs = got.get("documents") or []
            metas = got.get("metadatas") or []
            for i, cid in enumerate(got["ids"]):
                chunks.append(_to_stored(cid, docs[i] if i < len(docs) else "", metas[i] if i < len(metas) else {}))
            if with_embeddings:
                embs = got.get("embeddings")
                vectors.extend([list(map(float, v)) for v in (embs if embs is not None else [])])
        return chunks, vectors

    def doc_hashes(self) -> dict[str, str]:
        """doc_id -> content hash of the version stored in this generation."""
        hashes: dict[str, str] = {}
        total = self.count()
        for offset in range(0, total, _COPY_BATCH * 4):
            with self._guard():
                got = self._col.get(limit=_COPY_BATCH * 4, offset=offset, include=["metadatas"])
            for meta in got.get("metadatas") or []:
                m = dict(meta or {})
                hashes[str(m.get("doc_id", ""))] = str(m.get("doc_hash", ""))
        return hashes

    def add(self, chunks: Sequence[StoredChunk], vectors: Sequence[Sequence[float]]) -> None:
        for start in range(0, len(chunks), _COPY_BATCH):
            part = chunks[start : start + _COPY_BATCH]
            with self._guard():
                self._col.add(
                    ids=[c.id for c in part],
                    documents=[c.text for c in part],
                    metadatas=[_chunk_metadata(c) for c in part],
                    embeddings=[list(v) for v in vectors[start : start + _COPY_BATCH]],  # type: ignore[arg-type]
                )

    def query(
        self, vector: Sequence[float], k: int, *, language: str | None = None, size: int | None = None
    ) -> list[DenseHit]:
        """Nearest chunks by cosine similarity, optionally only chunks of one ``language``.

        ``size`` is the collection size when the caller already knows it (saves a count round trip).
        """
        n = min(k, self.count() if size is None else size)
        if n <= 0:
            return []
        query_vectors: list[Sequence[float]] = [list(vector)]
        where: Any = {"language": language} if language else None
        with self._guard():
            got = self._col.query(query_embeddings=query_vectors, n_results=n, where=where, include=["distances"])
        ids = got["ids"][0]
        dists = (got.get("distances") or [[]])[0]
        # cosine space: distance = 1 - cosine similarity
        return [DenseHit(chunk_id=cid, similarity=1.0 - float(d)) for cid, d in zip(ids, dists, strict=False)]

    def similarities(self, vector: Sequence[float], ids: Iterable[str]) -> dict[str, float]:
        """Cosine similarity of ``vector`` to the stored vectors of ``ids`` (exact, no index search)."""
        id_list = list(ids)
        if not id_list:
            return {}
        with self._guard():
            got = self._col.get(ids=id_list, include=["embeddings"])
        stored = got.get("embeddings")
        if stored is None or len(stored) == 0:
            return {}
        sims = cosine_rows(np.asarray(stored, dtype=np.float64), vector)
        return {cid: float(s) for cid, s in zip(got["ids"], sims, strict=True)}

    def get(self, ids: Iterable[str]) -> list[StoredChunk]:
        id_list = list(ids)
        if not id_list:
            return []
        with self._guard():
            got = self._col.get(ids=id_list, include=["documents", "metadatas"])
        docs = got.get("documents") or []
        metas = got.get("metadatas") or []
        by_id = {cid: _to_stored(cid, docs[i], metas[i]) for i, cid in enumerate(got["ids"])}
        return [by_id[i] for i in id_list if i in by_id]


class Store:
    """Pointer + generations on one Chroma client."""

    def __init__(self, client: ClientAPI, name: str, index_dir: Path | None = None, ef_search: int = 400):
        self.client = client
        self.name = name
        self.ef_search = ef_search
        self.index_dir = index_dir  # embedded mode only: watched so a deleted folder is reported
        self._file_id = file_id(index_dir / SQLITE) if index_dir is not None else None
        self._system = system_token(index_dir) if index_dir is not None else None

    @classmethod
    def open(cls, settings: Settings) -> Store:
        index_dir = None if settings.index.chroma_host else settings.index.index_dir
        return cls(open_client(settings), settings.index.collection, index_dir, settings.index.hnsw_ef_search)

    def check(self) -> None:
        """Raise IndexUnavailable when the embedded index folder was deleted or replaced under us.

        Chroma would otherwise keep answering from the deleted file (and fail on the next write).
        """
        if self.index_dir is None:
            return
        if file_id(self.index_dir / SQLITE) != self._file_id or system_token(self.index_dir) != self._system:
            raise IndexUnavailable(
                f"index folder {self.index_dir} was deleted or replaced while it was open; "
                "run `ingest` to rebuild it if needed, then reopen the index (restart the app)"
            )

    # --- reading ---------------------------------------------------------------------------
    def _pointer(self) -> Collection | None:
        self.check()
        try:
            return self.client.get_collection(self.name, embedding_function=None)
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise friendly_error(exc, self.index_dir) from exc

    def current_name(self) -> str | None:
        pointer = self._pointer()
        if pointer is None:
            return None
        current = (pointer.metadata or {}).get("current")
        return str(current) if current else None

    def current(self) -> Generation | None:
        name = self.current_name()
        if name is None:
            return None
        try:
            col = self.client.get_collection(name, embedding_function=None)
        except Exception as exc:
            if is_not_found(exc):
                raise IndexUnavailable(
                    f"index pointer names generation '{name}', which is missing; run `ingest --rebuild`"
                ) from exc
            raise friendly_error(exc, self.index_dir) from exc
        return Generation(col, self)

    def info(self) -> IndexInfo | None:
        pointer = self._pointer()
        gen = self.current()
        if pointer is None or gen is None or gen.meta is None:
            return None
        pm = pointer.metadata or {}
        return IndexInfo(
            generation=gen.name,
            meta=gen.meta,
            documents=int(pm.get("documents", 0)),
            chunks=int(pm.get("chunks", gen.count())),
            updated_at=str(pm.get("updated_at", "")),
            translations_stale=[s for s in str(pm.get("translations_stale", "")).split(",") if s],
            translations_unaligned=_unaligned(pm.get("translations_unaligned")),
        )

    # --- writing ---------------------------------------------------------------------------
    def new_generation(self, meta: IndexMeta) -> Generation:
        self.check()
        # Microseconds, not the nanosecond remainder: names then sort in creation order.
        now = time.time_ns() // 1000
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 1_000_000)) + f"{now % 1_000_000:06d}"
        col = self.client.create_collection(
            f"{self.name}-g{stamp}",
            embedding_function=None,
            metadata=meta.to_metadata(),
            configuration={"hnsw": {"space": "cosine", "ef_search": self.ef_search}},
        )
        return Generation(col, self)

    def publish(
        self,
        gen: Generation,
        documents: int,
        stale: Sequence[str] = (),
        unaligned: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Atomically make ``gen`` the live generation (one metadata update)."""
        metadata = {
            "current": gen.name,
            "documents": documents,
            "chunks": gen.count(),
            **_status(stale, unaligned),
        }
        pointer = self._pointer()
        if pointer is None:
            self.client.create_collection(self.name, embedding_function=None, metadata=metadata)
        else:
            pointer.modify(metadata=metadata)

    def prune(self, keep_previous: str | None = None) -> list[str]:
        """Delete generations other than the live one (and ``keep_previous``, for in-flight readers)."""
        live = self.current_name()
        removed: list[str] = []
        for col in self.client.list_collections():
            name = col.name if hasattr(col, "name") else str(col)
            generation = name.removesuffix(UNITS_SUFFIX)
            if name.startswith(f"{self.name}-g") and generation not in (live, keep_previous):
                self.client.delete_collection(name)
                removed.append(name)
        return removed

    def touch(self, stale: Sequence[str] = (), unaligned: Mapping[str, Sequence[str]] | None = None) -> None:
        """Record a no-op ingest time (and the translations' status) without changing the generation."""
        pointer = self._pointer()
        if pointer is not None:
            pointer.modify(metadata={**dict(pointer.metadata or {}), **_status(stale, unaligned)})

    def unit_vectors(self, generation: str) -> KeyedVectors | None:
        """A generation's unit vectors (``ingest.unit_vectors``); None where an index built before them has none."""
        self.check()
        try:
            return KeyedVectors(self.client.get_collection(generation + UNITS_SUFFIX, embedding_function=None))
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise friendly_error(exc, self.index_dir) from exc

    def new_unit_vectors(self, generation: str) -> KeyedVectors:
        """The unit vectors of a generation being built (published and pruned with it)."""
        self.check()
        return KeyedVectors(self.client.get_or_create_collection(generation + UNITS_SUFFIX, embedding_function=None))

    def keyed_vectors(self, suffix: str) -> KeyedVectors:
        """The key → vector collection ``<name>-<suffix>`` beside the index, created when missing."""
        self.check()
        col = self.client.get_or_create_collection(f"{self.name}-{suffix}", embedding_function=None)
        return KeyedVectors(col)


def _status(stale: Sequence[str], unaligned: Mapping[str, Sequence[str]] | None) -> dict[str, str]:
    """Pointer metadata (scalars only): the ingest time and the translations' status."""
    return {
        "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "translations_stale": ",".join(stale),
        "translations_unaligned": json.dumps({k: list(v) for k, v in (unaligned or {}).items()}, ensure_ascii=False),
    }


def _unaligned(raw: object) -> dict[str, list[str]]:
    try:
        value = json.loads(str(raw or "{}"))
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): [str(s) for s in v] for k, v in value.items() if isinstance(v, list)}
