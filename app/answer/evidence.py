"""Cut passages into evidence units and score them against a question (pure, no models).

A unit is the smallest quotable piece that still stands alone: a sentence, a list item (with its parent
item as context), or a table row shown with its header ("観点: 主目的; Slurm: …"). Scores combine
IDF-weighted lexical coverage of the question (glossary-expanded) with an optional dense similarity
supplied by the caller, plus the passage's retrieval rank. A Japanese word's dictionary glosses cover it in
English text in the forms English writes them: "specification" covers "specify", "entry point" covers
``entrypoint``.

Each unit knows its block (paragraph, list, table or code block), so a lead-in ("…three things:") can
bring along what it announces (``followers``), a sentence the one after it (``continuation``), a section
heading can stand for the table that opens its passage (``heading_lead``), and a how-to sentence can bring
the command after it (``code_after``).

    >>> [u.text for u in split_units("| a | b |\\n|---|---|\\n| 1 | 2 |", "table")]
    ['a: 1; b: 2']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from functools import lru_cache

from app.models import Passage
from core.text import content_tokens
from core.units import INJECTION, Unit, heading_lead, is_lead_in, is_table_separator, split_units

__all__ = ["INJECTION", "Unit", "heading_lead", "is_lead_in", "is_table_separator", "split_units"]

MAX_FOLLOWERS = 8
_MAX_CODE_LINES = 20


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


def next_sentence(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """The sentence right after sentence ``unit`` in its paragraph (same passage and block), or None."""
    at = units.index(unit) + 1 if unit in units else len(units)
    after = units[at] if at < len(units) else None
    if after is None or unit.kind != "sentence" or after.kind != "sentence":
        return None
    return after if (after.passage, after.block) == (unit.passage, unit.block) else None


def continuation(unit: Unit, units: Sequence[Unit]) -> list[Unit]:
    """What a quoted sentence that brings nothing else goes on with: the next sentence of its paragraph (for a
    lead-in followed by a paragraph, that paragraph's first sentence) — and, when that one announces a list,
    table or code ("Add the parameter to slurm.conf:"), what it announces. A next sentence that announces what
    is not there is not brought at all: the quote would end on a colon."""
    after = next_sentence(unit, units)
    if after is None and unit.kind == "sentence" and is_lead_in(unit) and not followers(unit, units):
        # a lead-in followed by a paragraph announces that paragraph ("…nine factors…:", then "Age: …")
        block = _next_block(unit, units)
        after = block[0] if block and block[0].kind == "sentence" else None
    if after is None:
        return []
    if not is_lead_in(after):
        return [after]
    announced = followers(after, units)
    return [after, *announced] if announced else []


def brought_along(
    unit: Unit, units: Sequence[Unit], scores: Mapping[Unit, float] | None = None, shown: Set[Unit] = frozenset()
) -> list[Unit]:
    """What quoting ``unit`` shows with it that is not ``shown`` yet: a lead-in's followers; a section heading
    only stands for its table, so of a longer table it brings the HEADING_ROWS rows that ``scores`` rate best,
    in document order."""
    rows = [f for f in followers(unit, units) if f not in shown]
    if unit.kind == "heading" and len(rows) > HEADING_ROWS:
        best = sorted(rows, key=lambda r: -(scores or {}).get(r, 0.0))[:HEADING_ROWS]
        rows = [r for r in rows if r in best]
    return rows


def is_short_code(unit: Unit) -> bool:
    """A code block short enough to quote whole in an answer."""
    return unit.kind == "code" and unit.text.count("\n") <= _MAX_CODE_LINES


def code_after(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """The short code block right after the paragraph or list holding ``unit`` (the command a
    how-to sentence describes), or None."""
    after = _next_block(unit, units)
    return after[0] if after and is_short_code(after[0]) else None


def _next_block(unit: Unit, units: Sequence[Unit]) -> list[Unit]:
    """The units of the block right after ``unit``'s own, in the same passage (a code block as its whole
    unit: its line units are for finding values, ``app.answer.locate``)."""
    return [u for u in units if u.passage == unit.passage and u.block == unit.block + 1 and u.kind != "code_line"]


# A query concept: a plain token, or alternatives (each a tuple of tokens that must all occur) for one idea
# said in several ways ("GPU utilisation" / "GPU利用率" / "GPU使用率"): covered when any alternative occurs.
Concept = str | tuple[tuple[str, ...], ...]


def idf_weights(tokens: Sequence[str], idf: Mapping[str, float]) -> dict[Concept, float]:
    """Weight per distinct query token. A token the corpus never uses gets the median IDF: it lowers
    coverage (the knowledge base may not know that thing) without drowning the tokens it does know."""
    weights: dict[Concept, float] = {}
    weights.update(_token_weights(tokens, idf))
    return weights


def _token_weights(tokens: Sequence[str], idf: Mapping[str, float]) -> dict[str, float]:
    values = sorted(idf.values())
    median = values[len(values) // 2] if values else 1.0
    return {t: max(idf.get(t, median), 0.05) for t in dict.fromkeys(tokens)}


def concept_weights(
    query: str,
    groups: Sequence[Sequence[str]],
    idf: Mapping[str, float],
    bridge: Callable[[str], Sequence[str]] | None = None,
) -> dict[Concept, float]:
    """Weights of the question's concepts: a glossary group the question mentions is ONE concept, weighted
    by the question's own words in it and covered by any of its terms. (Counting every synonym as a
    separate token let rare synonyms — "k8s", "クバネティス" — outweigh the words the question used.)"""
    own = _token_weights(content_tokens(query), idf)
    out: dict[Concept, float] = {}
    used: set[str] = set()
    for group in groups:
        alternatives = tuple(dict.fromkeys(tuple(content_tokens(term)) for term in group if content_tokens(term)))
        mine = [t for t in own if t not in used and any(t in alt for alt in alternatives)]
        if not mine or not alternatives:
            continue
        out[alternatives] = sum(own[t] for t in mine)
        used.update(mine)
    for t, w in own.items():
        if t in used:
            continue
        # a Japanese word the glossary does not know: its dictionary glosses cover it in English text
        bridged = tuple(form for g in (bridge(t) if bridge else ()) for form in _gloss_forms(g))
        out[((t,), *dict.fromkeys(bridged)) if bridged else t] = w
    return out


# A dictionary gloss names a word in one of its forms ("specification", "execution") where documentation uses
# another ("specify", "execute"): a gloss word this long matches any English word that starts the same.
GLOSS_PREFIX = 6


def _gloss_forms(gloss: str) -> list[tuple[str, ...]]:
    """The ways English text writes a gloss: its words, run together as in code ("entry point" is
    ``entrypoint``) and apart where the dictionary joins them ("home-directory")."""
    tokens = content_tokens(gloss)
    if not tokens:
        return []
    forms = [tuple(map(_stem_of, tokens)), tuple(map(_stem_of, (w for t in tokens for w in t.split("-") if w)))]
    if len(tokens) > 1:
        forms.append(("".join(tokens),))  # a whole word: its first letters would match its first word alone
    return list(dict.fromkeys(f for f in forms if f))


def _stem_of(gloss_token: str) -> str:
    """A gloss word as it is matched: its first letters when it is long enough (see ``GLOSS_PREFIX``)."""
    return (
        f"~{gloss_token[:GLOSS_PREFIX]}" if gloss_token.isascii() and len(gloss_token) >= GLOSS_PREFIX else gloss_token
    )


@lru_cache(maxsize=65_536)
def present_tokens(text: str) -> frozenset[str]:
    """A text's content tokens, and the first letters of its long English words (for glosses)."""
    tokens = content_tokens(text)
    return frozenset([*tokens, *map(_stem_of, tokens)])  # a short word is its own stem


