"""Candidate features for the answer selector (pure): every evidence unit of the retrieved passages, described
by the weak signals the rules used to decide alone.

A candidate is one unit (a sentence, list item, table row, code line, code block or a heading that stands for
its table). Its features are the unit's own lexical coverage of the question, of its context and (a follow-up)
of the earlier question it leans on, its passage's retrieval scores and rank, its kind and length, the
question's answer type, whether the value detectors find a new value of the asked type in it, and — per part
of the question — how much of that part's own words it covers (in its text, its YAML key path, its section),
whether it states the part's qualifier, and whether it is about what the part names. The fitted model
(``app.answer.selector``) turns a candidate's features into the probability that it answers the question;
nothing here weighs one signal against another.

    >>> FEATURES[:3]
    ('ev', 'ev_order', 'lex')

Deliberately left out: fitting (``evals.fit``) and choosing quotes from the probabilities (``app.answer.lead``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from app.answer.evidence import Concept, Evidence, coverage, is_housekeeping, is_lead_in
from app.answer.locate import (
    PATHS,
    Located,
    PartQuery,
    about,
    best_span,
    documented,
    new_values,
    qualifier_window,
    unit_text,
)
from app.answer.question import unit_has_qualifier
from app.answer.values import split_identifier
from app.models import VALUE_TYPES, Passage, TypedQuestion
from core.text import content_tokens
from core.units import Unit, holds_values, unit_keys

KINDS = ("sentence", "item", "row", "code_line", "code", "heading")
TYPES = ("api_version", "flag", "key", "default", "version", "date", "command", "quantity", "name")
OTHER_TYPES = ("procedure", "reason", "list", "yes_no", "comparison", "fact", "selection")
UNIT_FEATURES = (
    "ev", "ev_order", "lex", "lex_ctx", "lex_section", "rel", "dense", "prank", "upos", "chars", "lead_in",
    "lang_match", "translation", "housekeeping", "located_any", "covering", "n_parts", "cross_lang", "udense",
    "followup", "lex_prev",
    *(f"kind_{k}" for k in KINDS), *(f"q_{t}" for t in TYPES), *(f"q_{t}" for t in OTHER_TYPES),
)  # fmt: skip
PART_FEATURES = (
    "p_attr", "p_overall", "p_keys", "p_has_value", "p_n_values", "p_qual", "p_about", "p_located",
    "p_value_type", "p_span_about", "p_attr_empty", "p_udense",
)  # fmt: skip
# A pointwise model sees one unit at a time; these say how a unit compares with the other candidates of the
# same question: its value as a share of the question's best, and its rank (1 / (1 + rank)).
RELATIVE = (
    "ev", "lex", "lex_ctx", "p_attr", "p_overall", "p_keys", "dense", "rel", "p_span_about", "udense", "p_udense",
    "lex_prev",
)  # fmt: skip
FEATURES = UNIT_FEATURES + PART_FEATURES + tuple(f"{name}_{how}" for name in RELATIVE for how in ("share", "rank"))
COLUMN = {name: i for i, name in enumerate(FEATURES)}  # a feature's column in a candidate's row


@dataclass(frozen=True)
class DenseSims:
    """The embedder's cosine of each candidate unit to the question (its best form) and to each part."""

    unit: npt.NDArray[np.float64]  # (units,)
    parts: npt.NDArray[np.float64]  # (parts, units)


@dataclass(frozen=True)
class Candidates:
    """The units of one question's passages and their features: ``matrix[part, unit]`` is the feature vector of
    a unit read against one part of the question (a one-part question has one row)."""

    units: list[Unit]
    matrix: npt.NDArray[np.float64]  # (parts, units, features)

    def best_part(self) -> npt.NDArray[np.float64]:
        """Each unit's features against the part it matches best (what a unit-level model is fitted on)."""
        if not self.units:
            return np.zeros((0, len(FEATURES)))
        return self.matrix.max(axis=0)


def candidate_units(evidence: Evidence, passages: Sequence[Passage]) -> list[Unit]:
    """The units a question's candidates are made of, in order: those of ``passages`` (``DenseSims`` follows it)."""
    return [u for u in evidence.units if u.passage < len(passages)]


