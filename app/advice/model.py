"""The fitted situation models at run time (numpy only): per facet a multinomial logistic regression over
{not stated, value A, value B}, a logistic regression for "was this facet said through a negation", and one
for "does this turn ask for a platform".

The coefficients live in ``situation_model.json`` beside this module, written by ``python -m app.advice.fit``
(which names the data split it was fitted on and the split its thresholds were chosen on). A facet's value
is shown with the words that set it: the cue that supports it ("no inference" → training only), else the
clause the facet model reads it from most surely; the negated flag is the flag model's, read from that
clause and the facet's cue hits ("we have nothing to serve" is flagged with no cue of its own).

    >>> softmax(np.array([0.0, 0.0]))
    array([0.5, 0.5])

Deliberately left out: fitting (``app.advice.fit``, scikit-learn) and features (``app.advice.features``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from app.advice.features import ValueScores, bag, facet_features, negated_features, selection_features
from core.situation import Candidate, Reading, Situation, candidates, clauses, facets

MODEL_PATH = Path(__file__).with_name("situation_model.json")
NONE = "none"


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return np.asarray(e / e.sum())


@dataclass(frozen=True)
class Linear:
    """A standardised linear model: classes (or one logit), feature names, scaling, coefficients."""

    classes: list[str]
    features: list[str]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (classes, features), or (1, features) for a binary model
    intercept: np.ndarray
    threshold: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Linear:
        return cls(
            list(data["classes"]),
            list(data["features"]),
            np.asarray(data["mean"], dtype=float),
            np.asarray(data["scale"], dtype=float),
            np.atleast_2d(np.asarray(data["coef"], dtype=float)),
            np.atleast_1d(np.asarray(data["intercept"], dtype=float)),
            float(data.get("threshold", 0.0)),
        )

    def neutral(self, x: np.ndarray, prefix: str = "sim") -> np.ndarray:
        """``x`` with the embedder's features set to their training mean: what the model reads when no
        embedder (or another one than it was fitted with) gives similarities."""
        x = x.copy()
        for i, name in enumerate(self.features):
            if name.startswith(prefix):
                x[i] = self.mean[i]
        return x

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = self.coef @ ((x - self.mean) / self.scale) + self.intercept
        if len(self.classes) == 2 and z.shape[0] == 1:
            p = 1.0 / (1.0 + np.exp(-z[0]))
            return np.asarray([1.0 - p, p])
        return softmax(z)


@dataclass(frozen=True)
class SituationModel:
    facets: dict[str, Linear]
    selection: Linear
    vocabulary: dict[str, int]  # n-gram → column after each facet's own features
    meta: dict[str, Any]
    negated: Linear | None = None  # was a facet's value said through a negation (None: the cue says)
    verdict: Linear | None = None  # the combiner of the rules' votes (None: the verdict table alone)
    # asks-for-a-platform without the turn's embedding vector: read when the embedder is not the one ``selection``
    # was fitted with (its vector columns would all sit at their mean)
    selection_plain: Linear | None = None
    # the probabilities (with the turn's vector, without) at which a platform reading is sure: a clause with a
    # value's cue words no longer outranks it (``app.answer.question.analyse``); 1 where the file has none
    value_bar: float = 1.0
    value_bar_plain: float = 1.0


@lru_cache(maxsize=2)
def load(path: Path = MODEL_PATH) -> SituationModel | None:
    """The fitted models, or None when the file is missing (the cue reader is used then)."""
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return SituationModel(
        {f: Linear.from_json(spec) for f, spec in data["facets"].items()},
        Linear.from_json(data["selection"]),
        {gram: i for i, gram in enumerate(data.get("vocabulary", []))},
        {
            k: v
            for k, v in data.items()
            if k not in ("facets", "selection", "vocabulary", "negated", "verdict", "selection_plain")
        },
        Linear.from_json(data["negated"]) if "negated" in data else None,
        Linear.from_json(data["verdict"]) if "verdict" in data else None,
        Linear.from_json(data["selection_plain"]) if "selection_plain" in data else None,
        float(data["selection"].get("value_bar", 1.0)),
        float(data.get("selection_plain", {}).get("value_bar", 1.0)),
    )


def verdict_model() -> Linear | None:
    """The fitted combiner of the rules' votes, when the model file has one."""
    fitted = load()
    return fitted.verdict if fitted is not None else None


