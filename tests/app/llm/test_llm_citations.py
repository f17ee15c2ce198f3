"""app.llm.citations: which sentences of a model's Markdown answer claim something (pure)."""

from __future__ import annotations

import pytest

from app.llm.citations import finalize_llm_answer, split_sentences
from app.models import Passage

PASSAGE = Passage(chunk_id="d#0000", doc_id="d", title="Doc", url="https://example.test/d", text="Slurm queues jobs.")


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("> Quoted claim [1]. Another.", ["Quoted claim [1].", "Another."]),
        (
            "- Parent item [1].\n  - Nested item.\n    continued here.",
            ["Parent item [1].", "Nested item.", "continued here."],
        ),
        ("Answer\n------\n\nBody [1].", ["Body [1]."]),  # a setext heading claims nothing
        ("#1 priority is speed [1].", ["#1 priority is speed [1]."]),  # not a heading: no space after '#'
        ("~~~\nnot. a claim.\n~~~\nAfter.", ["After."]),
        ("- Item:\n\n  | a | b |\n  |---|---|\n  | 1 | 2 |", ["Item:", "| 1 | 2 |"]),
        ("Text [1].\n\n[1]: https://example.test/d", ["Text [1]."]),  # a link definition claims nothing
    ],
)
def test_claiming_sentences_follow_the_markdown_structure(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_uncited_lines_inside_containers_are_flagged() -> None:
    text = "> Slurm queues jobs [1].\n\n- Pods run anywhere.\n\n```\nno. claims. here.\n```"
    cleaned, citations, flagged = finalize_llm_answer(text, [PASSAGE])
    assert [c.n for c in citations] == [1]
    assert flagged == ["Pods run anywhere."]
    assert "no. claims. here." in cleaned


def test_markers_inside_code_are_left_alone() -> None:
    text = "Run ``a[2]`` and\n\n```\nb[3]\n```\n\nthen [1]."
    cleaned, citations, _ = finalize_llm_answer(text, [PASSAGE])
    assert "``a[2]``" in cleaned and "b[3]" in cleaned and cleaned.endswith("then [1].")
    assert [c.doc_id for c in citations] == ["d"]
