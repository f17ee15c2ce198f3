"""Run one *system* (any callable question -> Answer) over the golden cases and score every answer.

Latency is wall-clock time around the call, so it includes retrieval, answering and any model work.
A question the system rejects (``rejections``, e.g. the app's QuestionError for an over-long paste)
counts as a refusal; an unusable index (``fatal``) stops the run, since every answer would be wrong;
any other exception is recorded on its case and the run goes on, so one bug does not hide the rest.

Deliberately left out: building systems (``evals.ablation``), warm-up (callers warm models first so
the first case's latency is not a model load) and concurrency (latency is measured one call at a time).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel
from tqdm import tqdm

from app.models import Answer
from evals.golden import GoldenCase
from evals.metrics import CaseScore, score_case
from evals.summary import Summary, summarize
from ingest.store import IndexUnavailable

System = Callable[[str], Answer]
# A system that also takes the earlier questions of a conversation (for follow-up cases).
HistorySystem = Callable[[str, list[str]], Answer]


class SystemRun(BaseModel):
    """One system's scores on the golden set."""

    name: str
    scores: list[CaseScore]
    summary: Summary
    seconds: float
    note: str = ""

    @property
    def failed(self) -> list[CaseScore]:
        return [s for s in self.scores if s.failed]


def ask_one(
    system: System,
    case: GoldenCase,
    rejections: tuple[type[BaseException], ...] = (),
    fatal: tuple[type[BaseException], ...] = (IndexUnavailable,),
    with_history: HistorySystem | None = None,
    languages: Mapping[str, str] | None = None,
) -> CaseScore:
    """Ask one question, time it and score the answer (or the error)."""
    error: str | None = None
    started = time.perf_counter()
    try:
        # a follow-up is asked in its conversation: the system gets the earlier questions too
        answer = with_history(case.question, case.history) if case.history and with_history else system(case.question)
    except fatal:
        raise
    except rejections as exc:
        answer = Answer(question=case.question, answer=str(exc), refused=True)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        answer = Answer(question=case.question, answer="")
    latency_ms = (time.perf_counter() - started) * 1000
    return score_case(case, answer, latency_ms, error, languages)


def run_system(
    name: str,
    system: System,
    cases: Sequence[GoldenCase],
    *,
    rejections: tuple[type[BaseException], ...] = (),
    progress: bool = True,
    note: str = "",
    with_history: HistorySystem | None = None,
    languages: Mapping[str, str] | None = None,
) -> SystemRun:
    """Ask every case in order (with a progress bar on stderr) and summarise."""
    started = time.perf_counter()
    scores: list[CaseScore] = []
    bar = tqdm(cases, desc=name, unit="q", disable=not progress, file=sys.stderr, leave=True)
    for case in bar:
        scores.append(ask_one(system, case, rejections, with_history=with_history, languages=languages))
        bar.set_postfix(acc=f"{sum(s.accurate for s in scores) / len(scores):.2f}", refresh=False)
    bar.close()
    return SystemRun(
        name=name,
        scores=scores,
        summary=summarize(scores),
        seconds=round(time.perf_counter() - started, 2),
        note=note,
    )
