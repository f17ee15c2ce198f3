"""An embedding cache: a text an embedder has embedded once is never embedded by it again.

The key is the SHA-256 of (the embedder's ``spec``, which names its model and version, and the exact text
embedded), so a full rebuild, a chunker change, a changed contextual header or an embedder switched back and
forth only embed the texts that are new. Where the vectors live:

- embedded index: ``embedding-cache.sqlite3`` in the index folder (one SQLite table);
- Chroma server: a ``<collection>-cache-<embedder digest>`` collection beside the index on the server
  (``ingest.keyed_vectors``); an index folder's cache file, left by an earlier embedded ingest, is read too
  (and copied up), so moving an index to a server re-embeds nothing.

Safe under a crash: every write is one transaction (SQLite's journal, Chroma's log), and every entry carries
a checksum of its key and vector bytes that is checked on every read, so a torn or corrupted entry is a
miss, never a vector. A cache file SQLite cannot read is set aside (``*.corrupt``) and started afresh: the
cache only ever saves time. Bounded: past ``MAX_ENTRIES`` entries the least recently used go first, never
one the live generation uses.

Deliberately left out: LangChain's ``CacheBackedEmbeddings``. Its byte stores have no Chroma-server backend
(the server mode would need a second service), a corrupted value raises instead of being a miss, it counts
neither hits nor misses, and it offers no bound or eviction; the key scheme here is the same idea.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from pydantic import BaseModel
from tqdm import tqdm

from core.settings import Settings
from ingest.chroma_client import friendly_error
from ingest.embeddings import AdvisorEmbeddings
from ingest.keyed_vectors import KeyedVectors
from ingest.store import Store

__all__ = [
    "CACHE_FILE",
    "MAX_ENTRIES",
    "CacheStats",
    "EmbeddingCache",
    "ServerVectors",
    "SqliteVectors",
    "cache_key",
    "open_cache",
]

log = logging.getLogger(__name__)

CACHE_FILE = "embedding-cache.sqlite3"
# ≈ 30 MB of 384-d vectors: room for several generations of a corpus many times this one's 1,200 chunks.
MAX_ENTRIES = 20_000
_SQL_BATCH = 500  # keys per statement: under SQLite's host-parameter limit


def cache_key(spec: str, text: str) -> str:
    """The entry's key: SHA-256 of the embedder's spec and the exact text (hex).

    >>> cache_key("fake:8", "a") == cache_key("fake:8", "a") != cache_key("fake:16", "a")
    True
    """
    return hashlib.sha256(f"{spec}\x00{text}".encode()).hexdigest()


def checksum(key: str, vector: np.ndarray) -> str:
    """What a stored entry must match to be read back: its key and its float32 bytes, hashed together."""
    return hashlib.blake2b(key.encode() + np.asarray(vector, dtype="<f4").tobytes(), digest_size=16).hexdigest()


class Vectors(Protocol):
    """Where cache entries live: (key → float32 vector, checksum, last use)."""

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The verified vectors of the keys that are stored (a bad entry is left out and dropped)."""
        ...

    def put(self, entries: Mapping[str, np.ndarray]) -> None: ...

    def shrink(self, limit: int, keep: set[str]) -> int:
        """Drop the least recently used entries beyond ``limit``, never one in ``keep``; how many went."""
        ...


class SqliteVectors:
    """Entries in one SQLite table; ``read_only`` opens an existing file and never writes to it."""

    def __init__(self, path: Path, read_only: bool = False):
        self.path = path
        self.read_only = read_only

    @contextlib.contextmanager
    def _session(self) -> Iterator[sqlite3.Connection]:
        """One connection per operation, so nothing stays open between ingest steps."""
        if self.read_only:
            db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30)
        try:
            if not self.read_only:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL, "
                    "checksum TEXT NOT NULL, used REAL NOT NULL)"
                )
            yield db
        finally:
            db.close()

    def _set_aside(self, exc: Exception) -> None:
        """An unreadable file: say so, and move it out of the way so that a writer starts afresh."""
        action = "ignored" if self.read_only else "set aside as *.corrupt; a new one is started"
        log.warning("embedding cache %s is unreadable (%s): %s", self.path, exc, action)
        if not self.read_only:
            for suffix in ("", "-journal", "-wal", "-shm"):
                part = self.path.with_name(self.path.name + suffix)
                if part.exists():
                    part.replace(part.with_name(part.name + ".corrupt"))

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        bad: list[str] = []
        try:
            with self._session() as db:
                for start in range(0, len(keys), _SQL_BATCH):
                    part = list(keys[start : start + _SQL_BATCH])
                    marks = ",".join("?" * len(part))
                    rows = db.execute(f"SELECT key, vector, checksum FROM vectors WHERE key IN ({marks})", part)
                    for key, blob, stored_sum in rows:
                        vector = _decode(blob)
                        if vector is not None and checksum(key, vector) == stored_sum:
                            found[key] = vector
                        else:
                            bad.append(key)
                if not self.read_only:
                    now = time.time()
                    with db:
                        db.executemany("UPDATE vectors SET used = ? WHERE key = ?", [(now, k) for k in found])
                        db.executemany("DELETE FROM vectors WHERE key = ?", [(k,) for k in bad])
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)
            return {}
        return found

    def put(self, entries: Mapping[str, np.ndarray]) -> None:
        if self.read_only or not entries:
            return
        now = time.time()
        rows = [(k, _encode(v), checksum(k, v), now) for k, v in entries.items()]
        try:
            with self._session() as db, db:  # one transaction: all of these rows or none
                db.executemany("INSERT OR REPLACE INTO vectors (key, vector, checksum, used) VALUES (?,?,?,?)", rows)
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)

    def shrink(self, limit: int, keep: set[str]) -> int:
        if self.read_only:
            return 0
        try:
            with self._session() as db:
                (total,) = db.execute("SELECT count(*) FROM vectors").fetchone()
                if total <= limit:
                    return 0
                by_age = db.execute("SELECT key FROM vectors ORDER BY used ASC").fetchall()
                drop = [k for (k,) in by_age if k not in keep][: total - limit]
                with db:
                    db.executemany("DELETE FROM vectors WHERE key = ?", [(k,) for k in drop])
                return len(drop)
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)
            return 0


