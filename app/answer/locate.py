"""Find the value each part of a typed question asks for (pure): the unit that holds it, and the span.

For every part that asks for a value (an apiVersion, a flag, a key, a default, a quantity…) each evidence
unit of the retrieved passages is checked:
- it must hold a value of the asked type (``app.answer.values``) that the question did not already say;
- it must state what the part qualifies ("maximum", "default", "%", "$", "seconds"), in its own words or
  the lines around it;
- it must be about what the part asks: the part's own words (bridged across languages and matched inside
  identifiers, so "parent queue" meets ``parentQueue``) must be covered in the unit, its context (a code
  line's lead-in sentence and YAML key path) or its section.
The best such unit per part wins; a part no unit answers is *missing*, which is how the answer step knows
that the documents do not state a value instead of quoting something loosely related.

Deliberately left out: composing the answer (``app.answer.compose``) and refusal wording
(``app.answer.refusal``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from app.answer.counting import count_spans, counts
from app.answer.evidence import Concept, Evidence, coverage, covered, present_tokens
from app.answer.question import unit_has_qualifier
from app.answer.values import Span, find_values, identifier_words, split_identifier
from app.models import VALUE_TYPES, AnswerType, Passage, QuestionPart, TypedQuestion
from core.text import content_tokens, normalize
from core.units import Unit, code_language, holds_values

# A unit answers a part only when it covers this share of the part's own words (what is asked about
# the focus); the rest of the question (its topic) and the passage's rank add to the ranking, not to this bar.
ATTRIBUTE_MIN = 0.2
# Several values for a plural part ("which flags…") come from units scoring within this share of its best.
PLURAL_NEAR = 0.85
MAX_PLURAL = 3
_CODE_KINDS = ("code_line",)


@dataclass(frozen=True)
class Located:
    part: int
    unit: Unit
    span: Span
    score: float
    answer_type: AnswerType = "fact"


@dataclass(frozen=True)
class PartQuery:
    """What one part is scored with: all its concepts (own words weigh fully, the rest of the question
    less), just its own attribute concepts (the bar a unit must clear), and what the unit must be about:
    the products the question names, the identifiers the part names, the versions the question names."""

    part: QuestionPart
    weights: Mapping[Concept, float]
    attribute: Mapping[Concept, float]
    products: tuple[tuple[str, ...], ...] = ()
    identifiers: tuple[tuple[str, ...], ...] = ()
    versions: frozenset[str] = frozenset()


# Identifiers the user typed that a unit about them must mention: CamelCase and ALL_CAPS names
# (``GangScheduling``, ``ENROOT_DATA_PATH``, ``slotsPerWorker``); file names and paths are context.
_NAMED = re.compile(
    r"(?<![A-Za-z0-9_])(?:[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
    r"|[A-Z]{2,}[a-z][A-Za-z0-9]*|[A-Za-z]{2,}\d+[A-Za-z0-9]*)(?![A-Za-z0-9_])"
)
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?)(?![\w.]*\d)")
# The platforms themselves are in nearly every document: naming them says nothing about which one a unit is from.
_GENERIC = frozenset(["slurm", "kubernetes", "k8s"])


def part_query(
    part: QuestionPart,
    weights: Mapping[Concept, float],
    attribute: Mapping[Concept, float],
    question: str,
    products: Sequence[str] = (),
    other_parts: Sequence[str] = (),
) -> PartQuery:
    """A part's query with its identifiers matched inside code too ("PodResources" meets ``pod-resources``).
    A part that names no identifier is about the ones of the question's topic (a clause no other part has:
    "If I leave slotsPerWorker out, what does it default to?")."""
    named = _identifiers(part.text)
    if not named:
        topic = question
        for other in [part.text, *other_parts]:
            topic = topic.replace(other, " ")
        named = _identifiers(topic)
    return PartQuery(
        part,
        _with_subwords(weights, part.text),
        _with_subwords(attribute, part.text),
        tuple(t for name in products if (t := tuple(content_tokens(name))) and not set(t) <= _GENERIC),
        named,
        frozenset(m.group(1) for m in _VERSION.finditer(question)),
    )


def _identifiers(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(
        dict.fromkeys(
            tuple(split_identifier(m.group())) for m in _NAMED.finditer(text) if m.group().lower() not in _GENERIC
        )
    )


def _with_subwords(weights: Mapping[Concept, float], text: str) -> dict[Concept, float]:
    """A token that is an identifier of the text ("podresources" of "PodResources") is also covered by its words."""
    parts = {"".join(w): tuple(w) for w in (split_identifier(m.group()) for m in _NAMED.finditer(text)) if len(w) > 1}
    out: dict[Concept, float] = {}
    for concept, w in weights.items():
        if isinstance(concept, str) and concept in parts:
            out[((concept,), parts[concept])] = w
        else:
            out[concept] = w
    return out


def about(text: str, query: PartQuery, unit: Unit) -> bool:
    """The unit is about what the question asks: one of its products, the part's identifiers, its versions."""
    words = set(content_tokens(text)) | set(split_identifier(text))
    tokens = words | {w[:-1] for w in words if w.endswith("s")}  # "nodesets" names a NodeSet too
    if query.products and not any(set(p) <= tokens for p in query.products):
        return False
    if query.identifiers and not any("".join(i) in tokens or set(i) <= tokens for i in query.identifiers):
        return False
    stated = {m.group(1) for m in _VERSION.finditer(unit.text)}
    if query.versions and query.part.answer_type == "date":
        # "when was v1.0 released" is answered only where v1.0 is named
        return bool({m.group(1) for m in _VERSION.finditer(text)} & query.versions)
    return not (query.versions and stated and not stated & query.versions)


