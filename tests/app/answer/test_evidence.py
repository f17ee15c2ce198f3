"""Lexical coverage of a question's concepts (pure), across languages through the term bridge."""

from __future__ import annotations

import pytest

from app.answer.evidence import concept_weights, coverage
from app.retrieval.bridge import english_words


def _bridge(token: str) -> list[str]:
    return {"w:指定": ["designation", "specification"], "w:実行": ["execution"], "w:ジョブ": ["job"]}.get(token, [])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Specify the partition.", 1.0),  # "specification" starts as "specify" does
        ("The partition is given by name.", 0.0),
        ("Specifications are listed below.", 1.0),
    ],
)
def test_a_gloss_covers_other_forms_of_its_word(text: str, expected: float) -> None:
    weights = concept_weights("指定", [], {}, _bridge)
    assert coverage(weights, text) == expected


def test_a_short_gloss_matches_only_its_own_word() -> None:
    weights = concept_weights("ジョブ", [], {}, _bridge)
    assert coverage(weights, "Each job runs once.") == 1.0
    assert coverage(weights, "Jobless nodes idle.") == 0.0


def test_an_english_question_word_is_matched_as_written() -> None:
    # the first letters stand in only for dictionary glosses, never for the question's own words
    weights = concept_weights("specification", [], {})
    assert coverage(weights, "Specify the partition.") == 0.0
    assert coverage(weights, "The specification says so.") == 1.0


def test_the_real_dictionary_bridges_a_japanese_question_to_an_english_flag() -> None:
    weights = concept_weights("エントリポイントを実行させるのは", [], {}, english_words)
    assert coverage(weights, "--container-entrypoint  [pyxis] execute the entrypoint from the container") > 0
    assert coverage(weights, "--container-mount-home  [pyxis] bind mount the user's home directory.") == 0.0


@pytest.mark.parametrize(
    ("gloss", "text", "expected"),
    [
        ("entry point", "execute the entrypoint of the image", 1.0),  # run together, as in code
        ("entry point", "the entry point of the image", 1.0),
        ("home-directory", "mount the home directory", 1.0),  # apart, where the dictionary joins them
        ("applying entry", "applying the patch", 0.0),  # a run-together form is a whole word, never a prefix
    ],
)
def test_a_gloss_is_matched_as_english_text_writes_it(gloss: str, text: str, expected: float) -> None:
    weights = concept_weights("項目", [], {}, lambda t: [gloss] if t == "w:項目" else [])
    assert coverage(weights, text) == expected
