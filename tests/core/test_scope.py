"""core.scope: what governs a cue in its clause — negations, indifference, hedges, conditions, tag questions."""

from __future__ import annotations

import pytest

from core.scope import scope
from core.text import normalize


def _scope_of(clause: str, cue: str):  # type: ignore[no-untyped-def]
    text = normalize(clause)
    start = text.index(cue)
    return scope(text, start, start + len(cue))


@pytest.mark.parametrize(
    ("clause", "cue", "negated"),
    [
        ("we don't need inference, ok", "inference", True),  # a tag question is no indifference
        ("we will not run any inference", "inference", True),
        ("inference is off the table", "inference", True),
        ("推論はしません", "推論", True),
        ("推論の予定はない", "推論", True),
        ("推論はしないわけではない", "推論", False),  # double negation
        ("it's not that we won't serve models", "serve models", False),
        ("two systems is fine by us", "two systems", False),
        ("基盤が2つになるのは気にしません", "基盤が2つ", False),
        ("同じ基盤にはこだわらない", "同じ基盤", False),
        ("運用担当は3人しかいません", "運用担当", False),  # "only three": no negation
        ("we need inference", "inference", False),
    ],
)
def test_negation(clause: str, cue: str, negated: bool) -> None:
    assert _scope_of(clause, cue).negated is negated


def test_indifference_hedge_condition_and_tag_are_separate_features() -> None:
    assert _scope_of("同じ基盤にはこだわらない", "同じ基盤").indifferent
    assert _scope_of("we might serve the model later", "serve the model").hedged
    assert _scope_of("if we don't need inference", "inference").conditional
    assert _scope_of("推論をしないなら", "推論").conditional
    assert _scope_of("we don't need inference, ok", "inference").tag
    assert not _scope_of("we need inference", "inference").tag
