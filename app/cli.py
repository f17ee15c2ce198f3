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
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from app.models import PARAPHRASED_NOTE, Answer, Citation, Profile, Recommendation, Turn, Verdict
from app.pipeline import Advisor, QuestionError
from core.contract import Rule
from core.settings import settings_or_exit
from core.situation import facets
from ingest.store import IndexUnavailable


def answer_json(answer: Answer, qid: Any = None) -> dict[str, Any]:
    """The documented `ask --json` object for one answer (docs/cli.md)."""
    info = answer.question_info
    return {
        "id": qid,
        "question": {
            "text": answer.question,
            "focus": info.focus if info else "",
            "answer_type": info.answer_type if info else None,
            "parts": [p.model_dump() for p in info.parts] if info else [],
        },
        "answer": answer.answer,
        "more": answer.more_text,
        "refused": answer.refused,
        "value_line": answer.value_line.model_dump() if answer.value_line else None,
        "lead_quotes": [q.model_dump(exclude_none=True) for q in answer.lead],
        "more_quotes": [q.model_dump(exclude_none=True) for q in answer.more],
        "not_stated": answer.not_stated.model_dump() if answer.not_stated else None,
        "findings": [f.model_dump() for f in answer.findings],
        "missing": answer.missing,
        "needs": answer.needs,
        "verdict": answer.verdict.value if answer.verdict else None,
        "verdict_detail": verdict_json(answer.verdict) if answer.verdict else None,
        "citations": [citation_json(c) for c in answer.citations],
        "contexts": [
            {"doc_id": p.doc_id, "chunk_id": p.chunk_id, "section": p.section, "score": p.score}
            for p in answer.passages
        ],
        "latency_ms": answer.latency_ms,
    }


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The verdict as data: what was read (``situation``: facet → value and the words that set it), each
    facet's vote with its rule and citation, the deciding facet of a ``depends``, what would change it."""
    return {
        "value": verdict.value,
        "situation": {
            f: {"value": r.value, "span": r.span, "negated": r.negated} for f, r in verdict.situation.items()
        },
        "read_as": verdict.read_as,
        "votes": [
            {"facet": v.facet, "value": v.value, "platform": v.platform, "rule": v.rule.model_dump(), "n": v.n}
            for v in verdict.votes
        ],
        "deciding": verdict.deciding,
        "changes": verdict.changes,
        "change_detail": [c.model_dump() for c in verdict.change_detail],
        "summary": verdict.summary,
    }


def citation_json(c: Citation) -> dict[str, Any]:
    """One citation of the `ask --json` contract; a translation's quote carries its original."""
    out: dict[str, Any] = {
        "n": c.n,
        "doc_id": c.doc_id,
        "title": c.title,
        "url": c.url,
        "section": c.section,
        "quote": c.quote,
        "verbatim": c.verbatim,
        "link": c.link,
    }
    if c.translation_of:
        out["translation_of"] = c.translation_of
        out["stale"] = c.stale
        out["original"] = {"section": c.original.section, "quote": c.original.quote} if c.original else None
    return out


def answer_text(answer: Answer) -> str:
    """Plain-terminal rendering: the answer, then the numbered sources with their quotes."""
    lines = [answer.answer, ""]
    if answer.more_text:
        lines += ["More from the documents:" if answer.language != "ja" else "ほかの該当箇所:", answer.more_text, ""]
    if answer.citations:
        lines.append("Sources:")
        for c in answer.citations:
            where = f"{c.title} — {c.section}" if c.section else c.title
            lines.append(f"[{c.n}] {where}\n    {c.url}")
            if c.translation_of:
                stale = " — stale: the original changed since" if c.stale else ""
                lines.append(f"    (translation · 翻訳 of {c.translation_of}{stale})")
            elif not c.verbatim:
                lines.append(f"    ({PARAPHRASED_NOTE})")
            for quote_line in c.quote.splitlines():
                lines.append(f"    > {quote_line}")
            if c.original is not None:
                lines.append(f"    original · 原文 ({c.original.section}):")
                lines.extend(f"    > {line}" for line in c.original.quote.splitlines())
            if c.link and c.link != c.url:
                lines.append(f"    {c.link}")
    return "\n".join(lines).rstrip()


