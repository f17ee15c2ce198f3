"""app.web.feedback_db: the schema, one upsert per rating, the JSONL import, several threads and processes.

SQLite (a fresh database per test, in tmp_path), and the same behaviour against a real PostgreSQL started
from Debian's packages (the ``postgres`` fixture; skipped when it is not installed, failed in CI).
"""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest
from postgres import PostgresServer

from app.models import Answer, Citation
from app.web.feedback import FeedbackRecord, make_record, records_jsonl
from app.web.feedback_db import SCHEMA_VERSION, FeedbackStore, StoreError, database_url, open_store
from core.settings import Settings, SettingsError


def _answer(question: str = "Alphaの GPU 利用率は？") -> Answer:
    cite = Citation(n=1, doc_id="scheduler-ja", chunk_id="scheduler-ja#0", title="メモ", quote="GPUを92%まで")
    return Answer(question=question, answer="GPUを92%まで [1]", citations=[cite], language="ja")


def _record(message_id: str, rating: str = "up", comment: str = "", question: str = "Q") -> FeedbackRecord:
    return make_record(_answer(question), rating, comment, message_id=message_id)  # type: ignore[arg-type]


def test_default_is_sqlite_in_the_data_folder_in_wal_mode(settings: Settings) -> None:
    store = open_store(settings)
    assert database_url(settings) == str(settings.web.data_dir / "advisor.db")
    store.save(_record("m1"))
    with sqlite3.connect(settings.web.data_dir / "advisor.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT count(*) FROM feedback").fetchone()[0] == 1
    assert store.schema_version() == SCHEMA_VERSION
    store.close()


def test_a_rating_is_one_upsert_by_message_id(settings: Settings) -> None:
    store = open_store(settings)
    store.save(_record("m1", "down", question="Q1"))
    store.save(_record("m2", "up", question="Q2"))
    store.save(_record("m1", "up", "now with a comment", question="Q1"))  # 👎 then 👍 on the same answer
    records = {r.message_id: r for r in store.all()}
    assert set(records) == {"m1", "m2"}
    assert records["m1"].rating == "up" and records["m1"].comment == "now with a comment"
    assert records["m1"].question == "Q1" and records["m1"].citations[0].doc_id == "scheduler-ja"
    with pytest.raises(ValueError):
        store.save(_record(""))
    store.close()


def test_reopening_keeps_ratings_and_schema(settings: Settings) -> None:
    open_store(settings).save(_record("m1"))
    again = open_store(settings)
    assert [r.message_id for r in again.all()] == ["m1"] and again.schema_version() == SCHEMA_VERSION


def test_a_newer_schema_is_refused(settings: Settings) -> None:
    open_store(settings).close()
    with sqlite3.connect(settings.web.data_dir / "advisor.db") as conn:
        conn.execute("UPDATE advisor_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="newer"):
        open_store(settings)


def test_old_jsonl_file_is_imported_once_with_nothing_lost(settings: Settings) -> None:
    path = settings.web.feedback_path
    path.parent.mkdir(parents=True)
    old = [_record("m1", "down"), _record("m2"), _record("", question="no id 1"), _record("", question="no id 2")]
    path.write_text(records_jsonl(old) + '{"question": "half a line\n', encoding="utf-8")
    store = open_store(settings)
    got = store.all()
    assert len(got) == 4 and {r.question for r in got} >= {"no id 1", "no id 2"}
    assert all(r.message_id for r in got)
    store.save(_record("m1", "up"))
    store.close()
    # A second start (or a second process) does not import again: m1 stays 👍, nothing doubles.
    again = open_store(settings)
    assert len(again.all()) == 4 and {r.message_id: r.rating for r in again.all()}["m1"] == "up"
    assert path.exists()  # the file is left in place


def test_concurrent_threads_each_store_once(settings: Settings) -> None:
    store = open_store(settings)
    threads = [threading.Thread(target=store.save, args=(_record(f"m{i % 25}", question=f"q{i}"),)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.message_id for r in store.all()) == sorted(f"m{i}" for i in range(25))


def _save_many(db: str, data: str, prefix: str) -> None:
    store = FeedbackStore(db, Path(data))
    for i in range(40):
        store.save(_record(f"{prefix}{i}"))
    store.close()


def test_several_processes_on_one_sqlite_file(settings: Settings) -> None:
    db, data = database_url(settings), str(settings.web.data_dir)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_save_many, args=(db, data, p)) for p in "abc"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(open_store(settings).all()) == 120


def test_database_url_setting(settings: Settings, tmp_path: Path) -> None:
    s = settings.with_(database_url=f"sqlite:///{tmp_path}/elsewhere.db")
    assert database_url(s) == f"{tmp_path}/elsewhere.db"
    open_store(s).save(_record("m1"))
    assert (tmp_path / "elsewhere.db").exists()
    with pytest.raises(SettingsError, match="ADVISOR_DATABASE_URL='\\*\\*\\*'"):
        settings.with_(database_url="mysql://u:secret@h/db")


def test_unreachable_postgres_is_a_store_error_without_the_password(settings: Settings) -> None:
    s = settings.with_(database_url="postgresql://u:hunter2@127.0.0.1:1/db")
    with pytest.raises(StoreError) as info:
        open_store(s)
    assert "hunter2" not in str(info.value) and "127.0.0.1" in str(info.value)


def test_records_jsonl_round_trip(tmp_path: Path) -> None:
    from app.web.feedback import load_feedback

    path = tmp_path / "f.jsonl"
    path.write_text(records_jsonl([_record("m1", comment="とても良い")]), encoding="utf-8")
    assert "とても良い" in path.read_text(encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8"))["message_id"] == "m1"
    assert load_feedback(path)[0].comment == "とても良い"


def test_postgresql_schema_upsert_import_and_processes(settings: Settings, postgres: PostgresServer) -> None:
    pg = settings.with_(database_url=postgres.create_database("feedback_test"))
    path = pg.web.feedback_path
    path.parent.mkdir(parents=True)
    path.write_text(records_jsonl([_record("old-1", "down"), _record("", question="no id")]), encoding="utf-8")
    store = open_store(pg)
    assert store.schema_version() == SCHEMA_VERSION and len(store.all()) == 2  # imported once
    store.save(_record("old-1", "up", "changed my mind"))
    assert {r.message_id: r.rating for r in open_store(pg).all()}["old-1"] == "up"  # no second import
    assert not (pg.web.data_dir / "advisor.db").exists()
    url = database_url(pg)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_save_many, args=(url, str(pg.web.data_dir), p)) for p in "ab"]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    records = store.all()
    assert len(records) == 82 and records[0].citations[0].doc_id == "scheduler-ja"
    store.close()
