"""app.advice.fit.load_examples: the labelled texts the situation models are fitted and chosen on."""

from __future__ import annotations

import json
from pathlib import Path

from app.advice.fit import ASKS_DEV, FACETS_ONLY, fitting_rows, load_examples, situation_examples
from app.advice.model import NONE


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_a_labelled_follow_up_keeps_its_conversation_and_the_conversations_verdict(tmp_path: Path) -> None:
    first = "On-prem HPC cluster, training only. Which platform?"
    _write(
        tmp_path / "situations.jsonl",
        [
            {"id": "s1", "text": first, "lang": "en", "asks_platform": True, "split": "train",
             "facets": {"deployment": "on_prem", "workload": "training"}, "negated": [], "verdict": "slurm"},
            {"id": "s2", "text": "and if we also serve it, on a separate k8s cluster?", "history": [first],
             "lang": "en", "asks_platform": True, "split": "dev", "verdict": None, "conversation_verdict": "hybrid",
             "facets": {"workload": "training_and_serving", "one_platform": "no"}, "negated": []},
        ],
    )  # fmt: skip
    standalone, followup = situation_examples(tmp_path / "situations.jsonl")
    assert [e.text for e in load_examples(tmp_path)] == [standalone.text, followup.text]
    assert standalone.earlier == [] and standalone.verdict == "slurm"
    assert followup.earlier == [first] and followup.verdict == "hybrid" and followup.asks is True
    # the turn is labelled with what it states itself; every other facet is labelled "not stated"
    assert followup.facets["one_platform"] == "no" and followup.facets["deployment"] == NONE


def test_the_fit_reads_train_and_dev_and_never_a_later_dev_or_a_test_split(tmp_path: Path) -> None:
    rows = [
        {"id": f"s{i}", "text": f"text {split}", "lang": "en", "asks_platform": True, "split": split,
         "facets": {"deployment": "cloud"}, "negated": [], "verdict": None}
        for i, split in enumerate(["train", "dev", "dev2", "dev3", "dev4", "test", "test3"])
    ]  # fmt: skip
    _write(tmp_path / "situations.jsonl", rows)
    assert [r.split for r in load_examples(tmp_path)] == ["train", "dev", "dev2", "dev3", "dev4", "test", "test3"]
    assert [r.text for r in fitting_rows(tmp_path)] == ["text train", "text dev"]


def test_situations_written_for_the_facet_models_carry_no_asks_label_into_the_fit(tmp_path: Path) -> None:
    row = {"id": "f1", "text": "On-prem, 16 fixed nodes, two part-time admins. Does Enroot need a daemon?", "lang": "en",
           "asks_platform": False, "split": "train", "facets": {"deployment": "on_prem", "fleet": "fixed"},
           "negated": [], "verdict": None}  # fmt: skip
    _write(
        tmp_path / "situations.jsonl",
        [{**row, "id": "s1", "text": "Cloud, elastic. Which one?", "asks_platform": True}],
    )
    _write(tmp_path / FACETS_ONLY, [row])
    fitted, facets_only = fitting_rows(tmp_path)
    assert fitted.asks is True
    # the facet labels are read; the asks-for-a-platform label is not
    assert facets_only.text == row["text"] and facets_only.asks is None
    assert facets_only.facets["fleet"] == "fixed" and facets_only.source == "situations"


def test_situations_written_to_measure_asks_are_read_but_never_fitted(tmp_path: Path) -> None:
    row = {"id": "a1", "text": "Going by the article's table, which one for our on-prem racks?", "lang": "en",
           "asks_platform": True, "split": "dev5", "facets": {"deployment": "on_prem"}, "negated": [], "verdict": None}  # fmt: skip
    _write(tmp_path / ASKS_DEV, [row])
    assert [(r.split, r.asks) for r in load_examples(tmp_path)] == [("dev5", True)]
    assert fitting_rows(tmp_path) == []
