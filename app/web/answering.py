"""Where the web UI's questions are answered, and how many may wait.

Extractive answers and the index views (library, recommendation, a source's sections) are CPU-bound:
they run in the answer workers (``app.web.workers``), one process per core, so answering uses every core
and never blocks the event loop. With no workers (one core, ``ADVISOR_ANSWER_WORKERS=0``, an Advisor
handed in by the caller, or workers that could not start) they run in threads of this process, at most
``web.concurrency`` at once. LLM backends stream from this process (they wait on a server, not the CPU),
within the same limit. At most ``web.max_pending`` questions are accepted at once, answering or waiting;
``admit`` refuses one more, and the UI says it is busy instead of letting the wait grow without bound.

Deliberately left out: rendering and the chat's conversation state (``app.web.handlers``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable, Generator, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any, TypeVar

from app.models import Answer, Turn
from app.pipeline import Advisor
from app.web import workers
from app.web.stages import Stages
from app.web.workers import AnswerPool, WorkersUnavailable
from core.machine import usable_cores
from core.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")

WARM_UP_WAIT_S = 300.0  # the longest the workers may take to load the models and the index


def worker_count(settings: Settings) -> int:
    """Answer workers to start: the setting, or one per core this process may use (none on one core)."""
    if settings.web.answer_workers is not None:
        return settings.web.answer_workers
    cores = usable_cores()
    return cores if cores > 1 else 0


async def in_thread(executor: Executor, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a thread. A cancelled caller still waits for the thread to finish, so what the call
    holds (a slot, a generator) is never used by two callers at once."""
    future = asyncio.get_running_loop().run_in_executor(executor, fn, *args)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await asyncio.wait([future])
        raise


_BACKGROUND: set[asyncio.Task[Any]] = set()  # tasks left to run down: referenced until they end


async def until_stopped(source: AsyncGenerator[T, None], stop: asyncio.Event) -> AsyncGenerator[T, None]:
    """``source``'s items until ``stop`` is set, at once: an item still being computed (a worker's answer, an
    LLM server's next chunk) is not waited for; ``source`` is closed in the background when it yields again
    (closing an LLM stream hangs up on its server)."""
    items: asyncio.Queue[tuple[bool, Any]] = asyncio.Queue()  # (done, item or the error)

    async def pump() -> None:
        try:
            async with contextlib.aclosing(source) as parts:
                async for part in parts:
                    items.put_nowait((False, part))
        except Exception as exc:
            items.put_nowait((True, exc))
            return
        items.put_nowait((True, None))

    task = asyncio.create_task(pump())
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        while True:
            get = asyncio.ensure_future(items.get())
            await asyncio.wait({get, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not get.done():
                get.cancel()
                return
            done, item = get.result()
            if isinstance(item, Exception):
                raise item
            if done:
                return
            yield item
    finally:
        stopped.cancel()
        task.cancel()


def _closable(stream: Iterator[Answer]) -> Generator[Answer, None, None]:
    """The advisor's stream as the generator it is (closing it hangs up on an LLM server still sending)."""
    if isinstance(stream, Generator):
        return stream
    return (answer for answer in stream)


class Answering:
    """The advisor's work for the UI, in the workers or in this process; see the module docstring."""

    def __init__(self, settings: Settings, advisor: Advisor, workers: int) -> None:
        self.settings = settings
        self.advisor = advisor
        self.pool: AnswerPool | None = AnswerPool(settings, workers) if workers > 0 else None
        self.limit = settings.web.max_pending
        self.pending = 0  # questions accepted and not yet answered (changed on the event loop only)
        self._threads = ThreadPoolExecutor(max_workers=settings.web.concurrency, thread_name_prefix="answer")
        self._slots = asyncio.Semaphore(settings.web.concurrency)

    @property
    def mode(self) -> str:
        return f"{self.pool.size} answer workers" if self.pool is not None else "in-process"

    def live_workers(self) -> int:
        """Answer worker processes running now (0 when answering in this process)."""
        return self.pool.live() if self.pool is not None else 0

    def start(self) -> None:
        """Load the models (blocking: the UI calls it in a background thread). Workers that cannot start
        leave answering to this process, with a warning in the log."""
        if self.pool is not None:
            try:
                self.pool.start(WARM_UP_WAIT_S)
                return
            except WorkersUnavailable as exc:
                log.warning("answering in the UI process: %s", exc)
                self.pool = None
        self.advisor.warm_up()

    # --- admission -------------------------------------------------------------------------------------
    def admit(self) -> bool:
        """Accept one more question, unless ``limit`` are already answering or waiting."""
        if self.pending >= self.limit:
            return False
        self.pending += 1
        return True

    def release(self) -> None:
        self.pending = max(0, self.pending - 1)

    # --- work ------------------------------------------------------------------------------------------
    async def ask(self, question: str, history: Sequence[Turn], k: int, stages: Stages) -> Answer:
        """The extractive answer: in a worker, or in a thread of this process."""
        args = (question, list(history), "extractive", k)
        if self.pool is not None:
            answer, pipeline_ms = await self.pool.run("ask", *args, stages=stages)
        else:
            t0 = time.perf_counter()
            async with self._slots:
                stages.add("worker_wait_ms", (time.perf_counter() - t0) * 1000)
                answer, pipeline_ms = await in_thread(self._threads, workers.ask, self.advisor, *args)
        stages.add("pipeline_ms", pipeline_ms)
        return answer

    async def stream(
        self, question: str, history: Sequence[Turn], backend: str, k: int, stages: Stages
    ) -> AsyncGenerator[Answer, None]:
        """An LLM backend's partial answers, streamed from this process, one thread hop per part."""
        t0 = time.perf_counter()
        async with self._slots:
            stages.add("worker_wait_ms", (time.perf_counter() - t0) * 1000)
            stream = _closable(self.advisor.stream(question, history, backend=backend, k=k))
            try:
                while True:
                    t1 = time.perf_counter()
                    partial = await in_thread(self._threads, next, stream, None)
                    stages.add("pipeline_ms", (time.perf_counter() - t1) * 1000)
                    if partial is None:
                        return
                    yield partial
            finally:
                stream.close()

    async def run(self, op: str, *args: Any) -> Any:
        """One of ``workers.OPS`` (library, recommend, sections) where answers are computed."""
        if self.pool is not None:
            return await self.pool.run(op, *args)
        return await in_thread(self._threads, workers.OPS[op], self.advisor, *args)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
        with contextlib.suppress(RuntimeError):
            self._threads.shutdown(wait=False)
