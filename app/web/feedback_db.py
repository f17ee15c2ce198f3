"""The feedback store: one table of ratings in SQLite (the data folder) or PostgreSQL, one upsert per rating.

``open_store(settings)`` opens ``ADVISOR_DATABASE_URL`` when it names a PostgreSQL database
(``postgresql://user:pass@host:5432/db``), else ``<data folder>/advisor.db`` (SQLite in WAL mode, so several
app processes on one machine read while one writes; a writer waits up to ``BUSY_MS`` for another). On open
the schema is created or migrated to ``SCHEMA_VERSION`` — one transaction, serialised across processes (an
immediate transaction in SQLite, an advisory lock in PostgreSQL) — and a feedback JSONL file left by an
earlier version (``<data folder>/feedback.jsonl``) is imported once: every readable line, the latest per
message id, lines without an id each under an id derived from the line. The file is left in place.

A rating is ``INSERT … ON CONFLICT (message_id) DO UPDATE``: a later vote or comment on the same answer
replaces the earlier one, and its cost does not grow with the number of ratings.

Both drivers are called directly (``sqlite3``, ``psycopg``) with the same SQL, written with ``%(name)s``
parameters and rewritten to ``:name`` for SQLite. Measured (2 cores): see docs/deployment.md.

Deliberately left out: an ORM, other databases, and deleting ratings (export them with ``GET /api/feedback``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from app.web.feedback import FeedbackRecord, load_feedback
from core.settings import Settings

SCHEMA_VERSION = 1
BUSY_MS = 30_000
_ADVISORY_KEY = 2_028_001  # PostgreSQL advisory lock held while the schema is migrated
_IMPORT_KEY = "imported:feedback.jsonl"
_FIELDS = ("message_id", "timestamp", "question", "answer", "citations", "rating", "comment", "refused", "language",
           "backend")  # fmt: skip

# Each migration takes the schema from version n-1 to n; the list only grows.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS feedback (
            message_id TEXT PRIMARY KEY,
            timestamp TEXT NOT NULL,
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            citations TEXT NOT NULL,
            rating TEXT NOT NULL CHECK (rating IN ('up', 'down')),
            comment TEXT NOT NULL,
            refused BOOLEAN NOT NULL,
            language TEXT NOT NULL,
            backend TEXT NOT NULL)""",
        "CREATE INDEX IF NOT EXISTS feedback_by_time ON feedback (timestamp, message_id)",
    ),
)
_UPSERT = (
    f"INSERT INTO feedback ({', '.join(_FIELDS)}) VALUES ({', '.join(f'%({f})s' for f in _FIELDS)}) "
    "ON CONFLICT (message_id) DO UPDATE SET " + ", ".join(f"{f} = excluded.{f}" for f in _FIELDS if f != "message_id")
)
_SELECT = f"SELECT {', '.join(_FIELDS)} FROM feedback ORDER BY timestamp, message_id"


class StoreError(RuntimeError):
    """The feedback database cannot be opened or written (the message says which and why)."""


class _Cursor(Protocol):
    def execute(self, sql: str, params: Any = ..., /) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def fetchone(self) -> Any: ...