def supporting_cue(hits: list[Candidate], value: str) -> Candidate | None:
    """The cue that says ``value``: a direct one first (the last said), else a negated cue of the other."""
    direct = [c for c in hits if c.value == value and not c.scope.negated]
    negated = [c for c in hits if c.value != value and c.scope.negated]
    chosen = direct or negated
    return chosen[-1] if chosen else None


def read(text: str, model: SituationModel, scores: ValueScores | None = None) -> Situation:
    """The situation ``text`` states, each facet decided by its fitted model; whether it was said through a
    negation by the negated-flag model (the clause that carries it), else by its cue."""
    defs = facets()
    features = facet_features(text, scores)
    words = bag(text, model.vocabulary)
    found = candidates(text)
    readings: dict[str, Reading] = {}
    for facet in defs.order:
        linear = model.facets.get(facet)
        if linear is None:
            continue
        p = _probabilities(linear, np.concatenate([features[facet], words]), scores)
        best = int(np.argmax(p))
        value = linear.classes[best]
        if value == NONE or p[best] < linear.threshold:
            continue
        hits = [c for c in found if c.facet == facet]
        cue = supporting_cue(hits, value)
        carrier = cue.clause_text if cue is not None else carrier_clause(text, facet, value, model, scores)
        negated = cue is not None and cue.value != value
        if model.negated is not None:
            x = negated_features(facet, value, hits, carrier)
            negated = bool(model.negated.probabilities(x)[1] >= model.negated.threshold)
        span = cue.span if cue is not None and cue.scope.negated == negated else carrier.strip()
        readings[facet] = Reading(facet, value, span, negated=negated)
    return Situation(readings)


def _probabilities(linear: Linear, x: np.ndarray, scores: ValueScores | None) -> np.ndarray:
    return linear.probabilities(x if scores is not None else linear.neutral(x))


def carrier_clause(text: str, facet: str, value: str, model: SituationModel, scores: ValueScores | None) -> str:
    """The clause of ``text`` the facet model reads ``value`` from most surely: the words shown for a value
    no cue set ("we have nothing to serve" for training only)."""
    parts = clauses(text)
    if len(parts) < 2:
        return text
    linear = model.facets[facet]
    column = linear.classes.index(value)

    def p(clause: str) -> float:
        x = np.concatenate([facet_features(clause, scores)[facet], bag(clause, model.vocabulary)])
        return float(_probabilities(linear, x, scores)[column])

    return max(parts, key=p)


def _reads_plain(model: SituationModel, embedded: bool) -> bool:
    """Whether asks-for-a-platform is read without the turn's vector: the embedder gives none and a model
    fitted without it exists. The model and its value bar are chosen by this one test, so they stay a pair."""
    return not embedded and model.selection_plain is not None


def selection_model(model: SituationModel, embedded: bool) -> Linear:
    """The asks-for-a-platform model to read: the one with the turn's vector when the embedder gives it."""
    plain = model.selection_plain
    return plain if plain is not None and _reads_plain(model, embedded) else model.selection


def value_bar(model: SituationModel, embedded: bool) -> float:
    """The bar of ``selection_model`` (the vector given or not) at which a platform reading is sure."""
    return model.value_bar_plain if _reads_plain(model, embedded) else model.value_bar


def asks_platform(
    model: SituationModel,
    question: str,
    earlier_selection: bool,
    followup: bool,
    sim_choice: float | None,
    scores: ValueScores | None = None,
    vector: np.ndarray | None = None,
) -> float:
    """The probability that ``question`` asks which platform to use (``sim_choice`` None: no embedder;
    ``scores`` the embedder's value similarities for reading its facets; ``vector`` the embedder's vector of
    ``question``, for a model fitted with one). Its bar: the threshold of ``selection_model`` (the vector given
    or not)."""
    facets_read = len(read(question, model, scores).readings)
    x = selection_features(question, earlier_selection, followup, sim_choice or 0.0, facets_read)
    dimensions = len(model.selection.features) - len(x)
    known = vector if sim_choice is not None and vector is not None and len(vector) == dimensions > 0 else None
    linear = selection_model(model, known is not None)
    complete = sim_choice is not None
    if len(linear.features) > len(x):  # fitted with the turn's vector: without it, those columns take their mean
        x = np.concatenate([x, np.zeros(dimensions) if known is None else np.asarray(known, dtype=float)])
        complete = known is not None
    return float(linear.probabilities(x if complete else linear.neutral(x))[1])


def fitted_with(model: SituationModel, spec: str) -> bool:
    """Was the model fitted with this embedder? Otherwise its similarity features mean nothing."""
    return str(model.meta.get("embedder", "")) == spec
