"""Where a question's time goes in the web UI, for the load test: off unless ``web.stage_log`` names a file.

With a file set, the chat handler appends one JSON line per answered question: its session, when the
handler started (wall clock, so a client on the same machine can subtract its own submission time), and the
milliseconds spent waiting for an answerer, in the pipeline (``Advisor.stream``), and rendering the answer.
``bench/load_test.py`` sets the file for the app it starts and reads it back after the run.

Deliberately left out: any endpoint or UI for these numbers (the file stays on the server's disk), and
aggregation (the load test does that).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

Stage = Literal["worker_wait_ms", "pipeline_ms", "render_ms"]


@dataclass
class Stages:
    """One question's timings; ``started`` is wall-clock seconds, the rest milliseconds."""

    session: str
    started: float = field(default_factory=time.time)
    worker_wait_ms: float = 0.0
    pipeline_ms: float = 0.0
    render_ms: float = 0.0
    handler_ms: float = 0.0
    _t0: float = field(default_factory=time.perf_counter, repr=False)

    def add(self, stage: Stage, ms: float) -> None:
        setattr(self, stage, getattr(self, stage) + ms)

    @contextmanager
    def timing(self, stage: Stage) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(stage, (time.perf_counter() - t0) * 1000)

    def record(self) -> dict[str, object]:
        self.handler_ms = (time.perf_counter() - self._t0) * 1000
        row = {k: (round(v, 2) if isinstance(v, float) and k != "started" else v) for k, v in asdict(self).items()}
        row.pop("_t0")
        return row


class StageLog:
    """Appends ``Stages`` as JSON Lines to ``path``; with no path it records nothing and costs nothing."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def begin(self, session: str) -> Stages:
        return Stages(session)

    def write(self, stages: Stages) -> None:
        if self.path is None:
            return
        line = json.dumps(stages.record(), ensure_ascii=False) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            # A line per question, closed at once: the load test reads the file after stopping the app.
            fh.write(line)