class FeedbackStore:
    """Ratings in one database; safe to use from several threads and several processes."""

    def __init__(self, url: str, data_dir: Path) -> None:
        self.url = url
        self.postgres = url.startswith(("postgresql://", "postgres://"))
        self.data_dir = data_dir
        self._local = threading.local()  # one connection per thread: neither driver shares one across threads
        self._lock = threading.Lock()
        self._open: list[Any] = []
        with self._transaction(migrate=True) as cur:
            self._migrate(cur)
        self._import_jsonl(data_dir / "feedback.jsonl")

    @property
    def where(self) -> str:
        """The database for messages: the SQLite file, or PostgreSQL's host and database (never a password)."""
        if not self.postgres:
            return self.url
        return re.sub(r"//[^@/]*@", "//", self.url)

    # --- connections ----------------------------------------------------------------------------------
    def _connect(self) -> Any:
        try:
            if self.postgres:
                import psycopg

                return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            Path(self.url).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.url, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # safe with WAL: a crash loses no committed rating
            return conn
        except Exception as exc:
            raise StoreError(f"cannot open the feedback database {self.where}: {exc}") from exc

    def _conn(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            with self._lock:
                self._open.append(conn)
        return conn

    @contextlib.contextmanager
    def _transaction(self, migrate: bool = False) -> Iterator[_Cursor]:
        conn = self._conn()
        try:
            if self.postgres:
                with conn.transaction(), conn.cursor() as cur:
                    if migrate:
                        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_ADVISORY_KEY,))
                    yield cur
                return
            cur = conn.cursor()
            # IMMEDIATE takes the write lock at once: two processes never both migrate or import.
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteCursor(cur)
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
        except StoreError:
            raise
        except Exception as exc:
            self._drop()
            raise StoreError(f"feedback database {self.where}: {exc}") from exc

    def _drop(self) -> None:
        """Forget this thread's connection (after an error: the next use connects again)."""
        conn: Any = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is None:
            return
        with self._lock:
            if conn in self._open:
                self._open.remove(conn)
        with contextlib.suppress(Exception):
            conn.close()

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            with contextlib.suppress(Exception):
                conn.close()
        self._local = threading.local()

    # --- schema ---------------------------------------------------------------------------------------
    def _migrate(self, cur: _Cursor) -> None:
        cur.execute("CREATE TABLE IF NOT EXISTS advisor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        cur.execute("SELECT value FROM advisor_meta WHERE key = %(key)s", {"key": "schema_version"})
        row = cur.fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreError(f"the feedback database {self.where} has schema {version}, newer than this app's")
        for statements in _MIGRATIONS[version:]:
            for sql in statements:
                cur.execute(sql)
        _set_meta(cur, "schema_version", str(SCHEMA_VERSION))

    def schema_version(self) -> int:
        with self._transaction() as cur:
            cur.execute("SELECT value FROM advisor_meta WHERE key = %(key)s", {"key": "schema_version"})
            return int(cur.fetchone()[0])

    def _import_jsonl(self, path: Path) -> None:
        """The JSONL file of an earlier version, once (the marker row is written in the same transaction)."""
        if not path.is_file():
            return
        with self._transaction(migrate=True) as cur:
            cur.execute("SELECT value FROM advisor_meta WHERE key = %(key)s", {"key": _IMPORT_KEY})
            if cur.fetchone():
                return
            records = load_feedback(path)
            for line_no, record in enumerate(records):
                if not record.message_id:
                    digest = hashlib.sha1(record.model_dump_json().encode()).hexdigest()[:16]
                    record = record.model_copy(update={"message_id": f"jsonl-{line_no}-{digest}"})
                cur.execute(_UPSERT, _row(record))
            _set_meta(cur, _IMPORT_KEY, json.dumps({"path": str(path), "records": len(records)}))

    # --- ratings --------------------------------------------------------------------------------------
    def save(self, record: FeedbackRecord) -> FeedbackRecord:
        """Store one rating: a new one, or the latest for its message id. Returns what was stored."""
        if not record.message_id:
            raise ValueError("a rating needs a message id")
        with self._transaction() as cur:
            cur.execute(_UPSERT, _row(record))
        return record

    def all(self) -> list[FeedbackRecord]:
        """Every rating, oldest first."""
        with self._transaction() as cur:
            cur.execute(_SELECT)
            rows = cur.fetchall()
        return [_record(row) for row in rows]

    def ping(self) -> None:
        """Raises ``StoreError`` when the database cannot be reached."""
        with self._transaction() as cur:
            cur.execute("SELECT 1")
            cur.fetchone()


class _SqliteCursor:
    """sqlite3's cursor taking the shared ``%(name)s`` parameters."""

    _PARAM = re.compile(r"%\((\w+)\)s")

    def __init__(self, cur: sqlite3.Cursor) -> None:
        self._cur = cur

    def execute(self, sql: str, params: Any = ()) -> Any:
        if isinstance(params, tuple) and params:
            sql = sql.replace("%s", "?")
        return self._cur.execute(self._PARAM.sub(r":\1", sql), params)

    def fetchall(self) -> list[Any]:
        return self._cur.fetchall()

    def fetchone(self) -> Any:
        return self._cur.fetchone()


def _set_meta(cur: _Cursor, key: str, value: str) -> None:
    cur.execute(
        "INSERT INTO advisor_meta (key, value) VALUES (%(key)s, %(value)s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        {"key": key, "value": value},
    )


def _row(record: FeedbackRecord) -> dict[str, Any]:
    row = record.model_dump(mode="json")
    row["citations"] = json.dumps(row["citations"], ensure_ascii=False)
    return row


def _record(row: tuple[Any, ...]) -> FeedbackRecord:
    values = dict(zip(_FIELDS, row, strict=True))
    values["citations"] = json.loads(values["citations"])
    values["refused"] = bool(values["refused"])
    return FeedbackRecord.model_validate(values)


def database_url(settings: Settings) -> str:
    """``ADVISOR_DATABASE_URL``, or the SQLite file in the data folder."""
    url = settings.web.database_url.get_secret_value() if settings.web.database_url else ""
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///") or str(settings.web.data_dir / "advisor.db")
    return url or str(settings.web.data_dir / "advisor.db")


def open_store(settings: Settings) -> FeedbackStore:
    """The store the settings name, schema migrated and any old JSONL file imported; raises ``StoreError``."""
    return FeedbackStore(database_url(settings), settings.web.data_dir)


class LazyStore:
    """The store, opened on first use and again after a failed open (a database that was down may be back)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._store: FeedbackStore | None = None
        self._lock = threading.Lock()

    def get(self) -> FeedbackStore:
        """The open store; raises ``StoreError`` while the database cannot be opened."""
        with self._lock:
            if self._store is None:
                self._store = open_store(self.settings)
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
