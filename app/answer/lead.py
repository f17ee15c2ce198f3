"""From the selector's probabilities to an answer's parts (pure): the value line, the lead quotes, the rest.

- Each part asking for a value takes the value span (``app.answer.value_candidates``) that the value model
  rates best; its probability decides whether the value line shows it (``app.answer.choose``).
- The lead covers the question: each part's best unit first (a two-part question gets the best unit of
  each), then the best remaining units overall, never a unit that mostly repeats one already chosen or that
  a chosen lead-in or code window already shows. A section heading shows the rows of its table that the unit
  model rates best; the rows it leaves out stay candidates.
- Whether the documents answer at all is the answerable model's call, over the best probabilities.

    >>> answerable_features([np.array([0.2, 0.9])], np.zeros((1, 2, len(FEATURES))), ["flag"], 0.8, 0, 0.5, True)[:3].tolist()
    [0.9, 0.55, 0.8]

Deliberately left out: rendering (``app.answer.quotes``) and features of units (``app.answer.features``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.answer.compose import repeats
from app.answer.evidence import ScoredUnit, brought_along, followers
from app.answer.features import COLUMN, FEATURES, Candidates
from app.answer.locate import Located, PartQuery
from app.answer.value_candidates import span_candidates, value_rows
from app.models import VALUE_TYPES
from core.text import content_tokens
from core.units import Unit, code_lines_shown, holds_values

# What the question's best units say of it, part by part (averaged over the parts): whether the unit holds the
# part's attribute, its key words, its qualifiers, a value of the asked type, its subject. A question the
# documents come near without answering ("the default of X" where X is described but no default given) has
# units that name its subject and lack the rest.
_TOP_UNIT = ("p_attr", "p_keys", "p_qual", "p_has_value", "p_about")
_QUESTION_TYPES = tuple(name for name in FEATURES if name.startswith("q_"))  # the question's main answer type
_TOP_UNIT_COLUMNS = [COLUMN[name] for name in _TOP_UNIT]
_QUESTION_TYPE_COLUMNS = [COLUMN[name] for name in _QUESTION_TYPES]
ANSWERABLE_FEATURES = (
    "p_max", "p_top3", "p_value", "value_parts", "missing_share", "support", "rules_answer", "units", "quoted_parts",
    *_QUESTION_TYPES, *(f"top_{name}" for name in _TOP_UNIT), "leans",
)  # fmt: skip
MAX_QUOTES = 7  # the lead and what is folded under it
_HOUSEKEEPING = COLUMN["housekeeping"]
Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ValueChoice:
    """The best value span for one value part, and the value model's calibrated probability that it is right."""

    part: int
    located: Located
    probability: float


def part_probabilities(cands: Candidates, model: Callable[[Matrix], Matrix]) -> list[Matrix]:
    """The unit model applied to each part's feature rows."""
    return [np.asarray(model(cands.matrix[i])) for i in range(cands.matrix.shape[0])] if cands.units else []


def value_choices(
    cands: Candidates,
    probs: Sequence[Matrix],
    queries: Sequence[PartQuery],
    question: str,
    value_model: Callable[[Matrix], Matrix],
    located: Sequence[Located] = (),
) -> list[ValueChoice]:
    """For each value part, the span the value model rates best among its candidates."""
    out = []
    for i, query in enumerate(queries):
        if query.part.answer_type not in VALUE_TYPES or i >= len(probs):
            continue
        kept, rows = value_rows(span_candidates(cands, i, query, question, located), probs[i], query.part.answer_type)
        if not kept:
            continue
        p = value_model(rows)
        best = int(np.argmax(p))
        unit = cands.units[kept[best].unit]
        found = Located(i, unit, kept[best].span, float(probs[i][kept[best].unit]), query.part.answer_type)
        out.append(ValueChoice(i, found, float(p[best])))
    return out