def is_value_part(part: QuestionPart) -> bool:
    return part.answer_type in VALUE_TYPES


def _unit_language(unit: Unit) -> str | None:
    """A code line's block language, None for prose (a command is a shell line of a code block)."""
    return code_language(unit) if unit.kind in _CODE_KINDS else None


def unit_text(unit: Unit, passage: Passage, units: Sequence[Unit] = ()) -> str:
    """What a unit is matched on: its words, the words inside its identifiers, its context and section; a
    YAML line also its document's ``kind`` and ``name`` (an apiVersion line belongs to the object below it)."""
    document = yaml_document(unit, units) if unit.kind in _CODE_KINDS else ""
    parts = [unit.text, unit.context, document, passage.section, passage.title]
    return " ".join([*parts, " ".join(identifier_words(" ".join(parts[:3])))])


_YAML_NAMES = re.compile(r"^\s*(kind|name):\s*[\"']?([\w.-]+)")


def yaml_document(unit: Unit, units: Sequence[Unit]) -> str:
    """The ``kind``/``name`` lines of the YAML document (between ``---`` lines) holding a code line."""
    lines = sorted(
        (u.line, u.text) for u in units if u.kind in _CODE_KINDS and (u.passage, u.block) == (unit.passage, unit.block)
    )
    start = max((i for i, text in lines if text.strip() == "---" and i <= unit.line), default=-1)
    end = min((i for i, text in lines if text.strip() == "---" and i > unit.line), default=10**9)
    found = [m.group(2) for i, text in lines if start < i < end and (m := _YAML_NAMES.match(text))]
    return " ".join(found)


def qualifier_window(unit: Unit, units: Sequence[Unit]) -> str:
    """The unit with its neighbouring lines (a code line) or alone: where a qualifier may be stated."""
    if unit.kind not in _CODE_KINDS:
        return f"{unit.text} {unit.context}"
    near = [
        u.text
        for u in units
        if u.passage == unit.passage
        and u.block == unit.block
        and abs(_line(u) - _line(unit)) <= 1
        and u.kind in _CODE_KINDS
    ]
    return " ".join([*near, unit.context])


def _line(unit: Unit) -> int:
    return int(getattr(unit, "line", 0) or 0)


def new_values(part: QuestionPart, unit: Unit, question: str) -> list[Span]:
    """Values of the part's type in the unit that the question did not already state (a quantity counting
    something else is not one: "16 nodes" does not answer "how many rings")."""
    asked = normalize(question)
    spans = find_values(part.answer_type, unit.text, code_lang=_unit_language(unit))
    if part.answer_type == "quantity" and part.counted.isascii() and len(part.counted) > 2:
        # "how many entries": a number with what is counted right after it ("keeps 17 entries", "seven MIG
        # slices"), the count and the thing together
        spans += count_spans(unit.text, part.counted)
    return [
        s
        for s in spans
        if normalize(s.text) not in asked and len(s.text) > 1 and counts(unit.text[s.start : s.end + 24], part.counted)
    ]


def best_span(spans: Sequence[Span], unit: Unit, query: PartQuery) -> Span:
    """The span that is itself about the asked words (``topology-rack`` for "which label marks a rack"), else
    the one nearest to where the unit mentions them."""
    own = {t for c in query.attribute for t in ((c,) if isinstance(c, str) else (x for alt in c for x in alt))}

    def about(s: Span) -> int:
        return len(own & set(split_identifier(s.text)) | own & set(content_tokens(s.text)))

    positions = [m.start() for w in own if w.isascii() for m in re.finditer(re.escape(w), unit.text.lower())]

    def distance(s: Span) -> int:
        return min((abs(p - s.start) for p in positions), default=0)

    return sorted(spans, key=lambda s: (-about(s), distance(s), s.start))[0]


def _score_unit(
    unit: Unit, query: PartQuery, passage: Passage, relevance: float, units: Sequence[Unit] = ()
) -> tuple[float, float]:
    text = unit_text(unit, passage, units)
    own = coverage(query.attribute, text) if query.attribute else 1.0
    overall = coverage(query.weights, text)
    return 0.45 * overall + 0.35 * own + 0.2 * relevance, own


