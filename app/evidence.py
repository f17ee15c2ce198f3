"""Cut passages into evidence units and score them against a question (pure, no models).

A unit is the smallest quotable piece that still stands alone: a sentence, a list item (with its parent
item as context), or a table row shown with its header ("観点: 主目的; Slurm: …"). Scores combine
IDF-weighted lexical coverage of the question (glossary-expanded) with an optional dense similarity
supplied by the caller, plus the passage's retrieval rank.

Each unit knows its block (paragraph, list, table or code block), so a lead-in ("…three things:") can
bring along what it announces (``followers``), a section heading can stand for the table that opens its
passage (``heading_lead``), and a how-to sentence can bring the command after it (``code_after``).

    >>> [u.text for u in split_units("| a | b |\\n|---|---|\\n| 1 | 2 |", "table")]
    ['a: 1; b: 2']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from app.text import content_tokens
from ingest.units import INJECTION, Unit, clean_markup, is_lead_in, is_table_separator, split_units

__all__ = ["INJECTION", "Unit", "is_lead_in", "is_table_separator", "split_units"]

MAX_FOLLOWERS = 8
_MAX_CODE_LINES = 20


HEADED_KINDS = ("row", "item")


def heading_lead(section: str, units: Sequence[Unit]) -> Unit | None:
    """A passage that opens with a table or list under its own heading ("Requirements & supported
    versions") is announced by that heading: as a unit, the heading brings the table or list along."""
    title = section.split(" > ")[-1].strip()
    if not title or not units or units[0].kind not in HEADED_KINDS or units[0].context:
        return None
    # block 0 is never used by split_units, so the heading sits right before the opening block
    return Unit(units[0].passage, clean_markup(title), "", "heading", block=units[0].block - 1)


def followers(unit: Unit, units: Sequence[Unit], limit: int = MAX_FOLLOWERS) -> list[Unit]:
    """What a lead-in unit announces: the list, table or short code block right after it in the same
    passage (a question answered by "…does three things:" wants the three things). Empty for others."""
    if not is_lead_in(unit):
        return []
    after = _next_block(unit, units)
    if not after or after[0].kind == "sentence" or (unit.kind == "item" and after[0].kind == "item"):
        # a lead-in list item's own sub-items share its block; a paragraph after it is not announced
        after = [
            u
            for u in units
            if u.passage == unit.passage and u.kind == "item" and u.context.split(" › ")[-1] == unit.text
        ]
    if after and after[0].kind == "code" and not is_short_code(after[0]):
        return []
    return list(after[:limit])


def is_short_code(unit: Unit) -> bool:
    """A code block short enough to quote whole in an answer."""
    return unit.kind == "code" and unit.text.count("\n") <= _MAX_CODE_LINES


def code_after(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """The short code block right after the paragraph or list holding ``unit`` (the command a
    how-to sentence describes), or None."""
    after = _next_block(unit, units)
    return after[0] if after and is_short_code(after[0]) else None


def _next_block(unit: Unit, units: Sequence[Unit]) -> list[Unit]:
    """The units of the block right after ``unit``'s own, in the same passage."""
    return [u for u in units if u.passage == unit.passage and u.block == unit.block + 1]


def idf_weights(tokens: Sequence[str], idf: Mapping[str, float]) -> dict[str, float]:
    """Weight per distinct query token. A token the corpus never uses gets the median IDF: it lowers
    coverage (the knowledge base may not know that thing) without drowning the tokens it does know."""
    values = sorted(idf.values())
    median = values[len(values) // 2] if values else 1.0
    return {t: max(idf.get(t, median), 0.05) for t in dict.fromkeys(tokens)}


def coverage(query_weights: Mapping[str, float], text: str) -> float:
    """Share of the query's IDF mass whose tokens occur in ``text`` (0..1)."""
    total = sum(query_weights.values())
    if not total:
        return 0.0
    present = set(content_tokens(text))
    return sum(w for t, w in query_weights.items() if t in present) / total


# Project housekeeping sections of READMEs: how to contribute, the licence, contacts, a table of
# contents. Their sentences mention the product by name but answer nothing about it.
HOUSEKEEPING = re.compile(
    r"^\W*(licen[cs]e|copyright|contribut|code of conduct|community|acknowledg|contact|table of contents|contents"
    r"|reporting security|security|issues and|getting help|helpful resources|talks|latest news|目次|ライセンス)",
    re.IGNORECASE,
)


def is_housekeeping(section: str) -> bool:
    return bool(HOUSEKEEPING.search(section.split(" > ")[-1]))


def score_unit(unit: Unit, query_weights: Mapping[str, float], section: str = "") -> float:
    """Lexical evidence score: the unit's own coverage of the question, plus a little for its context
    (parent list item, section path), minus a penalty for fragments too short to be evidence."""
    own = coverage(query_weights, unit.text)
    ctx = coverage(query_weights, f"{unit.context} {section}") if (unit.context or section) else 0.0
    length_penalty = 0.15 if len(unit.text) < 12 else 0.0
    return own + 0.35 * ctx - length_penalty
