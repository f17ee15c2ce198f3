"""Answer workers: warm Advisors in their own processes, so extractive answering uses every core.

An extractive answer is CPU-bound Python, numpy and the embedder; in the UI process its threads share one
GIL with the event loop. Each worker is ``python -m app.web.workers``: it builds its own ``Advisor`` from
the UI's settings, loads the models and the index, answers two warm-up questions (the lazy caches), says
it is ready, then serves one request at a time over its stdin/stdout (length-prefixed pickles: a private
pipe between the UI and the process it started). ``AnswerPool`` queues each request for the next free
worker; the event loop awaits it without blocking, and a request cancelled before a worker took it is
skipped. A worker that dies is replaced, and the request it held goes back to the queue for the next
free worker (every request is read-only, so running it again is safe); a request that has already taken
down ``MAX_ATTEMPTS`` workers fails instead of taking down more. With one engine thread per worker
(``OMP_NUM_THREADS=1``) the workers do not fight over the cores.

``OPS`` are the requests a worker serves — an answer, the library view, a recommendation, a source's
sections — each a function of the Advisor, so the UI runs the same ones in-process when it has no workers.

Deliberately left out: the LLM backends (they wait on a server rather than the CPU, and stream: they stay
in the UI process), admission control (``app.web.handlers`` bounds what may wait), and pickling anything
but the app's own types across the pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: a worker imports the pipeline after its environment is set
    from app.models import Answer, Profile, Recommendation, Turn
    from app.pipeline import Advisor
    from app.web.stages import Stages
    from core.contract import DocumentInfo, IndexInfo, Rule, StoredChunk
    from core.settings import Settings

log = logging.getLogger(__name__)

# One thread per numeric library in a worker: the workers are the parallelism.
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# Fill what the first real question would otherwise pay for (the Japanese tokenizer, the situation reader).
WARM_QUESTIONS = (
    "Which should we choose for distributed LLM training on a GPU cluster: Slurm or Kubernetes?",
    "KubernetesでGPUのジョブをスケジュールするには？",
)
RESTART_WAIT_S = 300.0  # a replacement worker loads the models and the index like the first ones
RETRY_S = 5.0  # between attempts to replace a worker that will not start
MAX_ATTEMPTS = 3  # workers a request may see die under it before it fails (a request that kills each one)
_HEADER = struct.Struct("!I")


class WorkersUnavailable(RuntimeError):
    """The worker processes could not start; the UI answers in its own process instead."""


class WorkerGone(RuntimeError):
    """A worker process ended in the middle of a request (it is replaced)."""


# --- the requests a worker serves (also run in-process) ----------------------------------------------
def ask(advisor: Advisor, question: str, history: Sequence[Turn], backend: str, k: int) -> tuple[Answer, float]:
    """(the final answer, milliseconds in the pipeline)."""
    t0 = time.perf_counter()
    answer = advisor.ask(question, history, backend=backend, k=k)
    return answer, (time.perf_counter() - t0) * 1000


def library(advisor: Advisor) -> tuple[list[DocumentInfo], IndexInfo | None, list[Rule]]:
    return advisor.library(), advisor.status(), advisor.rules()


def recommend(advisor: Advisor, profile: Profile) -> Recommendation:
    return advisor.recommend(profile)


def sections(advisor: Advisor, wanted: Sequence[tuple[str, str]]) -> list[list[StoredChunk]]:
    """The chunks of each (doc id, section), from one snapshot of the index."""
    snap = advisor.retriever.snapshot()
    return [snap.section_chunks(doc_id, section) for doc_id, section in wanted]


OPS: dict[str, Callable[..., Any]] = {"ask": ask, "library": library, "recommend": recommend, "sections": sections}


# --- the pipe: length-prefixed pickles over raw file descriptors ---------------------------------------
def _send(fd: int, obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, left = [], n
    while left:
        if deadline is not None:
            # poll, not select: a busy UI process may hold more than 1024 descriptors
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLHUP)
            if not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
                raise TimeoutError("no reply in time")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _recv(fd: int, timeout: float | None = None) -> Any:
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exact(fd, size, deadline))


# --- the worker process ---------------------------------------------------------------------------------
def _warm_advisor(settings: Settings) -> Advisor:
    from app.pipeline import Advisor
    from core.contract import IndexUnavailable

    advisor = Advisor(settings)
    try:
        advisor.warm_up()
        for question in WARM_QUESTIONS:
            advisor.ask(question)
    except IndexUnavailable:
        pass  # the models loaded; questions get the index's own message until it is back
    return advisor


def serve(fd_in: int, fd_out: int) -> None:
    """The worker's loop: settings in, "ready" out, then one reply per request until the UI closes the pipe."""
    settings = _recv(fd_in)
    try:
        advisor = _warm_advisor(settings)
    except Exception as exc:
        _send(fd_out, ("failed", f"{type(exc).__name__}: {exc}"))
        return
    _send(fd_out, ("ready", os.getpid()))
    while True:
        try:
            op, args = _recv(fd_in)
        except EOFError:
            return
        try:
            reply: tuple[str, object] = ("ok", OPS[op](advisor, *args))
        except Exception as exc:
            reply = ("error", exc)
        try:
            try:
                _send(fd_out, reply)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:  # an exception that does not pickle
                _send(fd_out, ("error", RuntimeError(f"{type(reply[1]).__name__}: {reply[1]} ({exc})")))
        except BrokenPipeError:
            return  # the UI has gone (shut down mid-request): nobody to answer


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the UI, which closes the pipe
    fd_in, fd_out = os.dup(0), os.dup(1)
    # Anything a library prints goes to stderr (the UI's log), never into the pipe.
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s answer-worker %(name)s: %(message)s")
    serve(fd_in, fd_out)


