"""Fit the situation models and write ``app/advice/situation_model.json`` (scikit-learn; rerunnable).

    python -m app.advice.fit                 # fit on split "train" (C by cross-validation), thresholds on "dev"

Labelled data (``evals/``): ``situations.jsonl`` (text, facets, asks_platform, split; a follow-up turn also its
``history``), ``situations_facets.jsonl`` (the same, for the facet models only), ``negation.jsonl``
(text, facet, value, split: one facet's label per row), and the golden-format question sets of the train and
dev splits (``evals/splits.toml``: a selection case's ``situation`` labels its facets, every case says whether
it asks for a platform). The embedder is the configured one (its spec is written into the file). The
verdict combiner reads the index's rules (run ``ingest`` first) and the labelled situations' verdicts.

Deliberately left out: the test split (``evals situations`` reads it once, to report),
``situations_unfitted.jsonl`` and ``situations_asks.jsonl`` (labelled situations that only measure the reader;
see docs/evaluation.md) and pickles: the file holds names, means, scales, coefficients and thresholds, as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.advice.features import (
    SELECTION_FEATURES,
    bag,
    facet_feature_names,
    facet_features,
    negated_feature_names,
    negated_features,
    ngrams,
    selection_feature_names,
    selection_features,
)
from app.advice.model import MODEL_PATH, NONE, Linear, SituationModel, carrier_clause, read, supporting_cue
from app.advice.reader import SituationReader
from app.advice.table import table, verdict_feature_names, verdict_features
from core.contract import Rule
from core.settings import PROJECT_ROOT, Settings, settings_or_exit
from core.situation import candidates, facets

EVALS = PROJECT_ROOT / "evals"
SPLITS = "splits.toml"  # which golden-format question files are train, dev and test (test is never read here)
C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
DENSE_WEIGHTS = (1.0, 3.0, 10.0)
# Weights of the turn's embedding vector beside the asks-for-a-platform model's named features (standardised
# like them, then scaled: 384 columns at full weight would outvote the twenty named ones); chosen with C by
# cross-validated log-loss on train.
TEXT_WEIGHTS = (0.1, 0.2, 0.3, 0.6, 1.0)
MIN_DF = 3  # an n-gram is a feature when this many training texts have it (0: no vocabulary features)
# A facet model's minimum probability (below it the facet reads "not stated"); 0 takes the likeliest value, and
# a higher bar is kept only when its dev gain over 0 is outside the noise (``choose_min_probability``)
MIN_PROBABILITIES = (0.0, 0.45, 0.55, 0.65)
FOLDS = 5  # C and the dense weight are chosen by cross-validated log-loss on train, never on dev accuracy
# Situations that teach the facet models and the negated flag, not asks-for-a-platform: texts that tell a long
# situation before a factual question or ask for a choice as a yes/no about one platform. Fitted on, their
# asks labels cost platform questions decisions on an unread split outside the noise (docs/evaluation.md).
FACETS_ONLY = "situations_facets.jsonl"
# Situations written to measure asks-for-a-platform (split dev5, never fitted): the asker's situation with a platform
# asked of the article's recommendation, or with a factual question about the article; what a document
# recommends for someone else; requests for anything but a platform; tips for using one tool.
ASKS_DEV = "situations_asks.jsonl"


@dataclass
class Example:
    """One labelled text: facet labels (None = not labelled for that facet), asks-for-a-platform label."""

    text: str
    split: str
    lang: str = "en"
    facets: dict[str, str | None] = field(default_factory=dict)
    negated: list[str] = field(default_factory=list)
    asks: bool | None = None
    earlier: list[str] = field(default_factory=list)
    kind: str = ""
    source: str = ""
    verdict: str = ""  # the platform the text's situation calls for, where labelled (a follow-up's: its conversation's)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def situation_examples(path: Path, asks: bool = True) -> list[Example]:
    """A file of labelled situations: each text's own facets; a follow-up turn (``history``: the turns before
    it) is labelled with what it states itself, and its verdict is its conversation's. Without ``asks``, the
    rows' asks-for-a-platform labels are left out (``FACETS_ONLY``)."""
    order = facets().order
    out: list[Example] = []
    for row in _jsonl(path):
        labels: dict[str, str | None] = {f: row["facets"].get(f, NONE) for f in order}
        out.append(
            Example(row["text"], row["split"], row.get("lang", "en"), labels, list(row.get("negated", [])),
                    bool(row["asks_platform"]) if asks else None, earlier=list(row.get("history", [])),
                    kind=row.get("kind", ""), source="situations",
                    verdict=row.get("verdict") or row.get("conversation_verdict") or "")
        )  # fmt: skip
    return out


