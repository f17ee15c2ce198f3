"""`ask` command: one question, or a JSONL batch, answered with citations (stable JSON contract).

    ask "question" [--json] [--backend extractive|openai|ollama] [--k N]
    ask --batch FILE.jsonl --json        # input lines: {"id": ..., "question": ...}; models load once

JSON per question: id, question, answer, refused, citations [{n, doc_id, title, url, section, quote, verbatim}],
contexts [{doc_id, chunk_id, section, score}] (ranked), latency_ms. A bad line in a batch gets an
error object ({"id", "error"}) and the rest go on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.models import PARAPHRASED_NOTE, Answer
from app.pipeline import Advisor, QuestionError
from ingest.settings import settings_or_exit
from ingest.store import IndexUnavailable


def answer_json(answer: Answer, qid: Any = None) -> dict[str, Any]:
    """The documented `ask --json` object for one answer."""
    return {
        "id": qid,
        "question": answer.question,
        "answer": answer.answer,
        "refused": answer.refused,
        "verdict": answer.verdict,
        "citations": [
            {
                "n": c.n,
                "doc_id": c.doc_id,
                "title": c.title,
                "url": c.url,
                "section": c.section,
                "quote": c.quote,
                "verbatim": c.verbatim,
            }
            for c in answer.citations
        ],
        "contexts": [
            {"doc_id": p.doc_id, "chunk_id": p.chunk_id, "section": p.section, "score": p.score}
            for p in answer.passages
        ],
        "latency_ms": answer.latency_ms,
    }


def answer_text(answer: Answer) -> str:
    """Plain-terminal rendering: the answer, then the numbered sources with their quotes."""
    lines = [answer.answer, ""]
    if answer.citations:
        lines.append("Sources:")
        for c in answer.citations:
            where = f"{c.title} — {c.section}" if c.section else c.title
            lines.append(f"[{c.n}] {where}\n    {c.url}")
            if not c.verbatim:
                lines.append(f"    ({PARAPHRASED_NOTE})")
            for quote_line in c.quote.splitlines():
                lines.append(f"    > {quote_line}")
    return "\n".join(lines).rstrip()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ask", description="Ask the Slurm×K8s Advisor a question.")
    parser.add_argument("question", nargs="?", help="the question (Japanese or English)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--backend", choices=["extractive", "openai", "ollama"], help="answer backend")
    parser.add_argument("--k", type=int, help="number of passages to use and show (default from settings)")
    parser.add_argument("--batch", type=Path, help="JSONL file of {id, question} objects; prints JSONL")
    return parser


def _run_batch(advisor: Advisor, path: Path, backend: str | None, k: int | None) -> int:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"ask: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    failures = 0
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        qid: Any = lineno
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or not isinstance(item.get("question"), str):
                raise QuestionError(f"line {lineno}: expected an object with a string 'question'")
            qid = item.get("id", lineno)
            answer = advisor.ask(item["question"], backend=backend, k=k)
            print(json.dumps(answer_json(answer, qid), ensure_ascii=False), flush=True)
        except (json.JSONDecodeError, QuestionError) as exc:
            failures += 1
            msg = f"line {lineno}: invalid JSON ({exc.msg})" if isinstance(exc, json.JSONDecodeError) else str(exc)
            print(json.dumps({"id": qid, "error": msg}, ensure_ascii=False), flush=True)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.batch and args.question is None:
        build_parser().print_usage(sys.stderr)
        print("ask: give a question or --batch FILE", file=sys.stderr)
        return 2
    settings = settings_or_exit("ask")
    if args.k is not None and not 1 <= args.k <= 50:
        print("ask: --k must be between 1 and 50", file=sys.stderr)
        return 2
    advisor = Advisor(settings)
    try:
        if args.batch:
            return _run_batch(advisor, args.batch, args.backend, args.k)
        answer = advisor.ask(args.question, backend=args.backend, k=args.k)
    except QuestionError as exc:
        if args.json:
            print(json.dumps({"id": None, "error": str(exc)}, ensure_ascii=False))
        print(f"ask: {exc}", file=sys.stderr)
        return 2
    except IndexUnavailable as exc:
        print(f"ask: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # an LLM server that is down, etc.: one line, not a traceback
        print(f"ask: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(answer_json(answer), ensure_ascii=False, indent=2))
    else:
        print(answer_text(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
