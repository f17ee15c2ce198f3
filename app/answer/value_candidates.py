"""Typed value candidates (pure): every value span the detectors find in the units a part could be answered by.

A value part ("which apiVersion…", "the default…") is answered by one span of one unit. The candidates are the
new values of the part's type (``app.answer.locate.new_values``) in the valued units the unit model ranks
highest; each is described by its unit's probability and rank, and by what the span itself shows: whether
its words are the part's words ("topology-rack" for "which label marks a rack"), how near it sits to where the
unit mentions them, whether it is on the value side of a ``key: value`` or ``key=value`` line, how many
other values the unit holds, and the part's answer type. The value model (``app.answer.selector``) scores
them; the best one per part goes to the value line when its calibrated probability clears the bar.

    >>> _value_side("  topologyName: default", 16)
    1.0

Deliberately left out: the value detectors (``app.answer.values``) and showing values (``app.answer.compose``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.answer.features import COLUMN, TYPES, Candidates
from app.answer.locate import Located, PartQuery, best_span, new_values
from app.answer.values import Span, split_identifier
from core.text import content_tokens

Matrix = npt.NDArray[np.float64]
MAX_UNITS = 8  # valued units (best first) whose spans are candidates
STATIC = (
    "span_about", "span_best", "span_first", "spans_in_unit", "span_len", "near_attr", "value_side",
    "located_same", "qual", "attr", "keys", "unit_about", "kind_code_line", "kind_row", "kind_item", "kind_sentence",
)  # fmt: skip
VALUE_FEATURES = ("p", "p_rank", "p_margin", *STATIC, *(f"t_{t}" for t in TYPES))


@dataclass(frozen=True)
class SpanCandidate:
    part: int
    unit: int  # index into Candidates.units
    span: Span
    static: list[float]  # the STATIC features (the unit's probability is added when it is known)


def valued(rows: Matrix) -> npt.NDArray[np.int64]:
    """The units holding a new value of the part's type."""
    return np.flatnonzero(rows[:, COLUMN["p_has_value"]] > 0)


def span_candidates(
    cands: Candidates, part: int, query: PartQuery, question: str, located: Sequence[Located] = ()
) -> list[SpanCandidate]:
    """Every value span of every valued unit of one part, with its static features."""
    rows = cands.matrix[part]
    own = {t for c in query.attribute for t in ((c,) if isinstance(c, str) else (x for alt in c for x in alt)) if t}
    rule = next((loc for loc in located if loc.part == part), None)
    out = []
    for j in valued(rows):
        unit = cands.units[int(j)]
        spans = new_values(query.part, unit, question)
        if not spans:
            continue
        best = best_span(spans, unit, query)
        lowered = unit.text.lower()
        positions = [m.start() for w in own if w.isascii() for m in re.finditer(re.escape(w), lowered)]
        row = rows[int(j)]
        for k, span in enumerate(spans):
            words = set(split_identifier(span.text)) | set(content_tokens(span.text))
            distance = min((abs(p - span.start) for p in positions), default=200)
            static = [
                float(len(own & words)),
                float(span == best),
                float(k == 0),
                math.log1p(len(spans)),
                math.log1p(len(span.text)),
                1.0 / (1.0 + distance / 20.0),
                _value_side(unit.text, span.start),
                float(rule is not None and rule.unit == unit and rule.span.text == span.text),
                row[COLUMN["p_qual"]],
                row[COLUMN["p_attr"]],
                row[COLUMN["p_keys"]],
                row[COLUMN["p_about"]],
                float(unit.kind == "code_line"),
                float(unit.kind == "row"),
                float(unit.kind == "item"),
                float(unit.kind == "sentence"),
            ]
            out.append(SpanCandidate(part, int(j), span, static))
    return out


def _value_side(text: str, start: int) -> float:
    """1.0 when the span follows the line's first ``:`` or ``=`` (a value, not the key naming it)."""
    m = re.search(r"[:=]", text)
    return float(m is not None and start > m.start())


def value_rows(spans: Sequence[SpanCandidate], prob: Matrix, kind: str) -> tuple[list[SpanCandidate], Matrix]:
    """The candidates of the ``MAX_UNITS`` most probable valued units, with their full feature rows."""
    units = sorted({s.unit for s in spans}, key=lambda j: -prob[j])[:MAX_UNITS]
    if not units:
        return [], np.zeros((0, len(VALUE_FEATURES)))
    rank = {j: r for r, j in enumerate(units)}
    top = float(prob[units[0]])
    kept = [s for s in spans if s.unit in rank]
    rows = [
        [float(prob[s.unit]), 1.0 / (1 + rank[s.unit]), float(prob[s.unit]) - top, *s.static]
        + [float(kind == t) for t in TYPES]
        for s in kept
    ]
    return kept, np.asarray(rows, dtype=float)
