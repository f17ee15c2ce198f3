"""evals.fit: how the bars are chosen on dev."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pytest

from app.answer.features import FEATURES
from app.answer.selector import MODEL_PATH, load, sigmoid
from app.answer.value_candidates import STATIC, SpanCandidate
from app.answer.values import Span
from core.settings import Settings
from evals import fit
from evals.fit import code_hash, precision_threshold
from evals.golden import GoldenCase


def test_doctests() -> None:
    assert doctest.testmod(fit).failed == 0


def test_the_answerable_bar_is_the_middle_of_a_tie_not_its_lowest() -> None:
    # the fewest wrong decisions (4 of 10) come at 0.15, 0.55, 0.75 and 0.95: the lowest is one case from
    # losing it, the middle one sits among the others
    p = np.arange(0.05, 1.0, 0.1).round(2)
    y = np.array([0, 1, 1, 0, 0, 1, 0, 1, 0, 1])
    threshold, accuracy = fit.decision_threshold(p, y)
    assert accuracy == pytest.approx(0.6)
    assert threshold == pytest.approx(0.75)
    assert float(((p >= 0.15) == (y > 0)).mean()) == pytest.approx(accuracy)  # tied, not chosen


def test_every_prefix_of_the_ranking_is_a_candidate_bar() -> None:
    # the fifth value's probability rounds up to 0.8426: the bar must still be able to show it
    p = np.array([0.95, 0.93, 0.9, 0.88, 0.842591, 0.84, 0.3])
    y = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0])
    bar, precision, coverage = precision_threshold(p, y, 0.9)
    assert bar <= 0.842591 and precision == 1.0 and coverage == 5 / 7
    assert int((p >= bar).sum()) == 5
    # fewer than five values never set a bar
    assert precision_threshold(p[:4], y[:4], 0.9)[0] == 1.01


def _case(k: int, rng: np.random.Generator) -> fit.CaseData:
    """A synthetic dev question: one value part over four candidate units, each holding one value span."""
    matrix = rng.random((1, 4, len(FEATURES)))
    spans = [SpanCandidate(0, j, Span(0, 3, f"v{j}"), list(rng.random(len(STATIC)))) for j in range(4)]
    right = [j == k % 4 for j in range(4)]
    return fit.CaseData(
        f"dv-{k}", k % 5 == 0, matrix, np.asarray([float(r) for r in right]), [{0} if r else set() for r in right], 1,
        spans={0: spans}, span_right={0: right}, part_types=["flag"], support=float(rng.random()), rules_answer=True,
    )  # fmt: skip


def test_bars_only_chooses_the_bars_on_dev_and_keeps_the_models(tmp_path: Path) -> None:
    path = tmp_path / "selector.json"
    path.write_text(MODEL_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    before = json.loads(path.read_text(encoding="utf-8"))
    rng = np.random.default_rng(0)
    dev = [_case(k, rng) for k in range(40)]
    assert fit.bars_only(path, dev, 0.9, 0.0) == 0
    after = json.loads(path.read_text(encoding="utf-8"))
    for model in ("unit", "value", "answerable"):
        kept = {k: v for k, v in after[model].items() if k != "threshold"}
        assert kept == {k: v for k, v in before[model].items() if k != "threshold"}
    shipped = load(MODEL_PATH)
    assert shipped is not None
    probs = [fit.probabilities_of(shipped.unit_probability, d) for d in dev]
    value_dev, answerable_dev = fit.choose_bars(
        dev, probs, shipped.value.probability, shipped.answerable.probability, 0.9
    )
    assert after["value"]["threshold"] == value_dev["threshold"] == after["figures"]["value_dev"]["threshold"]
    assert after["answerable"]["threshold"] == answerable_dev["threshold"]
    assert answerable_dev["cases"] == 40 and "--bars-only" in after["bars chosen"]


def _ranked_questions(rng: np.random.Generator, n: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of ``n`` questions of 10 units each (as ``unit_rows`` gives them): the unit whose first feature is
    highest answers."""
    x = rng.random((n * 10, 4))
    y = np.zeros(n * 10)
    for q in range(n):
        y[q * 10 + int(np.argmax(x[q * 10 : q * 10 + 10, 0]))] = 1.0
    return x, y, np.repeat(np.arange(n), 10)


