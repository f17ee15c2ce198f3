"""👍/👎 feedback on answers: the record, its JSON Lines form, and its export as candidate golden cases.

One record per rated answer: timestamp, message id, question, answer, citations, rating, optional comment
(plus backend and language, which help when reading it later). The records live in the feedback database
(``app.web.feedback_db``), one per message id, so 👎 then 👍 keeps only 👍; ``load_feedback`` reads the JSON
Lines form (the file earlier versions wrote, and ``GET /api/feedback``'s export). ``export_candidates`` turns
ratings into cases in the
``evals/golden.jsonl`` format for a person to review: a liked answer proposes itself as the reference;
a disliked one keeps its question and cited sources but leaves the reference answer to the reviewer.
``must_include`` is always empty: the evals loader requires key facts for answerable cases, so a
candidate becomes golden only after a person writes them.

Deliberately left out: storage (``app.web.feedback_db``), and writing into ``evals/`` — candidates are
returned, and a person decides what becomes golden.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from app.models import Answer, CitedSource

Rating = Literal["up", "down"]
MAX_COMMENT_CHARS = 2000
_MARKERS = re.compile(r"\s*\[\d{1,3}\]")


class FeedbackRecord(BaseModel):
    timestamp: str
    message_id: str = ""
    question: str
    answer: str
    citations: list[CitedSource] = Field(default_factory=list)
    rating: Rating
    comment: str = Field("", max_length=MAX_COMMENT_CHARS)
    refused: bool = False
    language: str = "en"
    backend: str = ""


def make_record(
    answer: Answer, rating: Rating, comment: str = "", now: datetime | None = None, message_id: str = ""
) -> FeedbackRecord:
    """A feedback line for ``answer`` (pure; the comment is trimmed and bounded)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return FeedbackRecord(
        timestamp=stamp,
        message_id=message_id,
        question=answer.question,
        answer=answer.answer,
        citations=[CitedSource.model_validate(c.model_dump(exclude={"quote"})) for c in answer.citations],
        rating=rating,
        comment=comment.strip()[:MAX_COMMENT_CHARS],
        refused=answer.refused,
        language=answer.language,
        backend=answer.backend,
    )


def load_feedback(path: Path) -> list[FeedbackRecord]:
    """All readable records, oldest first; a damaged line (e.g. a crash mid-write) is skipped."""
    if not path.exists():
        return []
    records: list[FeedbackRecord] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            records.append(FeedbackRecord.model_validate_json(line))
        except ValidationError:
            continue
    return records


def _case_id(question: str, rating: str) -> str:
    digest = hashlib.sha1(f"{question.strip()}\n{rating}".encode()).hexdigest()[:10]
    return f"fb-{digest}"


def _plain(answer: str) -> str:
    # The golden reference is prose to compare with, not a rendering: drop the [n] markers.
    return _MARKERS.sub("", answer).strip()


def to_candidate(record: FeedbackRecord) -> dict[str, Any]:
    """One golden case (id, question, lang, reference_answer, must_include, sources, refuse, tags)."""
    sources = list(dict.fromkeys(c.doc_id for c in record.citations))
    up = record.rating == "up"
    return {
        "id": _case_id(record.question, record.rating),
        "question": record.question,
        "lang": record.language,
        # A disliked answer is not a reference; the reviewer writes one (the comment often says what).
        "reference_answer": _plain(record.answer) if up else "",
        "must_include": [],
        "sources": sources,
        # A liked refusal says the question is out of scope; a disliked one says it should be answered.
        "refuse": record.refused if up else False,
        "tags": ["from-feedback", "thumbs-up" if up else "thumbs-down"],
    }


def records_jsonl(records: list[FeedbackRecord]) -> str:
    """Records as JSON Lines (UTF-8 text, one record a line), the form ``load_feedback`` reads."""
    return "".join(json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n" for r in records)


def export_candidates(records: list[FeedbackRecord]) -> list[dict[str, Any]]:
    """Candidate golden cases from ratings (oldest first), one per (question, rating), latest rating wins."""
    cases: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.question.strip():
            case = to_candidate(record)
            cases[case["id"]] = case
    return list(cases.values())


def candidates_jsonl(cases: list[dict[str, Any]]) -> str:
    """Cases as JSON Lines, ready to review and paste into ``evals/golden.jsonl``."""
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