class ServerVectors:
    """Entries in a Chroma collection on the server (ids are keys; checksum and last use in the metadata)."""

    def __init__(self, table: KeyedVectors):
        self.table = table

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        bad: list[str] = []
        try:
            for key, vector, meta in self.table.get(keys):
                if vector.ndim == 1 and vector.size and checksum(key, vector) == meta.get("checksum"):
                    found[key] = vector
                else:
                    bad.append(key)
            if found:
                self.table.update(list(found), {"used": time.time()})
            if bad:
                self.table.delete(bad)
        except Exception as exc:  # chromadb raises plain exceptions; the fix is the server's
            raise friendly_error(exc) from exc
        return found

    def put(self, entries: Mapping[str, np.ndarray]) -> None:
        if not entries:
            return
        now = time.time()
        keys = list(entries)
        vectors = [np.asarray(entries[k], dtype=np.float32) for k in keys]
        try:
            metas = [{"checksum": checksum(k, v), "used": now} for k, v in zip(keys, vectors, strict=True)]
            self.table.put(keys, vectors, metas)
        except Exception as exc:
            raise friendly_error(exc) from exc

    def shrink(self, limit: int, keep: set[str]) -> int:
        total = self.table.count()
        if total <= limit:
            return 0
        ages = sorted((float(m.get("used", 0.0)), k) for k, m in self.table.metadata() if k not in keep)
        drop = [k for _, k in ages[: total - limit]]
        self.table.delete(drop)
        return len(drop)


def _encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def _decode(blob: object) -> np.ndarray | None:
    if not isinstance(blob, bytes) or not blob or len(blob) % 4:
        return None
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


class CacheStats(BaseModel):
    """One ingest's use of the cache: texts found, texts not found, and texts the model embedded."""

    hits: int = 0
    misses: int = 0
    embedded: int = 0


class EmbeddingCache:
    """The cache for one embedder: look texts up, embed only the misses, remember them, stay bounded."""

    def __init__(self, spec: str, primary: Vectors, fallback: Vectors | None = None, max_entries: int = MAX_ENTRIES):
        self.spec = spec
        self.primary = primary
        self.fallback = fallback
        self.max_entries = max_entries

    def embed(
        self,
        texts: Sequence[str],
        embeddings: AdvisorEmbeddings,
        batch: int,
        progress: bool = False,
        what: str = "chunk",
    ) -> tuple[list[list[float]], CacheStats]:
        """One vector per text (from the cache, else embedded in batches and stored batch by batch)."""
        keys = [cache_key(self.spec, t) for t in texts]
        unique = list(dict.fromkeys(keys))
        found = self.primary.get(unique)
        if self.fallback is not None and len(found) < len(unique):
            copied = self.fallback.get([k for k in unique if k not in found])
            self.primary.put(copied)
            found.update(copied)
        first_text = dict(zip(keys, texts, strict=True))
        missing = [k for k in unique if k not in found]
        stats = CacheStats(hits=sum(1 for k in keys if k in found), misses=sum(1 for k in keys if k not in found))
        bar = tqdm(total=len(missing), desc="embedding", unit=what, disable=not progress, file=sys.stderr)
        for start in range(0, len(missing), batch):
            part = missing[start : start + batch]
            vectors = embeddings.embed_corpus([first_text[k] for k in part])
            fresh = {k: np.asarray(v, dtype=np.float32) for k, v in zip(part, vectors, strict=True)}
            # Stored batch by batch: an interrupted ingest keeps what it embedded for the next run.
            self.primary.put(fresh)
            found.update(fresh)
            stats.embedded += len(part)
            bar.update(len(part))
        bar.close()
        return [found[k].tolist() for k in keys], stats

    def settle(self, live_texts: Iterable[str]) -> int:
        """Bound the cache after a publish, keeping every entry of the live generation; entries dropped."""
        keep = {cache_key(self.spec, t) for t in live_texts}
        return self.primary.shrink(max(self.max_entries, len(keep)), keep)


def open_cache(settings: Settings, store: Store, spec: str) -> EmbeddingCache:
    """The cache of ``spec``'s vectors for this index: in its folder, or on its Chroma server."""
    local = settings.index.index_dir / CACHE_FILE
    bound = settings.index.embedding_cache_max_entries
    if not settings.index.chroma_host:
        return EmbeddingCache(spec, SqliteVectors(local), max_entries=bound)
    table = store.keyed_vectors(f"cache-{hashlib.sha256(spec.encode()).hexdigest()[:16]}")
    # An earlier embedded ingest's cache (read only: server mode writes nothing to the folder).
    fallback = SqliteVectors(local, read_only=True) if local.is_file() else None
    return EmbeddingCache(spec, ServerVectors(table), fallback, max_entries=bound)
