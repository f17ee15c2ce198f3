"""evals/situations*.jsonl and evals/negation.jsonl: the labelled tables keep their splits apart."""

from __future__ import annotations

import json

from app.advice.fit import ASKS_DEV, EVALS, FACETS_ONLY
from core.situation import facets
from evals.golden import SITUATION_SPLITS

SPLITS = set(SITUATION_SPLITS)
CHOSEN = tuple(s for s in SITUATION_SPLITS if not s.startswith("test"))  # fitted on, or read while choosing
FILES = ("situations.jsonl", "situations_unfitted.jsonl", FACETS_ONLY, ASKS_DEV, "negation.jsonl")


def _rows() -> list[dict[str, object]]:
    return [
        json.loads(line) for name in FILES for line in (EVALS / name).read_text(encoding="utf-8").splitlines() if line
    ]


def test_every_row_has_a_known_split_and_a_unique_id() -> None:
    rows = _rows()
    assert {r["split"] for r in rows} <= SPLITS
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))


def test_no_text_of_a_test_split_is_also_fitted_or_chosen_on() -> None:
    rows = _rows()
    seen = {str(r["text"]).strip().lower() for r in rows if r["split"] in CHOSEN}
    held = [r["id"] for r in rows if r["split"] not in CHOSEN and str(r["text"]).strip().lower() in seen]
    assert held == []


def test_labels_name_facets_and_values_the_reader_knows() -> None:
    defs = facets()
    for r in _rows():
        labels = r["facets"] if "facets" in r else {r["facet"]: r["value"]}
        assert isinstance(labels, dict)
        for facet, value in labels.items():
            assert value in defs.values[facet], (r["id"], facet, value)