def test_the_ranker_fit_is_deterministic_and_ranks() -> None:
    x, y, groups = _ranked_questions(np.random.default_rng(0))
    first, second = fit.fit_ranker(x, y, groups), fit.fit_ranker(x, y, groups)
    assert json.dumps(first.trees) == json.dumps(second.trees)  # a refit writes the same model file
    scores = first.raw(x).reshape(-1, 10)
    assert (np.argmax(scores, axis=1) == np.argmax(y.reshape(-1, 10), axis=1)).mean() > 0.9
    with pytest.raises(ValueError, match="question by question"):
        fit.fit_ranker(x, y, groups[::-1].copy())  # query sizes would be read against the wrong rows


def test_calibration_maps_higher_scores_to_higher_probabilities() -> None:
    rng = np.random.default_rng(1)
    data = []
    for k in range(30):
        labels = np.zeros(5)
        labels[k % 5] = 1.0
        data.append(
            fit.CaseData(f"tr-{k}", False, np.zeros((1, 5, 1)), labels, [{0} if v else set() for v in labels], 1)
        )
    # raw scores: the answering unit scores about 2 higher; two parts, the best one counts
    raw = [[d.labels * 2 + rng.normal(scale=0.5, size=5) - 1, np.full(5, -5.0)] for d in data]
    slope, intercept = fit.calibrate(raw, data)
    assert slope > 1.0
    assert sigmoid(np.array(intercept + slope)) > 0.7 > 0.3 > sigmoid(np.array(intercept - slope))


def test_a_unit_is_labelled_by_what_its_quote_shows() -> None:
    from core.units import split_units

    units = split_units(
        "Kueue manages quotas. It does not replace kube-scheduler.\n\nIt does two things:\n\n- admits jobs\n- holds quota",
        "text",
        0,
    )
    first, second, lead_in, *items = units
    assert fit.shown_with(first, units).endswith("It does not replace kube-scheduler.")
    # the last sentence of a paragraph goes on with nothing; a lead-in shows its list, not the next sentence
    assert "Kueue" not in fit.shown_with(second, units) and "two things" not in fit.shown_with(second, units)
    assert fit.shown_with(lead_in, units).splitlines()[-2:] == ["admits jobs", "holds quota"]
    assert fit.shown_with(items[0], units).count("holds quota") == 0


def test_the_candidate_cache_key_follows_the_answer_code(tmp_path: Path) -> None:
    # a changed value detector finds other candidates: a cache collected before it must not be reused
    for name in ("app/answer/values.py", "core/text.py", "docs/notes.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    before = code_hash(tmp_path)
    (tmp_path / "docs/notes.md").write_text("changed\n")
    assert code_hash(tmp_path) == before
    (tmp_path / "app/answer/values.py").write_text("x = 2\n")
    assert code_hash(tmp_path) != before


def test_the_candidate_cache_key_follows_the_retrieval_settings(settings: Settings) -> None:
    # candidates collected from eight passages per question must not be reused for sixteen
    cases = [
        GoldenCase(
            id="c-1",
            question="How often do minor releases ship?",
            lang="en",
            reference_answer="Three times a year.",
            must_include=[["three"]],
            sources=["release-notes"],
        )
    ]
    key = fit.cache_key(cases, settings)
    assert fit.cache_key(cases, settings) == key
    assert fit.cache_key(cases, settings.with_(top_k=settings.retrieval.top_k + 1)) != key
    assert fit.cache_key([*cases, cases[0].model_copy(update={"id": "c-2"})], settings) != key
