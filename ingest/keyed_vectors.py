"""A plain key → vector Chroma collection, never searched: where the embedding cache lives in server mode.

Ids are the keys; each entry holds one vector and a little scalar metadata. Every call is batched, so a
large cache stays bounded in memory and request size. Chroma applies each call as one transaction.

Deliberately left out: nearest-neighbour search, and what the keys and metadata mean (``ingest.embed_cache``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from chromadb.api.models.Collection import Collection

__all__ = ["KeyedVectors"]

_BATCH = 500


class KeyedVectors:
    """Vectors stored by key with a little metadata, never searched (the embedding cache in server mode)."""

    def __init__(self, collection: Collection):
        self._col = collection

    def count(self) -> int:
        return int(self._col.count())

    def get(self, keys: Sequence[str]) -> list[tuple[str, np.ndarray, dict[str, Any]]]:
        """(key, vector, metadata) of the keys that are stored, in batches."""
        out: list[tuple[str, np.ndarray, dict[str, Any]]] = []
        for start in range(0, len(keys), _BATCH):
            got = self._col.get(ids=list(keys[start : start + _BATCH]), include=["embeddings", "metadatas"])
            embs = got.get("embeddings")
            metas = got.get("metadatas") or []
            for i, key in enumerate(got["ids"]):
                vector = np.asarray(embs[i] if embs is not None else [], dtype=np.float32)
                out.append((key, vector, dict(metas[i] or {}) if i < len(metas) else {}))
        return out

    def put(self, keys: Sequence[str], vectors: Sequence[np.ndarray], metadatas: Sequence[Mapping[str, Any]]) -> None:
        for start in range(0, len(keys), _BATCH):
            end = start + _BATCH
            self._col.upsert(
                ids=list(keys[start:end]),
                embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                metadatas=[dict(m) for m in metadatas[start:end]],
            )

    def update(self, keys: Sequence[str], metadata: Mapping[str, Any]) -> None:
        """Merge ``metadata`` into every entry of ``keys``."""
        for start in range(0, len(keys), _BATCH):
            part = list(keys[start : start + _BATCH])
            self._col.update(ids=part, metadatas=[dict(metadata) for _ in part])

    def _pages(self, include: list[Any]) -> Iterator[Any]:
        """Every entry with the fields ``include`` names, one page of results at a time."""
        total = self.count()
        for offset in range(0, total, _BATCH * 4):
            yield self._col.get(limit=_BATCH * 4, offset=offset, include=include)

    def metadata(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(key, metadata) of every entry, read in pages."""
        for got in self._pages(["metadatas"]):
            metas = got.get("metadatas") or []
            for i, key in enumerate(got["ids"]):
                yield key, dict(metas[i] or {}) if i < len(metas) else {}

    def vectors(self) -> tuple[list[str], np.ndarray]:
        """Every key and its vector (rows in the order of the keys), read in pages."""
        keys: list[str] = []
        rows: list[np.ndarray] = []
        for got in self._pages(["embeddings"]):
            embs = got.get("embeddings")
            keys.extend(got["ids"])
            if embs is not None and len(embs):
                rows.append(np.asarray(embs, dtype=np.float32))
        return keys, (np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32))

    def delete(self, keys: Sequence[str]) -> None:
        for start in range(0, len(keys), _BATCH):
            self._col.delete(ids=list(keys[start : start + _BATCH]))