def load_profile(path: Path) -> Profile | str:
    """The questionnaire file, or a one-line error naming the file and the field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read {path}: {exc}"
    except json.JSONDecodeError as exc:
        return f"{path}: invalid JSON ({exc.msg}, line {exc.lineno})"
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(profile)"
        allowed = ""
        if field in Profile.model_fields:
            allowed = f" (allowed: {', '.join(str(a) for a in get_args(get_args(Profile.model_fields[field].annotation)[0]))})"
        return f"{path}: field '{field}': {first['msg']}{allowed}"


def recommendation_json(rec: Recommendation) -> dict[str, Any]:
    """The `ask --profile --json` object: verdict, a reason per criterion with its rule and citations."""
    return {
        "verdict": rec.verdict,
        "reasons": [
            {
                "criterion": r.criterion,
                "criterion_label": r.criterion_label,
                "value": r.value,
                "answer": r.answer,
                "verdict": r.verdict,
                "rule": r.rule.model_dump() if r.rule else None,
                "citations": [citation_json(c) for c in r.citations],
            }
            for r in rec.reasons
        ],
        "citations": [citation_json(c) for c in rec.citations],
        "answer": rec.answer,
        "changes": rec.changes,
        "verdict_detail": verdict_json(rec.detail) if rec.detail else None,
    }


def rules_json(rules: Sequence[Rule]) -> list[dict[str, Any]]:
    """`ask --rules --json`: every rule with the facets its condition was read as; ``unmapped`` flags a rule
    whose condition maps to no facet (it cannot vote: a new criterion the facets file does not know)."""
    return [{**r.model_dump(), "unmapped": not r.facets} for r in rules]


def rules_text(rules: Sequence[Rule]) -> str:
    """`ask --rules`: one block per rule — platform, condition, the facets read, where it is written."""
    defs = facets()
    blocks = []
    for r in rules:
        read = " · ".join(defs.label(f, v, r.language) for f, v in r.facets.items() if v in defs.values.get(f, {}))
        lines = [f"[{r.verdict}] {r.condition}", f"    read as: {read}" if read else "    ⚠ maps to no facet"]
        lines.append(f"    {r.doc_id} › {r.section} ({r.source})")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ask", description="Ask the Slurm×K8s Advisor a question.")
    parser.add_argument("question", nargs="?", help="the question (Japanese or English)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--backend", choices=["extractive", "openai", "ollama"], help="answer backend")
    parser.add_argument("--k", type=int, help="number of passages to use and show (default from settings)")
    parser.add_argument(
        "--batch", type=Path, help='JSONL file of {"id", "question", "history": [earlier questions]}; prints JSONL'
    )
    parser.add_argument("--profile", type=Path, help="questionnaire answers (JSON) → a recommendation")
    parser.add_argument("--rules", action="store_true", help="list the decision rules extracted from the corpus")
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
            history = item.get("history", [])
            if not isinstance(history, list) or not all(isinstance(h, str) for h in history):
                raise QuestionError(f"line {lineno}: 'history' must be a list of earlier questions (strings)")
            turns = [Turn(role="user", content=h) for h in history]
            answer = advisor.ask(item["question"], turns, backend=backend, k=k)
            print(json.dumps(answer_json(answer, qid), ensure_ascii=False), flush=True)
        except (json.JSONDecodeError, QuestionError) as exc:
            failures += 1
            msg = f"line {lineno}: invalid JSON ({exc.msg})" if isinstance(exc, json.JSONDecodeError) else str(exc)
            print(json.dumps({"id": qid, "error": msg}, ensure_ascii=False), flush=True)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not (args.batch or args.profile or args.rules) and args.question is None:
        build_parser().print_usage(sys.stderr)
        print("ask: give a question, --batch FILE, --profile FILE or --rules", file=sys.stderr)
        return 2
    settings = settings_or_exit("ask")
    if args.k is not None and not 1 <= args.k <= 50:
        print("ask: --k must be between 1 and 50", file=sys.stderr)
        return 2
    advisor = Advisor(settings)
    profile: Profile | None = None
    if args.profile:
        loaded = load_profile(args.profile)
        if isinstance(loaded, str):
            print(f"ask: {loaded}", file=sys.stderr)
            return 2
        profile = loaded
    try:
        if args.rules:
            rules = advisor.rules()
            print(json.dumps(rules_json(rules), ensure_ascii=False, indent=2) if args.json else rules_text(rules))
            return 0
        if profile is not None:
            rec = advisor.recommend(profile)
            if args.json:
                print(json.dumps(recommendation_json(rec), ensure_ascii=False, indent=2))
            else:
                print(answer_text(Answer(question="", answer=rec.answer, citations=rec.citations)))
            return 0
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
