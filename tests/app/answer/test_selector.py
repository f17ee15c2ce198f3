"""The fitted selector: the JSON model reproduces scikit-learn's probabilities; choosing and settling."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier

from app.answer import refusal, selector
from app.answer.choose import Choice, settle
from app.answer.evidence import Evidence, ScoredUnit
from app.answer.features import FEATURES, Candidates, candidates
from app.answer.lead import choose_quotes
from app.answer.locate import part_query
from app.answer.question import analyse
from app.answer.selector import FORMAT, MODEL_PATH, Logistic, Selector, Trees, from_dict, load
from app.models import Passage
from core.units import split_units
from evals.fit import trees_json


def test_doctests() -> None:
    assert doctest.testmod(selector).failed == 0


def test_exported_trees_give_sklearn_probabilities() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 5))
    y = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + rng.normal(scale=0.3, size=400) > 0).astype(float)
    model = GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0).fit(x, y)
    spec = json.loads(json.dumps(trees_json(model)))  # through JSON, as the model file is read
    trees = Trees(spec["init"], spec["rate"], spec["trees"])
    assert np.allclose(trees.probability(x), model.predict_proba(x)[:, 1], atol=1e-4)


def _logistic(threshold: float) -> dict[str, object]:
    return {"features": ["a"], "mean": [0.0], "scale": [1.0], "coef": [1.0], "intercept": 0.0, "threshold": threshold}


def test_model_file_format_is_checked(tmp_path: Path) -> None:
    data = {"format": "other", "features": [], "unit": {}, "value": {}, "answerable": {}}
    with pytest.raises(ValueError, match="expected format"):
        from_dict(data)
    assert load(tmp_path / "missing.json") is None


def test_the_shipped_model_matches_the_features() -> None:
    shipped = load(MODEL_PATH)
    assert shipped is not None and shipped.features == list(FEATURES)
    assert 0.0 < shipped.value.threshold <= 1.0 and 0.0 < shipped.answerable.threshold < 1.0
    assert shipped.meta["format"] == FORMAT and "test.jsonl" not in json.dumps(shipped.meta)


DOC = (
    "Kueue admits workloads through a ClusterQueue. The ClusterQueue sets quotas per flavor. "
    "Volcano schedules batch jobs. Topology is described by a Topology object."
)


def test_each_part_gets_its_best_unit_before_a_second_for_any_part() -> None:
    passages = [Passage(chunk_id="d#0", doc_id="d", title="D", text=DOC, score=1.0, language="en")]
    units = split_units(DOC, "text", 0)
    typed = analyse("Which queue admits workloads, and which object describes topology?", {"Kueue"})
    queries = [part_query(p, {p.attribute: 1.0}, {p.attribute: 1.0}, "q") for p in typed.parts]
    cands: Candidates = candidates(typed, queries, "q", "en", Evidence([], units), passages)
    assert cands.matrix.shape == (len(typed.parts), len(units), len(FEATURES))
    # part 0 prefers unit 0 a little, part 1 prefers unit 3; overall unit 1 is second best
    probs = [np.array([0.9, 0.8, 0.1, 0.2]), np.array([0.1, 0.2, 0.1, 0.4])]
    chosen = [s.unit for s in choose_quotes(cands, probs)]
    assert chosen[:2] == [units[0], units[3]]


def _selector(answer_threshold: float) -> Selector:
    return Selector(
        list(FEATURES), Trees(0.0, 1.0, []), Logistic(**_logistic(0.5)), Logistic(**_logistic(answer_threshold)), {}
    )  # type: ignore[arg-type]


def _choice(answerable: float) -> Choice:
    return Choice([], 1.0, [ScoredUnit(split_units("x y z.")[0], 0.5)], answerable, [])


def test_settle_firm_refusals_stand_and_the_model_decides_the_rest() -> None:
    typed = analyse("What is the default timeout of Kueue?", {"Kueue"})
    firm = refusal.Decision("refused", firm=True)
    assert settle(firm, _choice(0.99), _selector(0.5), typed, "en", frozenset({"kueue"})) is firm
    rules_refused = refusal.Decision("weak support")
    assert settle(rules_refused, _choice(0.9), _selector(0.5), typed, "en", frozenset({"kueue"})).text is None
    low = settle(refusal.Decision(), _choice(0.1), _selector(0.5), typed, "en", frozenset({"kueue", "default"}))
    assert low.not_stated is not None and low.not_stated.focus == "Kueue"
