"""app.web.workers, app.web.answering and app.web.stages: answer workers give the in-process answers, a dead
worker is replaced, workers that cannot start leave answering in-process, a full queue says it is busy, and
stage timings are recorded only when asked for.

The workers are real processes (``python -m app.web.workers``) over the fake-embedder index; they name the
fake embedder by import path (``fakes:FakeEmbeddings``), which a fresh process can import.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fakes import FakeEmbeddings
from gradio_client import Client
from ports import free_port

from app.models import Answer, Turn
from app.pipeline import Advisor
from app.web.answering import Answering
from app.web.handlers import Runtime
from app.web.stages import StageLog
from app.web.ui import build_app, launch_options
from app.web.workers import MAX_ATTEMPTS, AnswerPool, WorkerGone
from core.settings import Settings

QUESTION = "How much memory does the gateway control plane need?"
FOLLOW_UP = "And how long is a minor release supported?"


@pytest.fixture
def pooled(indexed: Settings) -> Settings:
    return indexed.with_(embedding_backend="fakes:FakeEmbeddings", answer_workers=1)


@pytest.fixture
def pool(pooled: Settings) -> Iterator[AnswerPool]:
    workers = AnswerPool(pooled, 1)
    workers.start(timeout=120)
    try:
        yield workers
    finally:
        workers.close()


def comparable(answer: Answer) -> dict[str, Any]:
    """An answer without its timings (they differ from run to run)."""
    return answer.model_dump(exclude={"timings_ms", "latency_ms"})


async def test_a_worker_answers_exactly_like_the_advisor_in_process(pooled: Settings, pool: AnswerPool) -> None:
    local = Advisor(pooled, FakeEmbeddings())
    answer, pipeline_ms = await pool.run("ask", QUESTION, [], "extractive", 5)
    assert "512 MB" in answer.answer and answer.citations and pipeline_ms > 0
    assert comparable(answer) == comparable(local.ask(QUESTION, [], backend="extractive", k=5))
    # A follow-up: the conversation goes with the question.
    history = [Turn(role="user", content=QUESTION), Turn(role="assistant", content=answer.answer)]
    followed, _ = await pool.run("ask", FOLLOW_UP, history, "extractive", 5)
    assert comparable(followed) == comparable(local.ask(FOLLOW_UP, history, backend="extractive", k=5))
    # The index views come from the worker's Advisor too.
    docs, info, rules = await pool.run("library")
    assert [d.doc_id for d in docs] == [d.doc_id for d in local.library()] and info is not None
    assert rules == local.rules()


async def test_a_question_whose_worker_dies_is_answered_by_the_replacement(pool: AnswerPool) -> None:
    (worker,) = pool._workers
    os.kill(worker.proc.pid, signal.SIGKILL)
    answer, _ = await pool.run("ask", QUESTION, [], "extractive", 5)  # retried: read-only work is safe to redo
    assert "512 MB" in answer.answer
    assert pool._workers[0].proc.pid != worker.proc.pid


async def test_a_request_that_kills_every_worker_fails_after_max_attempts(
    pool: AnswerPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0

    def dying(self: Any, op: str, args: tuple[Any, ...]) -> Any:
        nonlocal calls
        calls += 1
        raise WorkerGone("gone")

    monkeypatch.setattr("app.web.workers._Worker.call", dying)
    monkeypatch.setattr(AnswerPool, "_replace", lambda self, slot, dead: dead)
    with pytest.raises(WorkerGone):
        await pool.run("ask", QUESTION, [], "extractive", 5)
    assert calls == MAX_ATTEMPTS  # it does not take down worker after worker


async def test_no_question_is_lost_when_workers_are_killed_under_load(
    pooled: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """8 clients asking through the chat handler while three answer workers are killed (SIGKILL) one after
    another: every question gets its answer, and no message names an internal exception."""
    rt = Runtime(pooled.with_(answer_workers=2, max_pending=64), Advisor(pooled))
    try:
        assert rt.ready.wait(180) and rt.answering.mode == "2 answer workers"
        pool = rt.answering.pool
        assert pool is not None
        answered: list[str] = []
        done = asyncio.Event()

        async def client(i: int) -> None:
            for j in range(6):
                updates = await ask(rt, QUESTION, session=f"c{i}-{j}")
                answered.append(updates[-1][1][-1]["content"])

        async def killer() -> None:
            for kill in range(3):
                while len(answered) < 6 * (kill + 1) and not done.is_set():
                    await asyncio.sleep(0.01)
                while pool._workers[kill % 2].proc.poll() is not None:  # a slot still being refilled
                    await asyncio.sleep(0.01)
                # a worker with a question in flight (8 clients keep both busy)
                os.kill(pool._workers[kill % 2].proc.pid, signal.SIGKILL)

        with caplog.at_level("WARNING", logger="app.web.workers"):
            kills = asyncio.create_task(killer())
            await asyncio.gather(*(client(i) for i in range(8)))
            done.set()
            await kills
        lost = [content for content in answered if "512 MB" not in content]
        assert len(answered) == 48 and lost == []
        assert not any("WorkerGone" in content or "went wrong" in content for content in answered)
        assert sum("retrying" in r.getMessage() for r in caplog.records) >= 3  # the kills hit questions in flight
    finally:
        rt.close()


async def test_a_cancelled_question_is_dropped_and_the_workers_go_on(pooled: Settings) -> None:
    """Stop (Gradio cancels the handler) while a question waits for a worker: it leaves the count, the
    worker's pipe stays in step, and the next question gets its own answer."""
    rt = Runtime(pooled, Advisor(pooled))
    try:
        assert rt.ready.wait(120) and rt.answering.mode == "1 answer workers"
        request = SimpleNamespace(session_hash="stopped")

        async def run() -> None:
            async for _ in rt.respond(QUESTION, "extractive", 5, "en", None, request):  # type: ignore[arg-type]
                pass

        (worker,) = rt.answering.pool._workers  # type: ignore[union-attr]
        os.kill(worker.proc.pid, signal.SIGSTOP)  # the worker stalls: the questions wait for it
        try:
            tasks = [asyncio.create_task(run()) for _ in range(5)]
            while rt.answering.pending < 5:
                await asyncio.sleep(0.01)
            for task in tasks:
                task.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            assert all(isinstance(r, asyncio.CancelledError) for r in results)
            assert rt.answering.pending == 0
        finally:
            os.kill(worker.proc.pid, signal.SIGCONT)  # it answers the question it had, which nobody awaits
        updates = await ask(rt, "How long is a gateway minor release supported?")
        assert "fourteen months" in updates[-1][1][-1]["content"]
    finally:
        rt.close()