def answerable_features(
    probs: Sequence[Matrix],
    matrix: Matrix,
    part_types: Sequence[str],
    best_value: float,
    missing: int,
    support: float,
    rules_answer: bool,
    leans: bool = False,
) -> Matrix:
    """What the answerable model reads: the best unit probabilities, the best value's, how many value parts the
    question has and how many of them the value detectors found nothing for, the retrieval support, whether
    the rules would answer, the question's answer type, what each part's best unit holds of it (``matrix``: the
    candidates' feature rows, parts × units × ``FEATURES``), and whether the turn leans on an earlier question
    (a follow-up's own words name little of what its units hold: "and when was it published?")."""
    units = matrix.shape[1]
    best = np.max(np.stack(probs), axis=0) if probs and units else np.zeros(0)
    if units:
        tops = [int(np.argmax(p)) for p in probs]
        asked = matrix[0, 0, _QUESTION_TYPE_COLUMNS].tolist()
        held = matrix[range(len(tops)), tops][:, _TOP_UNIT_COLUMNS].mean(axis=0).tolist()
    else:
        asked, held = [0.0] * len(_QUESTION_TYPES), [0.0] * len(_TOP_UNIT)
    top = np.sort(best)[::-1]
    value_parts = sum(1 for t in part_types if t in VALUE_TYPES)
    quoted = sum(1 for t in part_types if t in ("procedure", "reason", "list", "comparison"))
    return np.asarray(
        [
            float(top[0]) if len(top) else 0.0,
            float(top[:3].mean()) if len(top) else 0.0,
            best_value,
            float(value_parts),
            missing / value_parts if value_parts else 0.0,
            support,
            float(rules_answer),
            math.log1p(units),
            float(quoted),
            *asked,
            *held,
            float(leans),
        ]
    )


def unit_scores(cands: Candidates, probs: Sequence[Matrix]) -> dict[Unit, float]:
    """Each candidate unit's best probability over the parts: what a heading's rows are chosen by."""
    if not probs or not cands.units:
        return {}
    overall = np.max(np.stack(probs), axis=0)
    return {u: float(p) for u, p in zip(cands.units, overall, strict=True)}


def _prose(unit: Unit) -> bool:
    return unit.kind not in ("code", "code_line")


def choose_quotes(
    cands: Candidates,
    probs: Sequence[npt.NDArray[np.float64]],
    first: Sequence[int] = (),
    limit: int = MAX_QUOTES,
    housekeeping_ok: bool = False,
) -> list[ScoredUnit]:
    """The quotes in reading order: ``first`` (the value units), each part's best unit, then the best overall.
    A project's housekeeping (contributing, licence, contacts) is no candidate unless the question asks for it."""
    if not probs or not cands.units:
        return []
    if not housekeeping_ok:
        housekeeping = cands.matrix[0][:, _HOUSEKEEPING] > 0
        probs = [np.where(housekeeping, -1.0, p) for p in probs]
    overall = np.max(np.stack(probs), axis=0)
    scores = dict(zip(cands.units, overall.tolist(), strict=True))  # what a heading's rows are chosen by
    order: list[int] = list(dict.fromkeys(first))
    for p in probs:
        best = int(np.argmax(p))
        if best not in order:
            order.append(best)
    order += [int(i) for i in np.argsort(-overall) if int(i) not in order]
    chosen: list[ScoredUnit] = []
    kept: list[set[str]] = []
    shown: set[object] = set()
    # the same words can stand in two passages (a chunk and the lead-in passage it was appended to), so what a
    # quote shows is also remembered by its text: a unit shown already, or a lead-in or heading whose every
    # follower is shown already, would only repeat it (code is left out: two manifests share lines)
    shown_texts: set[str] = set()
    code = False
    for i in order:
        unit = cands.units[i]
        if len(chosen) >= limit or overall[i] < 0:
            break
        if unit in shown or (unit.kind == "heading" and not followers(unit, cands.units) and not holds_values(unit)):
            continue
        if unit.kind == "code" and code:
            continue
        window = code_lines_shown(unit, cands.units)
        if unit.kind == "code_line" and any(u in shown for u in window):
            continue  # its window would repeat lines a chosen code quote already shows
        words = set(content_tokens(unit.text))
        if repeats(words, kept):
            continue
        brings = brought_along(unit, cands.units, scores)
        if _prose(unit) and (unit.text in shown_texts or (brings and all(b.text in shown_texts for b in brings))):
            continue
        code = code or unit.kind == "code"
        kept.append(words)
        chosen.append(ScoredUnit(unit, float(overall[i])))
        shown.update(brings)
        shown.update(window)
        shown_texts.update(u.text for u in (unit, *brings) if _prose(u))
    return chosen