def documented(attribute: Mapping[Concept, float], passages: Sequence[Passage]) -> dict[Concept, float]:
    """The attribute concepts the retrieved passages use at all. Words of the user's own situation ("a pinned
    release instead of master", "an older operator") that no passage uses cannot be matched by any unit:
    the bar is the share of what the documents could say."""
    text = " ".join(f"{p.title} {p.section} {p.text} {' '.join(identifier_words(p.text))}" for p in passages)
    present = present_tokens(text)
    return {c: w for c, w in attribute.items() if covered(c, present)}


def locate_part(
    index: int, query: PartQuery, question: str, evidence: Evidence, passages: Sequence[Passage]
) -> list[Located]:
    """The units that answer one value part, best first (several for a plural part); [] when none does."""
    best_fused = max((p.score for p in passages), default=0.0) or 1.0
    if query.attribute:
        query = replace(query, attribute=documented(query.attribute, passages) or {"": 1.0})
    found: list[Located] = []
    for unit in evidence.units:
        if not holds_values(unit) or unit.passage >= len(passages):
            continue
        spans = new_values(query.part, unit, question)
        if not spans:
            continue
        window = PATHS.sub(" ", qualifier_window(unit, evidence.units))
        if not all(unit_has_qualifier(q, window) for q in query.part.qualifiers if q != "time" or _timed(query)):
            continue
        passage = passages[unit.passage]
        if not about(unit_text(unit, passage, evidence.units), query, unit):
            continue
        score, own = _score_unit(unit, query, passage, passage.score / best_fused, evidence.units)
        if own < ATTRIBUTE_MIN:
            continue
        found.append(Located(index, unit, best_span(spans, unit, query), score, query.part.answer_type))
    found.sort(key=lambda x: -x.score)
    if not found:
        return []
    if not query.part.plural:
        return found[:1]
    chosen: list[Located] = []
    for loc in found:
        if loc.score < PLURAL_NEAR * found[0].score or len(chosen) >= MAX_PLURAL:
            break
        if all(normalize(loc.span.text) != normalize(c.span.text) for c in chosen):
            chosen.append(loc)
    return chosen


# Paths and qualified names are values, not words: "/namespaces/default/" says nothing about a default.
PATHS = re.compile(r"\S*[/=]\S*")


def _timed(query: PartQuery) -> bool:
    """A time qualifier binds only a quantity or default part (a version "released in which month" is a date)."""
    return query.part.answer_type in ("quantity", "default")


def locate(
    typed: TypedQuestion, queries: Sequence[PartQuery], question: str, evidence: Evidence, passages: Sequence[Passage]
) -> tuple[list[Located], list[int]]:
    """Values for every value part of ``typed`` and the indexes of the value parts nothing answers."""
    located: list[Located] = []
    missing: list[int] = []
    for i, query in enumerate(queries):
        if query.part.answer_type == "procedure":
            # "how do I …?" is answered by the command that does it, when a code line holds one; a procedure
            # with none is still answered by its steps in prose, so nothing is missing
            as_command = replace(query, part=query.part.model_copy(update={"answer_type": "command"}))
            located.extend(locate_part(i, as_command, question, evidence, passages)[:1])
            continue
        if not is_value_part(query.part):
            continue
        found = locate_part(i, query, question, evidence, passages)
        if found:
            located.extend(found)
        else:
            missing.append(i)
    return located, missing


# A part's own best unit is quoted only when it covers this share of the part's documented words.
COVER_MIN = 0.3
_PROSE = ("sentence", "item", "row")


def cover_parts(
    queries: Sequence[PartQuery], located: Sequence[Located], evidence: Evidence, passages: Sequence[Passage]
) -> list[Unit]:
    """For a question of several parts, each part that no value answers gets its own best prose unit, so the
    parts are covered before a second unit is added for any one part ("…which flags? Does the remap give me
    root?" quotes the sentence about root too). One-part questions are left to the ordinary selection."""
    if len(queries) < 2:
        return []
    answered = {loc.part for loc in located}
    best_fused = max((p.score for p in passages), default=0.0) or 1.0
    chosen: list[Unit] = []
    for i, query in enumerate(queries):
        if i in answered or not query.attribute:
            continue
        attribute = documented(query.attribute, passages)
        if not attribute:
            continue
        ranked = []
        for unit in evidence.units:
            if unit.kind not in _PROSE or unit in chosen or unit.passage >= len(passages):
                continue
            passage = passages[unit.passage]
            own = coverage(attribute, unit_text(unit, passage))
            if own >= COVER_MIN:
                ranked.append((own + 0.2 * passage.score / best_fused, unit))
        if ranked:
            chosen.append(max(ranked, key=lambda pair: pair[0])[1])
    return chosen
