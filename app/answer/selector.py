"""The fitted answer selector (numpy only): candidate features → probabilities, read from a reviewable JSON file.

``selector.json`` beside this module holds three fitted models and the thresholds chosen for them, written by
``python -m evals.fit`` (which names the question files it was fitted on and the dev split that chose the
thresholds):

- ``unit``: boosted trees fitted to rank each training question's units (labelled by its key-fact groups),
  their summed score calibrated to the probability that a unit answers the question (``init + rate · score``
  through a sigmoid);
- ``value``: a logistic model over a part's value spans (``app.answer.value_candidates``); the
  probability that a value is right — the value line shows the best one only above ``threshold`` (chosen on
  dev for precision);
- ``answerable``: a logistic model over the question's candidates; the calibrated probability that the
  documents answer the question at all — below ``threshold`` a typed question is answered "not stated".

    >>> tree = {"feature": [0, -1, -1], "threshold": [0.5, 0, 0], "left": [1, -1, -1], "right": [2, -1, -1],
    ...         "value": [0.0, -1.0, 1.0]}
    >>> Trees(0.0, 1.0, [tree]).raw(np.array([[0.2], [0.9]])).tolist()
    [-1.0, 1.0]

Deliberately left out: fitting (scikit-learn stays out of the app) and the features (``app.answer.features``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MODEL_PATH = Path(__file__).with_name("selector.json")
FORMAT = "slurm-k8s-advisor/selector@1"

Matrix = npt.NDArray[np.float64]


def sigmoid(x: Matrix) -> Matrix:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x, -30, 30))), dtype=float)


@dataclass(frozen=True)
class Trees:
    """A boosted ensemble of regression trees on the log-odds scale: per tree, node arrays (a split sends
    ``x <= threshold`` left, a leaf has ``left == -1``).

    The trees are packed into padded arrays once, so a batch of rows walks every tree together: one step per
    level, not one per tree."""

    init: float
    rate: float
    trees: list[dict[str, list[Any]]]
    threshold: float = 0.5

    @cached_property
    def _packed(
        self,
    ) -> tuple[npt.NDArray[np.int64], Matrix, npt.NDArray[np.int64], npt.NDArray[np.int64], Matrix, int]:
        width = max((len(t["feature"]) for t in self.trees), default=1)

        def pad(key: str, fill: float, dtype: type) -> Any:
            return np.asarray([list(t[key]) + [fill] * (width - len(t[key])) for t in self.trees], dtype=dtype)

        left = pad("left", -1, np.int64)
        depth = _max_depth(self.trees)
        return (
            pad("feature", 0, np.int64),
            pad("threshold", 0.0, float),
            left,
            pad("right", -1, np.int64),
            pad("value", 0.0, float),
            depth,
        )

    def raw(self, x: Matrix) -> Matrix:
        out = np.full(len(x), self.init, dtype=float)
        if not self.trees or not len(x):
            return out
        feature, threshold, left, right, value, depth = self._packed
        trees = np.arange(len(self.trees))[None, :]
        rows = np.arange(len(x))[:, None]
        node = np.zeros((len(x), len(self.trees)), dtype=np.int64)
        for _ in range(depth):
            inner = left[trees, node] >= 0
            go_left = x[rows, feature[trees, node]] <= threshold[trees, node]
            node = np.where(inner, np.where(go_left, left[trees, node], right[trees, node]), node)
        return np.asarray(out + self.rate * value[trees, node].sum(axis=1), dtype=float)

    def probability(self, x: Matrix) -> Matrix:
        return sigmoid(self.raw(x))


def _max_depth(trees: list[dict[str, list[Any]]]) -> int:
    """The deepest leaf of any tree (a walk from the root)."""
    deepest = 0
    for tree in trees:
        stack = [(0, 0)]
        while stack:
            node, depth = stack.pop()
            if tree["left"][node] < 0:
                deepest = max(deepest, depth)
            else:
                stack += [(tree["left"][node], depth + 1), (tree["right"][node], depth + 1)]
    return deepest


@dataclass(frozen=True)
class Logistic:
    """A logistic model on standardised features, with the decision threshold chosen on dev data."""

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float

    def probability(self, x: Matrix) -> Matrix:
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        return sigmoid(z @ np.asarray(self.coef) + self.intercept)


@dataclass(frozen=True)
class Selector:
    features: list[str]
    unit: Trees
    value: Logistic
    answerable: Logistic
    meta: dict[str, Any]

    def unit_probability(self, x: Matrix) -> Matrix:
        if len(x) == 0:
            return np.zeros(0)
        return self.unit.probability(x)


def from_dict(data: dict[str, Any]) -> Selector:
    if data.get("format") != FORMAT:
        raise ValueError(f"selector model: expected format {FORMAT!r}, got {data.get('format')!r}")
    return Selector(
        features=list(data["features"]),
        unit=trees_from(data["unit"]),
        value=logistic_from(data["value"]),
        answerable=logistic_from(data["answerable"]),
        meta={k: v for k, v in data.items() if k not in ("unit", "value", "answerable", "features")},
    )


def trees_from(data: dict[str, Any]) -> Trees:
    """Boosted trees from their JSON form (the unit model of the model file)."""
    return Trees(float(data["init"]), float(data["rate"]), list(data["trees"]), float(data.get("threshold", 0.5)))


def logistic_from(data: dict[str, Any]) -> Logistic:
    """A logistic model from its JSON form (without a threshold yet while it is being fitted: 0.5)."""
    return Logistic(
        list(data["features"]),
        [float(v) for v in data["mean"]],
        [float(v) or 1.0 for v in data["scale"]],
        [float(v) for v in data["coef"]],
        float(data["intercept"]),
        float(data.get("threshold", 0.5)),
    )


def with_bar(selector: Selector | None, bar: float | None) -> Selector | None:
    """``selector`` with the answerable model's bar set by the operator (``None``: the bar chosen on dev).

    >>> s = Selector([], Trees(0, 1, []), Logistic([], [], [], [], 0.0, 0.5), Logistic([], [], [], [], 0.0, 0.3), {})
    >>> with_bar(s, 0.8).answerable.threshold, with_bar(s, None).answerable.threshold
    (0.8, 0.3)
    """
    if selector is None or bar is None:
        return selector
    return replace(selector, answerable=replace(selector.answerable, threshold=bar))


@lru_cache(maxsize=4)
def load(path: Path = MODEL_PATH) -> Selector | None:
    """The fitted selector, or None when no model file exists yet (the rules then decide alone)."""
    if not path.exists():
        return None
    return from_dict(json.loads(path.read_text(encoding="utf-8")))


def check_features(selector: Selector, names: Sequence[str]) -> None:
    """The model was fitted on these features, in this order (a stale model file is an error, not noise)."""
    if list(names) != selector.features:
        raise ValueError("selector.json was fitted on other features: rerun `python -m evals.fit`")