def load_examples(root: Path = EVALS) -> list[Example]:
    """Every labelled text the models are fitted and chosen on, with its split ("train" for the golden sets)."""
    order = facets().order
    out = [
        *situation_examples(root / "situations.jsonl"),
        *situation_examples(root / FACETS_ONLY, asks=False),
        *situation_examples(root / ASKS_DEV),
    ]
    for row in _jsonl(root / "negation.jsonl"):
        out.append(
            Example(row["text"], row["split"], row.get("lang", "en"), {row["facet"]: row["value"]},
                    kind=row.get("kind", ""), source="negation")
        )  # fmt: skip
    for name, split in golden_files(root):
        for row in _jsonl(root / name):
            selection = "selection" in row.get("tags", [])
            labels = {}
            if selection and row.get("situation") is not None and not row.get("history"):
                labels = {f: row["situation"].get(f, NONE) for f in order}
            out.append(
                Example(row["question"], split, row["lang"], labels, asks=selection,
                        earlier=list(row.get("history", [])), source=name, verdict=row.get("verdict") or "")
            )  # fmt: skip
    return out


def golden_files(root: Path = EVALS) -> list[tuple[str, str]]:
    """(file name, split) of the train and dev question files the protocol names; never the test files."""
    path = root / SPLITS
    if not path.is_file():
        return []
    splits = tomllib.loads(path.read_text(encoding="utf-8"))
    return [(name, split) for split in ("train", "dev") for name in splits.get(split, [])]


