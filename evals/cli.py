"""`evals` command: score the default system (or, with --ablation, every system) on the golden set.

    evals [--golden FILE] [--json] [--ablation] [--cache DIR] [--report-dir DIR]
          [--min-accuracy X] [--min-hit5 X] [--min-refusal-recall X]
    evals --feedback [FILE] [--golden FILE] [--report-dir DIR]  # ratings (database or FILE) as candidates
    evals --situations dev|dev2|dev3|dev4|dev5|dev6|dev7|test|test2|test3 [--through-advisor] [--report-dir DIR]  # the situation reader

Prints a table (to stderr with --json, which prints one JSON document to stdout), writes
``report.md`` and ``ablation.png`` to the report folder, and exits 1 when a --min-* threshold fails
(naming each one), 2 for an unusable golden file. The thresholds gate the default system.

Deliberately left out: running several golden files at once and parallel questions (latency is
measured one question at a time).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from app.models import Answer
from core.settings import PROJECT_ROOT, Settings, settings_or_exit
from evals.golden import SITUATION_SPLITS, GoldenError, load_golden, load_split, unknown_sources
from evals.report import console_table, fmt, primary, to_json, write_report
from evals.runner import SystemRun
from ingest.store import IndexUnavailable

DEFAULT_GOLDEN = PROJECT_ROOT / "evals" / "golden.jsonl"
DEFAULT_REPORTS = PROJECT_ROOT / "evals" / "reports"
DEFAULT_CACHE = PROJECT_ROOT / ".index-evals"
CANDIDATES_FILE = "feedback-candidates.jsonl"
FROM_STORE = Path("<feedback database>")  # --feedback without FILE

# (argparse dest, Summary field, flag) for the gate.
THRESHOLDS = (
    ("min_accuracy", "accuracy", "--min-accuracy"),
    ("min_hit5", "hit5", "--min-hit5"),
    ("min_refusal_recall", "refusal_recall", "--min-refusal-recall"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evals", description="Score the Advisor on the golden Q&A set (accuracy, retrieval, citations, refusals)."
    )
    parser.add_argument("--golden", type=Path, default=DEFAULT_GOLDEN, help="golden JSONL file (default: %(default)s)")
    parser.add_argument(
        "--split", choices=["train", "dev", "test"],
        help="run every question file of one split of the protocol (evals/splits.toml) instead of --golden",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print results as one JSON document on stdout")
    parser.add_argument("--ablation", action="store_true", help="also run BM25, each dense embedder and the baseline")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="ablation index cache (default: %(default)s)")
    parser.add_argument("--report-dir", type=Path, default=DEFAULT_REPORTS, help="where report.md/ablation.png go")
    parser.add_argument("--min-accuracy", type=float, metavar="X", help="fail when answer accuracy < X")
    parser.add_argument("--min-hit5", type=float, metavar="X", help="fail when hit@5 < X")
    parser.add_argument("--min-refusal-recall", type=float, metavar="X", help="fail when refusal recall < X")
    parser.add_argument(
        "--feedback", type=Path, metavar="FILE", nargs="?", const=FROM_STORE,
        help="only turn the app's ratings into candidate golden cases (written next to the report): from the "
        "feedback database the settings name, or from FILE (JSON Lines, e.g. GET /api/feedback's export)",
    )  # fmt: skip
    parser.add_argument(
        "--situations", choices=SITUATION_SPLITS, metavar="SPLIT",
        help="only report the situation reader on evals/situations.jsonl and evals/negation.jsonl "
        f"({', '.join(SITUATION_SPLITS)})",
    )  # fmt: skip
    parser.add_argument(
        "--through-advisor", action="store_true",
        help="with --situations: also ask the whole advisor each first turn (does a platform question get a decision?)",
    )  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return parser


def gate(run: SystemRun, args: argparse.Namespace) -> list[str]:
    """Messages for every threshold the run falls short of (an unmeasurable metric fails too)."""
    failures = []
    for dest, key, flag in THRESHOLDS:
        limit = getattr(args, dest)
        if limit is None:
            continue
        value = getattr(run.summary, key)
        if value is None:
            failures.append(f"{flag} {limit}: {key} could not be measured on this golden file")
        elif value < limit:
            failures.append(f"{flag} {limit}: {key} is {fmt(key, value)}")
    return failures


def _feedback_records(feedback: Path, settings: Settings | None) -> list[Any] | str:
    """The ratings, from the database or a JSON Lines file; a message (str) when there are none to read."""
    from app.web.feedback import load_feedback
    from app.web.feedback_db import StoreError, open_store

    if feedback != FROM_STORE:
        if not feedback.is_file():
            return f"feedback file {feedback} not found (export one with GET /api/feedback, or omit FILE)"
        return list(load_feedback(feedback))
    try:
        store = open_store(settings or settings_or_exit("evals"))
    except StoreError as exc:
        return str(exc)
    try:
        return list(store.all())
    finally:
        store.close()


def import_feedback(feedback: Path, golden: Path, report_dir: Path, settings: Settings | None = None) -> int:
    from app.web.feedback import export_candidates

    records = _feedback_records(feedback, settings)
    if isinstance(records, str):
        print(f"evals: {records}", file=sys.stderr)
        return 2
    candidates = export_candidates(records)
    try:
        known = {c.question.strip() for c in load_golden(golden)}
    except GoldenError:
        known = set()
    fresh = [c for c in candidates if str(c.get("question", "")).strip() not in known]
    report_dir.mkdir(parents=True, exist_ok=True)
    target = report_dir / CANDIDATES_FILE
    target.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in fresh), encoding="utf-8")
    print(
        f"evals: {len(fresh)} candidate case(s) ({len(candidates) - len(fresh)} already golden) written to {target}; "
        "add must_include patterns and a reference answer before moving them into the golden file",
        file=sys.stderr,
    )
    return 0


def situations_report(split: str, settings: Settings, report_dir: Path, through_advisor: bool = False) -> int:
    """The situation reader's tables for one split, printed and written to ``situations-SPLIT.md``; with
    ``through_advisor``, also the whole advisor's decisions on the split's first turns."""
    from app.pipeline import Advisor
    from evals.situations import advisor_report, report

    advisor = Advisor(settings)
    try:
        snap = advisor.retriever.snapshot()
    except IndexUnavailable:
        snap = None  # facets and the negation table need no index; verdicts do
    text = report(split, advisor.reader, snap)
    if through_advisor and snap is not None:

        def decides(question: str) -> bool:
            answer = advisor.ask(question)
            return bool(answer.verdict or answer.needs)

        text += "\n" + advisor_report(split, decides)
    report_dir.mkdir(parents=True, exist_ok=True)
    path = report_dir / f"situations-{split}.md"
    path.write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"evals: report written to {path}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace, settings: Settings) -> list[SystemRun]:
    """Run the default system, or every ablation system; raises GoldenError/IndexUnavailable."""
    from ingest.documents import load_corpus

    cases = load_split(args.split) if args.split else load_golden(args.golden)
    docs, _ = load_corpus(settings.index.corpus_dir, settings.index.translations_folder)
    for problem in unknown_sources(cases, {d.id for d in docs}, args.golden):
        print(f"evals: warning: {problem}", file=sys.stderr)
    progress = not args.no_progress
    if args.ablation:
        from evals.ablation import run_ablation

        return run_ablation(settings, cases, args.cache, progress, languages={d.id: d.language for d in docs})
    from app.pipeline import Advisor, QuestionError
    from evals.ablation import DEFAULT_NAME
    from evals.runner import run_system

    advisor = Advisor(settings)
    advisor.warm_up()
    from app.models import Turn

    def in_conversation(question: str, history: list[str]) -> Answer:
        return advisor.ask(question, [Turn(role="user", content=h) for h in history])

    return [
        run_system(
            DEFAULT_NAME,
            advisor.ask,
            cases,
            rejections=(QuestionError,),
            progress=progress,
            with_history=in_conversation,
            languages={d.id: d.language for d in docs},
        )
    ]


def main(argv: list[str] | None = None, settings: Settings | None = None) -> int:
    for name, value in (("ANONYMIZED_TELEMETRY", "False"), ("HF_HUB_OFFLINE", "1"), ("HF_HUB_DISABLE_TELEMETRY", "1")):
        os.environ.setdefault(name, value)
    args = build_parser().parse_args(argv)
    if args.split:
        args.golden = PROJECT_ROOT / "evals" / f"split:{args.split}"
        if args.report_dir == DEFAULT_REPORTS:
            args.report_dir = DEFAULT_REPORTS / args.split
    if args.feedback:
        return import_feedback(args.feedback, args.golden, args.report_dir, settings)
    settings = settings or settings_or_exit("evals")
    if args.situations:
        return situations_report(args.situations, settings, args.report_dir, args.through_advisor)
    try:
        runs = run(args, settings)
    except GoldenError as exc:
        print(f"evals: {exc}", file=sys.stderr)
        return 2
    except IndexUnavailable as exc:
        print(f"evals: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("evals: interrupted", file=sys.stderr)
        return 130
    table = console_table(runs)
    context = f"Embedder: `{settings.index.embedding_backend}`, top_k {settings.retrieval.top_k}, answers: `{settings.answer.backend}`."
    path = write_report(runs, args.golden, args.report_dir, context)
    if args.json:
        print(table, file=sys.stderr)
        print(json.dumps(to_json(runs, args.golden), ensure_ascii=False))
    else:
        print(table)
        failed = primary(runs).failed
        print(f"\n{len(failed)} failed case(s): {', '.join(s.id for s in failed) or 'none'}")
    print(f"evals: report written to {path}", file=sys.stderr)
    failures = gate(primary(runs), args)
    for message in failures:
        print(f"evals: FAIL {message}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
