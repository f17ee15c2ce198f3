"""Opening a Chroma client (embedded folder or server) and turning Chroma's errors into ``IndexUnavailable``.

chromadb caches one client system per folder for the whole process; ``open_client`` notices when the
folder's database file was deleted or replaced since it was opened and reads it afresh. Errors become
``IndexUnavailable`` with the fix a person can apply (start the server, delete a corrupted folder, rebuild).

Deliberately left out: collections, generations and everything about their contents (``ingest.store``).
"""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path

import chromadb
from chromadb.api import ClientAPI
from chromadb.config import Settings as ChromaSettings

from core.contract import IndexUnavailable
from core.settings import Settings

__all__ = ["SQLITE", "file_id", "friendly_error", "is_not_found", "open_client", "system_token"]

SQLITE = "chroma.sqlite3"

# chromadb keeps one client system per path for the whole process and hands it to every later
# PersistentClient on that path, even after the folder was deleted or replaced (it then keeps serving
# the deleted file) or after it failed to open. We remember which file each path was opened on, so a
# stale or failed system can be dropped and the folder read afresh, and number each system we see, so a
# store holding a dropped one knows even when the new file got the old one's inode number.
_OPENED: dict[str, tuple[int, int, int]] = {}
_SERIAL = itertools.count(1)


def open_client(settings: Settings) -> ClientAPI:
    """Embedded PersistentClient in ``index_dir`` by default; HttpClient when a host is configured."""
    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if settings.index.chroma_host:
        try:
            return chromadb.HttpClient(
                host=settings.index.chroma_host, port=settings.index.chroma_port, settings=chroma_settings
            )
        except Exception as exc:  # chromadb raises plain ValueError/ConnectionError here
            raise IndexUnavailable(
                f"Chroma server at {settings.index.chroma_host}:{settings.index.chroma_port} is unreachable ({exc}); "
                "start it or unset ADVISOR_CHROMA_HOST"
            ) from exc
    path = str(settings.index.index_dir)
    sqlite = settings.index.index_dir / SQLITE
    try:
        settings.index.index_dir.mkdir(parents=True, exist_ok=True)
        if path in _OPENED and file_id(sqlite) != _OPENED[path][:2]:
            _forget_system(path)
        client = chromadb.PersistentClient(path=path, settings=chroma_settings)
    except Exception as exc:
        _forget_system(path)
        raise IndexUnavailable(
            f"index folder {settings.index.index_dir} is unreadable or corrupted ({exc}); "
            "delete the folder and run `ingest` again"
        ) from exc
    opened = file_id(sqlite)
    if opened is not None and (path not in _OPENED or _OPENED[path][:2] != opened):
        _OPENED[path] = (*opened, next(_SERIAL))
    return client


def system_token(index_dir: Path) -> tuple[int, int, int] | None:
    """Which file and which client system serve ``index_dir`` in this process now (None: not open)."""
    return _OPENED.get(str(index_dir))


def file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _forget_system(path: str) -> None:
    """Drop chromadb's cached system for ``path`` (private API, hence the defensive access)."""
    from chromadb.api.shared_system_client import SharedSystemClient

    _OPENED.pop(path, None)
    system = SharedSystemClient._identifier_to_system.pop(path, None)
    SharedSystemClient._identifier_to_refcount.pop(path, None)
    if system is not None:
        with contextlib.suppress(Exception):
            system.stop()


def is_not_found(exc: Exception) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return "notfound" in text or "does not exist" in text or "not found" in text


def friendly_error(exc: Exception, index_dir: Path | None = None) -> IndexUnavailable:
    text = str(exc)
    lowered = text.lower()
    if any(s in lowered for s in ("connect", "connection", "timed out", "refused")):
        return IndexUnavailable(f"Chroma server is unreachable ({text}); start it and try again")
    if index_dir is not None and any(s in lowered for s in ("database", "sqlite", "disk i/o", "malformed")):
        # `ingest --rebuild` cannot help here: it opens the same broken database.
        return IndexUnavailable(
            f"index folder {index_dir} is corrupted ({text}); delete the folder and run `ingest` again"
        )
    return IndexUnavailable(f"index could not be read ({text}); run `ingest --rebuild`")
