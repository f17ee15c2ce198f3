"""app.web.feedback: the rating record, its JSON Lines form, and export as candidate golden cases."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.models import Answer, Citation
from app.web.feedback import (
    FeedbackRecord,
    candidates_jsonl,
    export_candidates,
    load_feedback,
    make_record,
    records_jsonl,
)
from evals.golden import GoldenCase

GOLDEN_KEYS = {"id", "question", "lang", "reference_answer", "must_include", "sources", "refuse", "tags"}


def _answer(question: str = "Alphaの GPU 利用率は？", *, refused: bool = False, lang: str = "ja") -> Answer:
    cites = [
        Citation(n=1, doc_id="scheduler-ja", chunk_id="scheduler-ja#0", title="メモ", quote="GPUを92%まで"),
        Citation(n=2, doc_id="gateway-en", chunk_id="gateway-en#1", title="Guide", quote="512 MB"),
        Citation(n=3, doc_id="scheduler-ja", chunk_id="scheduler-ja#2", title="メモ", quote="Alpha"),
    ]
    return Answer(
        question=question,
        answer="" if refused else "- GPUを92%まで使い切った事例 [1] [3]\n- 512 MB [2]",
        citations=[] if refused else cites,
        refused=refused,
        language=lang,
    )


def _jsonl(path: Path, *records: FeedbackRecord) -> Path:
    path.write_text(records_jsonl(list(records)), encoding="utf-8")
    return path


def test_jsonl_form_has_all_fields_in_utf8(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "feedback.jsonl",
        make_record(_answer(), "up", "  とても良い  "),
        make_record(_answer("What memory?", lang="en"), "down"),
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert {"timestamp", "question", "answer", "citations", "rating", "comment"} <= set(first)
    assert first["question"] == "Alphaの GPU 利用率は？"  # stored as UTF-8, not \u escapes
    assert "Alphaの" in lines[0]
    assert first["rating"] == "up" and first["comment"] == "とても良い"
    assert [c["doc_id"] for c in first["citations"]] == ["scheduler-ja", "gateway-en", "scheduler-ja"]
    assert "quote" not in first["citations"][0]
    assert first["timestamp"].endswith("Z")
    assert [r.rating for r in load_feedback(path)] == ["up", "down"]


def test_make_record_bounds_comment_and_stamps_time() -> None:
    rec = make_record(_answer(), "down", "x" * 5000, now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert rec.timestamp == "2026-01-02T03:04:05Z"
    assert len(rec.comment) == 2000
    with pytest.raises(ValidationError):  # a record built from outside input is not cut: it is refused
        FeedbackRecord.model_validate(rec.model_dump() | {"comment": "x" * 2001})


def test_damaged_line_is_skipped(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "feedback.jsonl", make_record(_answer(), "up"))
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"question": "half a line\n\n')
        fh.write(records_jsonl([make_record(_answer("Q2", lang="en"), "down")]))
    assert [r.question for r in load_feedback(path)] == ["Alphaの GPU 利用率は？", "Q2"]
    assert load_feedback(tmp_path / "missing.jsonl") == []


def test_export_candidates_golden_format() -> None:
    cases = export_candidates(
        [
            make_record(_answer(), "up"),
            make_record(_answer("What memory?", lang="en"), "down", "should say 512 MB"),
            make_record(_answer("Weather?", refused=True, lang="en"), "up"),
        ]
    )
    assert len(cases) == 3
    for case in cases:
        assert set(case) == GOLDEN_KEYS
        assert case["id"].startswith("fb-") and case["must_include"] == []
        assert case["tags"][0] == "from-feedback"
    up, down, refused = cases
    assert up["lang"] == "ja" and up["tags"] == ["from-feedback", "thumbs-up"]
    assert up["sources"] == ["scheduler-ja", "gateway-en"]  # unique, in citation order
    assert "[1]" not in up["reference_answer"] and "GPUを92%まで使い切った事例" in up["reference_answer"]
    assert up["refuse"] is False
    assert down["tags"] == ["from-feedback", "thumbs-down"] and down["reference_answer"] == ""
    assert refused["refuse"] is True and refused["sources"] == []
    parsed = [json.loads(line) for line in candidates_jsonl(cases).splitlines()]
    assert parsed == cases
    # The evals loader (extra keys forbidden) accepts every candidate once a reviewer has added the key
    # facts (must_include) that answerable cases need; nothing else has to change.
    for case in parsed:
        reviewed = case | {"must_include": [] if case["refuse"] else [["fact"]]}
        GoldenCase.model_validate(reviewed)


def test_export_keeps_latest_rating_per_question() -> None:
    cases = export_candidates([make_record(_answer("Q"), r) for r in ("up", "up", "down")])
    assert sorted(c["tags"][1] for c in cases) == ["thumbs-down", "thumbs-up"]
    assert len({c["id"] for c in cases}) == 2