async def test_workers_that_cannot_start_leave_answering_in_this_process(indexed: Settings) -> None:
    # "fake" is registered only in this process: a worker cannot build that embedder.
    answering = Answering(indexed, Advisor(indexed, FakeEmbeddings()), workers=1)
    answering.start()
    try:
        assert answering.pool is None and answering.mode == "in-process"
        stages = StageLog(None).begin("s")
        answer = await answering.ask(QUESTION, [], 5, stages)
        assert "512 MB" in answer.answer and stages.pipeline_ms > 0
    finally:
        answering.close()


def runtime(settings: Settings) -> Runtime:
    rt = Runtime(settings, Advisor(settings, FakeEmbeddings()), workers=0)
    assert rt.ready.wait(60)
    return rt


async def ask(rt: Runtime, question: str, session: str = "s1") -> list[Any]:
    request = SimpleNamespace(session_hash=session)
    return [update async for update in rt.respond(question, "extractive", 5, "en", None, request)]  # type: ignore[arg-type]


async def test_a_question_beyond_the_pending_limit_is_told_the_advisor_is_busy(indexed: Settings) -> None:
    rt = runtime(indexed.with_(max_pending=2))
    try:
        rt.answering.pending = 2  # two questions answering or waiting already
        (busy,) = await ask(rt, QUESTION)
        textbox, chat, _, _, conv = busy
        assert textbox == {"__type__": "update"}  # the question stays in the box, to ask again
        assert "⚠️" in chat[-1]["content"] and "busy" in chat[-1]["content"] and "2 questions" in chat[-1]["content"]
        assert conv["turns"] == []  # not part of the conversation's history
        rt.answering.pending = 1
        updates = await ask(rt, QUESTION)
        assert "512 MB" in updates[-1][1][-1]["content"]
        assert rt.answering.pending == 1  # the answered question left the count
    finally:
        rt.close()


async def test_stage_timings_are_recorded_only_when_a_file_is_set(indexed: Settings, tmp_path: Path) -> None:
    assert Settings().web.stage_log is None and not runtime(indexed).stages.enabled
    log = tmp_path / "stages.jsonl"
    rt = runtime(indexed.with_(stage_log=log))
    try:
        await ask(rt, QUESTION, session="abc")
        await ask(rt, "x" * (indexed.answer.max_question_chars + 1), session="long")  # refused: not timed
    finally:
        rt.close()
    (row,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert row["session"] == "abc" and row["pipeline_ms"] > 0 and row["render_ms"] > 0
    assert row["handler_ms"] >= row["pipeline_ms"] + row["render_ms"] and row["started"] > 1.6e9


def test_the_app_answers_through_its_workers(pooled: Settings) -> None:
    rt = Runtime(pooled, Advisor(pooled))
    demo = build_app(pooled, runtime=rt)
    options = {**launch_options(pooled), "server_port": free_port(), "prevent_thread_lock": True, "quiet": True}
    _, url, _ = demo.launch(**options)
    try:
        client = Client(url, verbose=False)
        _, chat, passages, _ = client.predict(QUESTION, "extractive", 5, "en", api_name="/ask")
        assert "512 MB" in chat[-1]["content"][0]["text"] and "Gateway Operations Guide" in passages
        assert rt.answering.mode == "1 answer workers" and rt.answering.pending == 0
        _, chat, _, _ = client.predict(FOLLOW_UP, "extractive", 5, "en", api_name="/ask")  # same session
        assert "fourteen months" in chat[-1]["content"][0]["text"]
        library, _ = client.predict("en", api_name="/library")
        assert "Gateway Operations Guide" in library
    finally:
        demo.close()
        rt.close()