def candidates(
    typed: TypedQuestion,
    queries: Sequence[PartQuery],
    question: str,
    language: str,
    evidence: Evidence,
    passages: Sequence[Passage],
    located: Sequence[Located] = (),
    covering: Sequence[Unit] = (),
    howto: bool = False,
    sims: DenseSims | None = None,
    previous: Mapping[Concept, float] | None = None,
) -> Candidates:
    """Every quotable unit of ``passages`` with its features, per part of the question. ``previous`` are the
    concepts of the earlier question a follow-up leans on: a unit that covers them, not the new turn, answers
    what was asked before."""
    units = candidate_units(evidence, passages)
    if not units or not queries:
        return Candidates(units, np.zeros((max(len(queries), 1), len(units), len(FEATURES))))
    scores = {s.unit: s.score for s in evidence.scored}
    order = {u: i for i, u in enumerate(sorted(scores, key=lambda u: -scores[u]))}
    best_fused = max(p.score for p in passages) or 1.0
    dense = [p.dense or 0.0 for p in passages]
    mean_dense = sum(dense) / len(dense)
    weights = queries[0].weights if len(queries) == 1 else {c: w for q in queries for c, w in q.weights.items()}
    main_type = typed.answer_type
    per_passage: dict[int, list[Unit]] = {}
    for u in units:
        per_passage.setdefault(u.passage, []).append(u)
    located_units = {loc.unit for loc in located}
    unit_sims = sims.unit if sims is not None else np.zeros(len(units))
    rows = []
    for n, u in enumerate(units):
        p = passages[u.passage]
        siblings = per_passage[u.passage]
        base = [
            scores.get(u, 0.0),
            1.0 / (1 + order[u]) if u in order else 0.0,
            coverage(weights, u.text),
            coverage(weights, f"{u.context} {p.section}") if (u.context or p.section) else 0.0,
            coverage(weights, f"{p.title} {p.section}"),
            p.score / best_fused,
            (p.dense or 0.0) - mean_dense,
            1.0 / (1 + u.passage),
            siblings.index(u) / max(len(siblings) - 1, 1),
            math.log1p(len(u.text)),
            float(is_lead_in(u)),
            float(p.language == language),
            float(bool(p.translation_of)),
            float(is_housekeeping(p.section)),
            float(u in located_units),
            float(u in covering),
            float(len(typed.parts)),
            float(not question.isascii() and p.language == "en"),
            float(unit_sims[n]),
            float(previous is not None),
            coverage(previous, u.text) if previous else 0.0,
            *(float(u.kind == k) for k in KINDS),
            *(float(main_type == t) for t in TYPES),
            *(float(main_type == t) for t in OTHER_TYPES),
        ]
        rows.append(base)
    base_matrix = np.asarray(rows, dtype=float)
    parts = []
    for i, query in enumerate(queries):
        attribute = documented(query.attribute, passages) if query.attribute else {}
        part_sims = sims.parts[i] if sims is not None else np.zeros(len(units))
        part_rows = [
            [*_part_features(i, query, attribute, u, passages, units, question, located), float(part_sims[n])]
            for n, u in enumerate(units)
        ]
        parts.append(np.hstack([base_matrix, np.asarray(part_rows, dtype=float)]))
    return Candidates(units, relative(np.stack(parts)))


def relative(matrix: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``matrix`` (parts, units, absolute features) with the RELATIVE features appended, per part.

    >>> n = len(UNIT_FEATURES + PART_FEATURES)
    >>> relative(np.array([[[2.0] * n, [1.0] * n]]))[0, :, -2:].tolist()
    [[1.0, 1.0], [0.5, 0.5]]
    """
    extra: list[npt.NDArray[np.floating]] = []
    for name in RELATIVE:
        column = matrix[:, :, COLUMN[name]]  # the absolute features come first in FEATURES
        best = column.max(axis=1, keepdims=True)
        extra.append(column / np.where(best == 0, 1.0, best))
        extra.append(1.0 / (1.0 + (-column).argsort(axis=1, kind="stable").argsort(axis=1, kind="stable")))
    return np.concatenate([matrix, np.stack(extra, axis=2)], axis=2)


def _part_features(
    index: int,
    query: PartQuery,
    attribute: Mapping[Concept, float],
    unit: Unit,
    passages: Sequence[Passage],
    units: Sequence[Unit],
    question: str,
    located: Sequence[Located],
) -> list[float]:
    passage = passages[unit.passage]
    text = unit_text(unit, passage, units)
    part = query.part
    value_type = part.answer_type in VALUE_TYPES
    as_type = part if value_type else part.model_copy(update={"answer_type": "command"})
    spans = new_values(as_type, unit, question) if holds_values(unit) else []
    qualified = 1.0
    if spans and part.qualifiers:
        window = PATHS.sub(" ", qualifier_window(unit, units))
        qualified = float(all(unit_has_qualifier(q, window) for q in part.qualifiers))
    keys = unit_keys(unit)
    own = {t for c in attribute for t in ((c,) if isinstance(c, str) else (x for alt in c for x in alt))}
    span_about = 0.0
    if spans:
        best = best_span(spans, unit, query)
        span_about = float(len(own & (set(split_identifier(best.text)) | set(content_tokens(best.text)))))
    return [
        coverage(attribute, text) if attribute else 0.0,
        coverage(query.weights, text),
        coverage(attribute, f"{keys} {' '.join(split_identifier(keys))}") if attribute and keys else 0.0,
        float(bool(spans)),
        math.log1p(len(spans)),
        qualified,
        float(about(text, query, unit)),
        float(any(loc.part == index and loc.unit == unit for loc in located)),
        float(value_type),
        span_about,
        float(not attribute),
    ]