def covered(concept: Concept, present: frozenset[str] | set[str]) -> bool:
    """Whether a concept occurs among ``present`` tokens (``present_tokens``): any of its alternatives, whole."""
    if isinstance(concept, str):
        return concept in present
    return any(all(t in present for t in alternative) for alternative in concept)


def coverage(query_weights: Mapping[Concept, float], text: str) -> float:
    """Share of the query's IDF mass whose concepts occur in ``text`` (0..1)."""
    total = sum(query_weights.values())
    if not total:
        return 0.0
    present = present_tokens(text)
    return sum(w for c, w in query_weights.items() if covered(c, present)) / total


# Project housekeeping sections of READMEs: how to contribute, the licence, contacts, a table of
# contents. Their sentences mention the product by name but answer nothing about it.
HOUSEKEEPING = re.compile(
    r"^\W*(licen[cs]e|copyright|contribut|code of conduct|community|acknowledg|contact|table of contents|contents"
    r"|reporting security|security|issues and|getting help|helpful resources|talks|latest news|目次|ライセンス)",
    re.IGNORECASE,
)


# A question about the project itself (its licence, how to contribute, whom to contact) is answered there.
_ASKS_HOUSEKEEPING = re.compile(
    r"licen[cs]e|copyright|contribut|code of conduct|community|contact|security|ライセンス|貢献|コントリビュート|問い合わせ",
    re.IGNORECASE,
)


def asks_housekeeping(question: str) -> bool:
    return bool(_ASKS_HOUSEKEEPING.search(question))


def is_housekeeping(section: str) -> bool:
    return bool(HOUSEKEEPING.search(section.split(" > ")[-1]))