# --- the UI side ----------------------------------------------------------------------------------------
class _Worker:
    """One worker process and its pipe; used by one request at a time."""

    def __init__(self, settings: Settings) -> None:
        env = {**os.environ, **dict.fromkeys(THREAD_VARS, "1"), "TOKENIZERS_PARALLELISM": "false"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app.web.workers"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._pipes: tuple[IO[bytes], IO[bytes]] = (self.proc.stdin, self.proc.stdout)
        self._in, self._out = self.proc.stdout.fileno(), self.proc.stdin.fileno()
        try:
            _send(self._out, settings)  # small: it fits the pipe's buffer while the worker starts
        except OSError as exc:
            self.stop()
            raise WorkersUnavailable(f"an answer worker did not start ({exc})") from None

    def wait_ready(self, timeout: float) -> None:
        try:
            tag, detail = _recv(self._in, timeout)
        except (EOFError, TimeoutError, OSError) as exc:
            raise WorkersUnavailable(f"an answer worker did not start ({exc})") from None
        if tag != "ready":
            raise WorkersUnavailable(f"an answer worker could not load the advisor: {detail}")

    def call(self, op: str, args: tuple[Any, ...]) -> Any:
        try:
            _send(self._out, (op, args))
            tag, value = _recv(self._in)
        except (EOFError, OSError) as exc:
            raise WorkerGone(f"the answer worker (pid {self.proc.pid}) stopped: {exc}") from None
        if tag == "error":
            raise value
        return value

    def stop(self) -> None:
        stdin, stdout = self._pipes
        with contextlib.suppress(OSError):
            stdin.close()  # the worker's loop ends at the end of its input
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        stdout.close()


@dataclass
class _Job:
    """One request, handed from the event loop to whichever worker's thread takes it first."""

    op: str
    args: tuple[Any, ...]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    submitted: float = field(default_factory=time.perf_counter)
    started: float = 0.0
    attempts: int = 0  # workers that have taken it
    abandoned: bool = False  # set by a cancelled caller: a worker that has not begun it skips it

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        """Called on the event loop (``call_soon_threadsafe``)."""
        if self.future.done():
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(result)


class AnswerPool:
    """``size`` worker processes behind an async ``run``. Each worker has a thread in this process that takes
    the next request from one shared queue, sends it and waits for the reply, so a worker goes from one
    request to the next without a round trip through the event loop. ``start`` (blocking) spawns the
    workers and waits until each is ready."""

    def __init__(self, settings: Settings, size: int) -> None:
        self.settings = settings
        self.size = size
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._workers: list[_Worker] = []
        self._threads: list[threading.Thread] = []
        self._closed = threading.Event()
        self._lock = threading.Lock()  # the worker list: a replacement vs. close

    def start(self, timeout: float) -> None:
        try:
            for _ in range(self.size):
                self._workers.append(_Worker(self.settings))  # they load side by side
            for worker in self._workers:
                worker.wait_ready(timeout)
        except WorkersUnavailable:
            self.close()
            raise
        for i, worker in enumerate(self._workers):
            thread = threading.Thread(target=self._feed, args=(i, worker), name=f"answer-worker-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def live(self) -> int:
        """Worker processes running now (one that died counts again once its replacement is ready)."""
        return sum(1 for worker in list(self._workers) if worker.proc.poll() is None)

    async def run(self, op: str, *args: Any, stages: Stages | None = None) -> Any:
        """``OPS[op](advisor, *args)`` in the next free worker; the wait for it is added to ``stages``."""
        loop = asyncio.get_running_loop()
        job = _Job(op, args, loop, loop.create_future())
        self._jobs.put(job)
        try:
            result = await job.future
        except asyncio.CancelledError:
            job.abandoned = True
            raise
        finally:
            if stages is not None and job.started:
                stages.add("worker_wait_ms", (job.started - job.submitted) * 1000)
        return result

    def _feed(self, slot: int, worker: _Worker) -> None:
        """A worker's thread: one job at a time from the shared queue, until ``close``."""
        while (job := self._jobs.get()) is not None:
            if job.abandoned:
                continue
            job.started = job.started or time.perf_counter()
            job.attempts += 1
            result: Any = None
            error: BaseException | None = None
            try:
                result = worker.call(job.op, job.args)
            except WorkerGone as exc:
                if job.attempts < MAX_ATTEMPTS and not self._closed.is_set():
                    # Read-only work: the next free worker runs it again while this one is replaced.
                    log.warning("request %r lost its worker; retrying it (attempt %d)", job.op, job.attempts + 1)
                    self._jobs.put(job)
                    worker = self._replace(slot, worker)
                    continue
                error = exc
                worker = self._replace(slot, worker)
            except Exception as exc:
                error = exc
            with contextlib.suppress(RuntimeError):  # the event loop is gone: the UI is shutting down
                job.loop.call_soon_threadsafe(job.settle, result, error)

    def _replace(self, slot: int, dead: _Worker) -> _Worker:
        """A new worker in a dead one's place (blocking this worker's thread only); retried until it starts."""
        log.error("answer worker %d (pid %s) stopped; starting a new one", slot, dead.proc.pid)
        dead.stop()
        while not self._closed.is_set():
            try:
                worker = _Worker(self.settings)
                worker.wait_ready(RESTART_WAIT_S)
                with self._lock:
                    if not self._closed.is_set():
                        self._workers[slot] = worker
                        return worker
                worker.stop()  # closed while it started: nobody will stop it otherwise
                return dead
            except WorkersUnavailable as exc:
                log.error("could not start a new answer worker: %s", exc)
                self._closed.wait(RETRY_S)
        return dead

    def close(self) -> None:
        with self._lock:
            self._closed.set()
            workers, self._workers = self._workers, []
        for _ in self._threads:
            self._jobs.put(None)
        for worker in workers:
            worker.stop()
        self._threads = []


if __name__ == "__main__":
    main()