def _standardise(x: np.ndarray, dense: int, weight: float, tail: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The first ``dense`` columns (cue, scope and similarity features) standardised and weighted by
    ``weight`` (less shrunk by the penalty than the many vocabulary columns, which stay 0/1); with ``tail``,
    the columns after them (an embedding vector) standardised too and weighted by ``tail``."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    if tail is None:
        mean[dense:], scale[dense:] = 0.0, 1.0
    else:
        scale[dense:] /= tail
    scale[:dense] /= weight
    return mean, scale


def _fit_linear(
    x: np.ndarray,
    y: list[str],
    c: float,
    dense: int | None = None,
    weight: float = 1.0,
    balanced: bool = True,
    tail: float | None = None,
) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression

    mean, scale = _standardise(x, x.shape[1] if dense is None else dense, weight, tail)
    clf = LogisticRegression(C=c, max_iter=2000, class_weight="balanced" if balanced else None)
    clf.fit((x - mean) / scale, y)
    return {
        "classes": [str(k) for k in clf.classes_],
        "mean": mean.round(6).tolist(),
        "scale": scale.round(6).tolist(),
        "coef": clf.coef_.round(4).tolist(),
        "intercept": clf.intercept_.round(6).tolist(),
        "C": c,
    }


def _predict(spec: dict[str, Any], x: np.ndarray) -> list[str]:
    linear = Linear.from_json({**spec, "features": [], "threshold": spec.get("threshold", 0.0)})
    out = []
    for row in x:
        p = linear.probabilities(row)
        best = int(np.argmax(p))
        out.append(linear.classes[best] if p[best] >= linear.threshold else NONE)
    return out


def vocabulary(rows: list[Example], min_df: int) -> list[str]:
    """The n-grams of at least ``min_df`` labelled training texts."""
    df: dict[str, int] = {}
    for r in rows:
        if r.split == "train" and r.facets:
            for gram in ngrams(r.text):
                df[gram] = df.get(gram, 0) + 1
    return sorted(g for g, n in df.items() if n >= min_df)


def fit_facets(
    rows: list[Example], feats: list[dict[str, np.ndarray]], vocab: list[str], log: list[str]
) -> dict[str, Any]:
    """Per facet: C and the dense weight chosen by cross-validation on train, the minimum probability on dev."""
    out: dict[str, Any] = {}
    index = {g: i for i, g in enumerate(vocab)}
    words = [bag(r.text, index) for r in rows]
    feats = [{f: np.concatenate([v, w]) for f, v in x.items()} for x, w in zip(feats, words, strict=True)]
    for facet in facets().order:
        data = {s: [(f[facet], r.facets[facet]) for r, f in zip(rows, feats, strict=True)
                    if r.split == s and r.facets.get(facet) is not None] for s in ("train", "dev")}  # fmt: skip
        xt = np.stack([x for x, _ in data["train"]])
        yt = [str(y) for _, y in data["train"]]
        xd = np.stack([x for x, _ in data["dev"]]) if data["dev"] else xt
        yd = [str(y) for _, y in data["dev"]] if data["dev"] else yt
        dense = len(facet_feature_names(facet))
        c, weight = min(
            ((c, w) for c in C_GRID for w in DENSE_WEIGHTS), key=lambda s: _cv_loss(xt, yt, s[0], s[1], dense)
        )
        spec = _fit_linear(xt, yt, c, dense, weight)
        spec["dense_weight"] = weight
        hits: dict[float, np.ndarray] = {}
        for threshold in MIN_PROBABILITIES:
            spec["threshold"] = threshold
            hits[threshold] = np.asarray([p == y for p, y in zip(_predict(spec, xd), yd, strict=True)], dtype=float)
        spec["threshold"] = choose_min_probability(hits)
        spec["features"] = facet_feature_names(facet)
        train_acc = float(np.mean([p == y for p, y in zip(_predict(spec, xt), yt, strict=True)]))
        log.append(f"{facet:15} C={spec['C']:<5} w={spec['dense_weight']:<3} min p={spec['threshold']:.2f}  train {train_acc:.3f}  dev {hits[spec['threshold']].mean():.3f}"
                   f"  (n={len(yt)}/{len(yd)})")  # fmt: skip
        out[facet] = spec
    return out


def fit_negated(
    rows: list[Example], reader: SituationReader, facet_specs: dict[str, Any], vocab: list[str], log: list[str]
) -> dict[str, Any]:
    """The negated flag as its own output: one logistic model over every labelled facet of the situations
    (label: the facet is among the row's ``negated``), its features taken with the labelled value; C chosen by
    cross-validation on train, the threshold on dev by F1 of the flag (a flag a reader sees should be right, a
    missed one costs too)."""
    facet_models = _facet_models(facet_specs, vocab)
    data: dict[str, list[tuple[np.ndarray, bool]]] = {"train": [], "dev": []}
    for r in rows:
        if r.source != "situations":
            continue
        found = candidates(r.text)
        for facet, value in r.facets.items():
            if value is None or value == NONE:
                continue
            hits = [c for c in found if c.facet == facet]
            cue = supporting_cue(hits, value)
            carrier = (
                cue.clause_text if cue else carrier_clause(r.text, facet, value, facet_models, reader.value_scores)
            )
            data[r.split].append((negated_features(facet, value, hits, carrier), facet in r.negated))
    xt = np.stack([x for x, _ in data["train"]])
    yt = [str(y) for _, y in data["train"]]
    best = _choose_binary(xt, yt, data["dev"], (0.3, 0.4, 0.5, 0.6, 0.7), _f1)
    spec = best[1]
    spec["features"] = negated_feature_names()
    train = _f1([_predict_binary(spec, x) for x in xt], [y == "True" for y in yt])
    log.append(f"{'negated flag':15} C={spec['C']:<5} p>={spec['threshold']:.2f}  train F1 {train:.3f}  dev F1 {best[0]:.3f}"
               f"  (n={len(yt)}/{len(data['dev'])}, {sum(y == 'True' for y in yt)} negated in train)")  # fmt: skip
    return spec


def choose_min_probability(hits: dict[float, np.ndarray]) -> float:
    """The minimum probability whose dev hits are most (of ties, the lowest), kept only when its gain over 0 (the
    likeliest value always) is outside the noise: a bar chosen on a handful of dev texts turned readings of
    other writers' texts into "not stated"."""
    best = max(hits, key=lambda t: (hits[t].mean(), -t))
    return best if gain_low(hits[best], hits[0.0]) > 0 else 0.0


def gain_low(a: np.ndarray, b: np.ndarray, rounds: int = 2000, seed: int = 7) -> float:
    """The 2.5th percentile of the bootstrap distribution of mean(a − b), for per-item scores of two settings on
    the same items: above 0 when ``a``'s gain over ``b`` is outside the noise.

    >>> gain_low(np.ones(40), np.zeros(40)) > 0, gain_low(np.ones(40), np.r_[np.ones(39), 0.0]) > 0
    (True, False)
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if not len(d):
        return 0.0
    rng = np.random.default_rng(seed)
    return float(np.percentile(d[rng.integers(0, len(d), size=(rounds, len(d)))].mean(axis=1), 2.5))


def _f1(predicted: list[bool], truth: list[bool]) -> float:
    tp = sum(p and t for p, t in zip(predicted, truth, strict=True))
    return 2 * tp / max(1, sum(predicted) + sum(truth))


def _accuracy(predicted: list[bool], truth: list[bool]) -> float:
    return float(np.mean([p == t for p, t in zip(predicted, truth, strict=True)]))


def _choose_binary(
    xt: np.ndarray,
    yt: list[str],
    dev: list[tuple[np.ndarray, bool]],
    thresholds: Sequence[float],
    score: Callable[[list[bool], list[bool]], float],
    middle: bool = False,
    dense: int | None = None,
    tails: Sequence[float | None] = (None,),
) -> tuple[float, dict[str, Any]]:
    """A binary model fitted on train at the C of C_GRID (and the weight of ``tails`` for the columns after
    ``dense``) with the lowest cross-validated log-loss, and the threshold whose dev ``score`` is highest (of
    the thresholds that tie, the first, or with ``middle`` the middle one: a bar at the edge of a plateau sits
    next to the cases it barely separates)."""
    c, tail = min(((c, t) for c in C_GRID for t in tails), key=lambda s: _cv_loss(xt, yt, s[0], dense=dense, tail=s[1]))
    spec = _fit_linear(xt, yt, c, dense, tail=tail)
    if tail is not None:
        spec["text_weight"] = tail
    spec["classes"] = ["False", "True"]
    values = []
    for threshold in thresholds:
        spec["threshold"] = threshold
        values.append(score([_predict_binary(spec, x) for x, _ in dev], [y for _, y in dev]))
    top = max(values)
    tied = [t for t, v in zip(thresholds, values, strict=True) if v >= top - 1e-9]
    return top, {**spec, "threshold": tied[len(tied) // 2] if middle else tied[0]}


def _cv_loss(
    x: np.ndarray, y: list[str], c: float, weight: float = 1.0, dense: int | None = None, tail: float | None = None
) -> float:
    """Mean held-out log-loss over FOLDS stratified folds of train. A smooth criterion: on dev accuracy, many
    of the grid's settings tie, and whichever comes first moved a handful of dev texts at every refit."""
    from sklearn.model_selection import StratifiedKFold

    labels = np.asarray(y)
    folds = min(FOLDS, min(int(np.sum(labels == k)) for k in set(y)))
    if folds < 2:
        return 0.0
    loss = 0.0
    for fit_idx, held in StratifiedKFold(folds, shuffle=True, random_state=0).split(x, labels):
        spec = _fit_linear(x[fit_idx], list(labels[fit_idx]), c, dense, weight, tail=tail)
        loss += _log_loss(spec, x[held], list(labels[held])) * len(held)
    return loss / len(labels)


def _facet_models(facet_specs: dict[str, Any], vocab: list[str]) -> SituationModel:
    """The just-fitted facet models alone (no asks-for-a-platform or negated-flag model yet), for reading the
    training texts as the app will."""
    empty = {"classes": ["False", "True"], "features": [], "mean": [], "scale": [], "coef": [[]], "intercept": [0]}
    return SituationModel(
        {f: Linear.from_json(spec) for f, spec in facet_specs.items()},
        Linear.from_json(empty),
        {g: i for i, g in enumerate(vocab)},
        {},
    )


@dataclass(frozen=True)
class Turn:
    """What the asks-for-a-platform features need of a turn's text that costs a model: the embedder's vector
    and choice similarity, and how many facets the just-fitted facet models read in it."""

    similarity: float
    vector: np.ndarray
    facets_read: int


def selection_turns(
    rows: list[Example], reader: SituationReader, facet_specs: dict[str, Any], vocab: list[str]
) -> dict[str, Turn]:
    """Every turn of the labelled texts and their conversations, read once for both selection models."""
    facet_models = _facet_models(facet_specs, vocab)
    texts = {r.text for r in rows} | {q for r in rows for q in r.earlier}
    return {
        t: Turn(reader.choice_similarity(t), reader.vector(t), len(read(t, facet_models, reader.value_scores).readings))
        for t in texts
    }


def selection_rows(
    rows: list[Example], turns: dict[str, Turn], earlier_selection: dict[str, bool], vector: bool = True
) -> list[tuple[np.ndarray, bool, str]]:
    out = []
    for r in rows:
        if r.asks is None:
            continue
        before = any(earlier_selection.get(q, False) for q in r.earlier)
        out.append((_turn_features(r.text, before, bool(r.earlier), turns[r.text], vector), r.asks, r.split))
    return out


def _turn_features(text: str, before: bool, followup: bool, turn: Turn, vector: bool = True) -> np.ndarray:
    """A turn's asks-for-a-platform features: the named ones, then (``vector``) its embedding vector."""
    x = selection_features(text, before, followup, turn.similarity, turn.facets_read)
    return np.concatenate([x, turn.vector]) if vector else x


def fit_selection(rows: list[Example], turns: dict[str, Turn], log: list[str], vector: bool = True) -> dict[str, Any]:
    """Asks-for-a-platform: fitted on first turns, then again with the earlier turns' decisions as a feature.
    The number of facets the just-fitted facet models read is one of its features; with ``vector``, the turn's
    embedding vector too (without: the model read under another embedder)."""
    first = [r for r in rows if r.asks is not None and not r.earlier]
    spec = _choose_selection(selection_rows(first, turns, {}, vector), log, quiet=True)
    decided = {
        q: _predict_binary(spec, _turn_features(q, False, False, turns[q], vector))
        for q in {q for r in rows for q in r.earlier}
    }
    spec = _choose_selection(selection_rows(rows, turns, decided, vector), log)
    spec["value_bar"] = _value_bar(spec, first, turns, vector, log)
    return spec


# Bars tried for a sure platform reading: from the model's threshold up to 1 (1: never sure)
VALUE_BARS = tuple(round(float(b), 3) for b in np.arange(0.5, 1.0001, 0.005))


def _value_bar(
    spec: dict[str, Any], first: list[Example], turns: dict[str, Turn], vector: bool, log: list[str]
) -> float:
    """The probability at which the platform reading is sure (``choose_value_bar``), on the first turns of train
    and dev whose clauses ask for a value ("何を入れるべき？", "what matters is throughput per dollar. Platform?")."""
    from app.answer.question import asks_value

    linear = Linear.from_json({**spec, "features": []})
    rows = [r for r in first if asks_value(r.text)]
    probs = [float(linear.probabilities(_turn_features(r.text, False, False, turns[r.text], vector))[1]) for r in rows]
    asks = [bool(r.asks) for r in rows]
    bar, right = choose_value_bar(probs, asks, spec["threshold"])
    log.append(f"  value bar p>={bar:.3f}  ({right} of {len(rows)} right; {sum(asks)} ask for a platform)")
    return bar


def choose_value_bar(probs: Sequence[float], asks: Sequence[bool], threshold: float) -> tuple[float, int]:
    """The bar at or above ``threshold`` whose "a platform question iff p >= bar" is right most often on turns
    whose clauses ask for a value, with how many it gets right; of the bars that tie, the highest (the fewest
    readings moved off the value's)."""
    bars = [b for b in VALUE_BARS if b >= threshold]
    scored = [(sum((p >= b) == a for p, a in zip(probs, asks, strict=True)), b) for b in bars]
    right, bar = max(scored)
    return bar, right


def _predict_binary(spec: dict[str, Any], x: np.ndarray) -> bool:
    p = Linear.from_json({**spec, "features": []}).probabilities(x)[1]
    return bool(p >= spec["threshold"])


def _choose_selection(data: list[tuple[np.ndarray, bool, str]], log: list[str], quiet: bool = False) -> dict[str, Any]:
    xt = np.stack([x for x, _, s in data if s == "train"])
    yt = [str(y) for _, y, s in data if s == "train"]
    dev = [(x, y) for x, y, s in data if s == "dev"]
    # of the thresholds that tie on dev, the middle one
    thresholds = [round(float(t), 2) for t in np.arange(0.8, 0.19, -0.05)]
    named = len(SELECTION_FEATURES)
    vector = xt.shape[1] > named
    tails = TEXT_WEIGHTS if vector else (None,)
    best = _choose_binary(xt, yt, dev, thresholds, _accuracy, middle=True, dense=named, tails=tails)
    spec = best[1]
    spec["features"] = selection_feature_names(xt.shape[1] - named)
    if not quiet:
        train = float(np.mean([_predict_binary(spec, x) == (y == "True") for x, y in zip(xt, yt, strict=True)]))
        name = "asks_platform" if vector else "  without vector"
        weight = f"text weight {spec['text_weight']}" if vector else ""
        log.append(f"{name:15} C={spec['C']:<5} p>={spec['threshold']:.2f}  {weight:16} train {train:.3f}  dev {best[0]:.3f}"
                   f"  (n={len(yt)}/{len(dev)})")  # fmt: skip
    return spec


@dataclass(frozen=True)
class VerdictRow:
    """One labelled situation for the verdict combiner: its features, its verdict, its split, and what the
    table alone gives it (the baseline the fit reports)."""

    x: np.ndarray
    verdict: str
    split: str
    table: str


def verdict_rows(rows: list[Example], rules: Callable[[str], Sequence[Rule]]) -> list[VerdictRow]:
    """Every labelled situation that asks for a platform, read from its labels (the combiner learns the rules'
    votes → a verdict; reading the text is the facet models' part)."""
    out = []
    for r in rows:
        if not r.verdict or not r.asks or r.earlier or not r.facets:
            continue
        situation = {f: v for f, v in r.facets.items() if v and v != NONE}
        outcome = table(situation, rules(r.lang))
        out.append(
            VerdictRow(np.asarray(verdict_features(situation, outcome)), r.verdict, r.split, outcome.value or NONE)
        )
    return out


def fit_verdict(data: list[VerdictRow], log: list[str]) -> dict[str, Any]:
    """The combiner of the rules' votes: C chosen on dev log-loss (accuracy ties across most C on ~60 texts).

    The classes keep their share: weighted to balance, the few "depends" labels outweighed a lone vote, and
    "on-prem" alone, the article's plainest Slurm case, became "depends"."""
    train = [d for d in data if d.split == "train"]
    dev = [d for d in data if d.split == "dev"]
    xt, yt = np.stack([d.x for d in train]), [d.verdict for d in train]
    xd, yd = np.stack([d.x for d in dev]), [d.verdict for d in dev]
    table_dev = float(np.mean([d.table == d.verdict for d in dev]))
    best: tuple[float, dict[str, Any]] | None = None
    for c in C_GRID:
        spec = _fit_linear(xt, yt, c, balanced=False)
        loss = _log_loss(spec, xd, yd)
        if best is None or loss < best[0]:
            best = (loss, spec)
    assert best is not None
    spec = {**best[1], "features": verdict_feature_names(), "threshold": 0.0}
    train_acc, dev_acc = (
        float(np.mean([p == y for p, y in zip(_predict(spec, x), y, strict=True)])) for x, y in ((xt, yt), (xd, yd))
    )
    log.append(f"{'verdict':15} C={spec['C']:<5}          train {train_acc:.3f}  dev {dev_acc:.3f}  (table alone: "
               f"dev {table_dev:.3f}; dev log-loss {best[0]:.3f}; n={len(yt)}/{len(yd)})")  # fmt: skip
    return spec


def _log_loss(spec: dict[str, Any], x: np.ndarray, y: list[str]) -> float:
    linear = Linear.from_json({**spec, "features": [], "threshold": 0.0})
    return float(
        np.mean(
            [
                -np.log(max(linear.probabilities(row)[linear.classes.index(t)], 1e-9))
                for row, t in zip(x, y, strict=True)
            ]
        )
    )


def fitting_rows(root: Path = EVALS) -> list[Example]:
    """The labelled texts the models are fitted (train) and chosen (dev) on; the other splits are only read by
    ``evals --situations``, so that a figure on them is not one the fit has seen."""
    return [r for r in load_examples(root) if r.split in ("train", "dev")]


def fit(settings: Settings, out: Path = MODEL_PATH, root: Path = EVALS) -> list[str]:
    from app.advice.reader import rules_for
    from app.retrieval.retriever import Retriever
    from ingest.embeddings import make_embeddings

    embeddings = make_embeddings(settings)
    snap = Retriever(settings, embeddings).snapshot()
    reader = SituationReader(embeddings)
    rows = fitting_rows(root)
    feats = [facet_features(r.text, reader.value_scores) for r in rows]
    vocab = vocabulary(rows, MIN_DF) if MIN_DF else []
    log: list[str] = []
    model = {
        "produced_by": "python -m app.advice.fit",
        "fitted_on": "split train of evals/situations.jsonl, evals/situations_facets.jsonl (facets and the negated "
        "flag only) and evals/negation.jsonl (the negated flag: the situations' negated lists) and of the question "
        "files in evals/splits.toml (asks-for-a-platform; a selection case's situation labels its facets; the "
        "verdict combiner: the labelled situations' verdicts)",
        "chosen_on": "C and dense weight (asks-for-a-platform: C and the weight of the turn's embedding vector) by "
        "5-fold cross-validated log-loss on train; on split dev of the same "
        "files: the minimum probability (above 0 only where its gain over 0 is outside the noise), the negated flag's "
        "threshold by F1, the asks-for-a-platform threshold (its value bar on train and dev), "
        "the verdict combiner's C",
        "embedder": embeddings.spec,
        "examples": {s: sum(1 for r in rows if r.split == s) for s in ("train", "dev")},
        "vocabulary": vocab,
        "facets": (facet_specs := fit_facets(rows, feats, vocab, log)),
        "selection": fit_selection(rows, turns := selection_turns(rows, reader, facet_specs, vocab), log),
        "selection_plain": fit_selection(rows, turns, log, vector=False),
        "negated": fit_negated(rows, reader, facet_specs, vocab, log),
        "verdict": fit_verdict(verdict_rows(rows, lambda lang: rules_for(lang, snap)), log),
    }
    out.write_text(_compact(json.dumps(model, ensure_ascii=False, indent=1)) + "\n", encoding="utf-8")
    log.append(f"written {out}")
    return log


def _compact(text: str) -> str:
    """A list of numbers or short strings on one line: one line per class's coefficients, reviewable in a diff."""
    return re.sub(r"\[\n\s*([^\[\]{}]*?)\n\s*\]", lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.advice.fit", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=EVALS, help="folder of the labelled files (default: evals/)")
    parser.add_argument("--out", type=Path, default=MODEL_PATH, help="model file (default: %(default)s)")
    args = parser.parse_args(argv)
    for line in fit(settings_or_exit("fit"), args.out, args.data):
        print(line)
    from app.advice import model

    model.load.cache_clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