def score_unit(unit: Unit, query_weights: Mapping[Concept, float], section: str = "") -> float:
    """Lexical evidence score: the unit's own coverage of the question, plus a little for its context
    (parent list item, section path), minus a penalty for fragments too short to be evidence."""
    own = coverage(query_weights, unit.text)
    ctx = coverage(query_weights, f"{unit.context} {section}") if (unit.context or section) else 0.0
    length_penalty = 0.15 if len(unit.text) < 12 else 0.0
    return own + 0.35 * ctx - length_penalty


# An evidence unit's score: its own lexical match, its passage's fused rank score, its passage's dense similarity.
UNIT_WEIGHTS = (0.55, 0.3, 0.15)
HOUSEKEEPING_FACTOR = 0.8  # licence, contributing, contacts: quoted only when nothing better matches
HEADING_ROWS = 3  # rows or items a section heading brings along (the best-matching ones)
# Notes about the stored copy of a source rather than about its subject: the "What this file is" block that
# opens a paraphrased-notes file, its coverage notes, "the excerpt is cut off". Never evidence.
_FILE_NOTE_SECTION = re.compile(r"^\W*(coverage note|what this file is|about this file)", re.IGNORECASE)
_FILE_NOTE_TEXT = re.compile(
    r"what this file is|stored variants? of|excerpt is cut off|excerpts? (was|were) (not )?returned|"
    r"cite the url above|treat anything below as|compiled from (the )?(portions|opening|excerpts|parts?)|"
    r"paraphrased (notes|summary)|not the (article|post|issue)'s (own )?(text|wording)|copied verbatim|"
    r"web-search index|treated here as canonical|alternate version",
    re.IGNORECASE,
)


def is_file_note(p: Passage, text: str) -> bool:
    """Housekeeping about the stored copy of a source, not evidence about Slurm or Kubernetes."""
    return bool(_FILE_NOTE_SECTION.search(p.section.split(" > ")[-1]) or _FILE_NOTE_TEXT.search(text))


def only_file_notes(p: Passage) -> bool:
    """A passage with nothing but notes about the stored file (a notes file's opening block): it cannot
    answer anything, so it does not take one of the answer's passage slots."""
    units = split_units(p.text, p.kind)
    return bool(units) and all(is_file_note(p, u.text) for u in units)


@dataclass(frozen=True)
class ScoredUnit:
    unit: Unit
    score: float


@dataclass
class Evidence:
    """The scored units of the passages an answer is built from, and each passage's best lexical match."""

    scored: list[ScoredUnit] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    best_lexical: list[float] = field(default_factory=list)


def score_passages(
    weights: Mapping[Concept, float], passages: Sequence[Passage], *, howto: bool = False, housekeeping_ok: bool = False
) -> Evidence:
    """Score every evidence unit of ``passages`` for a question given as IDF ``weights`` of its tokens.

    A unit's score mixes its lexical coverage of the question (``score_unit``) with its passage's fused
    retrieval score (relative to the best) and dense similarity. A section heading stands for the rows it
    will show, so it is scored with its best-matching ones. Code counts only for how-to questions.
    """
    out = Evidence()
    if not passages or not weights:
        return out
    best_fused = max(p.score for p in passages) or 1.0
    for i, p in enumerate(passages):
        relevance, dense = p.score / best_fused, p.dense or 0.0
        factor = HOUSEKEEPING_FACTOR if (not housekeeping_ok and is_housekeeping(p.section)) else 1.0
        passage_units = [u for u in split_units(p.text, p.kind, i) if not is_file_note(p, u.text)]
        lead = heading_lead(p.section, passage_units)
        if lead is not None:
            passage_units = [lead, *passage_units]
        out.units.extend(passage_units)
        best = 0.0
        for u in passage_units:
            if u.kind == "code_line" or (u.kind == "code" and not (howto and is_short_code(u))):
                continue  # commands answer how-to questions only, and never decide answerability; a code
                # line is evidence only for the value it holds (app.answer.locate)
            if u.kind == "heading":
                rows = sorted(followers(u, passage_units), key=lambda f: -score_unit(f, weights, p.section))
                whole = " ".join([u.text, *(f.text for f in rows[:HEADING_ROWS])])
                lexical = score_unit(replace(u, text=whole), weights, p.title)
            else:
                lexical = score_unit(u, weights, p.section)
                best = max(best, lexical) if u.kind != "code" else best
            score = UNIT_WEIGHTS[0] * lexical + UNIT_WEIGHTS[1] * relevance + UNIT_WEIGHTS[2] * dense
            out.scored.append(ScoredUnit(u, score * factor))
        out.best_lexical.append(best)
    return out
