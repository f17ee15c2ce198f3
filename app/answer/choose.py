"""Apply the fitted selector to one question (pure given the model): the value line, the quote order, and whether
the documents answer at all.

The rules still make the candidates and the features (``app.answer.features``) and still refuse outright what
is plainly out of reach (no question left after the injected instructions are dropped, a comparison with
something the documents never mention). Everything else is the fitted models' call with the thresholds
chosen on dev data (``app/answer/selector.json``):

- a value is shown in the value line only when the value model's calibrated probability clears its bar;
- the quotes are ordered by the unit model, each part's best unit first (``app.answer.lead``);
- below the answerable model's bar a question is refused — "not stated" when it asks for a value about
  something the documents cover — and above it, it is answered even where the rules would have refused.

Deliberately left out: composing (``app.answer.compose``) and the refusal wording (``app.answer.refusal``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.answer import refusal
from app.answer.evidence import ScoredUnit, Unit
from app.answer.features import FEATURES, Candidates
from app.answer.lead import answerable_features, choose_quotes, part_probabilities, unit_scores, value_choices
from app.answer.locate import Located, PartQuery
from app.answer.selector import Selector, check_features
from app.models import VALUE_TYPES, NotStated, TypedQuestion


@dataclass(frozen=True)
class Choice:
    located: list[Located]  # the value line's values (confident enough to show)
    confidence: float  # the lowest calibrated probability among them (1.0 when none)
    ranked: list[ScoredUnit]  # the quotes in reading order
    answerable: float  # calibrated probability that the documents answer the question
    unvalued: list[int]  # value parts for which no unit holds a value of the asked type
    unit_scores: Mapping[Unit, float] = field(default_factory=dict)  # every candidate's best probability


def choose(
    selector: Selector,
    cands: Candidates,
    typed: TypedQuestion,
    queries: Sequence[PartQuery],
    question: str,
    missing: int,
    support: float,
    rules_answer: bool,
    located: Sequence[Located] = (),
    housekeeping_ok: bool = False,
    leans: bool = False,
) -> Choice:
    check_features(selector, FEATURES)
    probs = part_probabilities(cands, selector.unit_probability)
    choices = value_choices(cands, probs, queries, question, selector.value.probability, located)
    shown = [c.located for c in choices if c.probability >= selector.value.threshold]
    confidence = min((c.probability for c in choices if c.probability >= selector.value.threshold), default=1.0)
    best_value = max((c.probability for c in choices), default=0.0)
    part_types = [q.part.answer_type for q in queries]
    row = answerable_features(probs, cands.matrix, part_types, best_value, missing, support, rules_answer, leans)
    answerable = float(selector.answerable.probability(row[None, :])[0])
    first = [cands.units.index(loc.unit) for loc in shown]
    chosen = {c.part for c in choices}
    unvalued = [i for i, q in enumerate(queries) if q.part.answer_type in VALUE_TYPES and i not in chosen]
    ranked = choose_quotes(cands, probs, first, housekeeping_ok=housekeeping_ok)
    return Choice(shown, confidence, ranked, answerable, unvalued, unit_scores(cands, probs))


def settle(
    decision: refusal.Decision,
    choice: Choice,
    selector: Selector,
    typed: TypedQuestion,
    language: str,
    vocabulary: set[str] | frozenset[str],
) -> refusal.Decision:
    """The final answer-or-refuse decision: firm refusals stand; otherwise the answerable model decides."""
    if decision.firm:
        return decision
    if choice.answerable >= selector.answerable.threshold:
        return refusal.Decision()
    if decision.text is not None:
        return decision
    value_parts = [p for p in typed.parts if p.answer_type in VALUE_TYPES]
    if value_parts and refusal.focus_known(typed, vocabulary):
        stated = NotStated(asked="; ".join(p.text for p in value_parts), focus=typed.focus)
        return refusal.Decision(refusal.not_stated_text(language, stated), stated)
    return refusal.Decision(refusal.refusal_text(language))
