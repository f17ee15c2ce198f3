"""Typed questions end to end over a small corpus (real embedded Chroma, fake embedder): the value asked for
is found in code or prose and shown first, multi-part questions get every part, and a value no document
states is said to be not stated (with related passages labelled as such), in ask --json too."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from fakes import FakeEmbeddings

from app.answer.choose import choose
from app.cli import main as ask_main
from app.pipeline import Advisor
from core.settings import Settings
from ingest.indexer import run_ingest

WIDGETS = """---
id: "widgets-en"
title: "Widgetd - Topology Guide"
url: "https://example.test/widgetd"
language: "en"
---

# Widgetd - Topology Guide

## Topology objects

Widgetd places widgets by rack. Create a Topology and point a WidgetFlavor at it:

```yaml
apiVersion: widgets.example.io/v1beta2
kind: WidgetFlavor
metadata:
  name: rack-flavor
spec:
  topologyName: racks
```

## Command line

Start the controller with `widgetd --rack-label=example.io/rack`. The flag --max-racks sets how many racks
one widget may span.

## Operations

Widgetd keeps its state in etcd and restarts quickly.
"""


@pytest.fixture
def advisor(settings: Settings) -> Advisor:
    """The rules alone (the fitted selector off): the value detectors and locate decide the value line."""
    (settings.index.corpus_dir / "widgets-en.md").write_text(WIDGETS, encoding="utf-8")
    embeddings = FakeEmbeddings()
    run_ingest(settings, embeddings)
    rules = settings.model_copy(update={"answer": settings.answer.model_copy(update={"selector": False})})
    return Advisor(rules, embeddings)


@pytest.fixture
def fitted(settings: Settings) -> Advisor:
    """The default: the fitted selector (app/answer/selector.json) picks the quotes and the value line."""
    (settings.index.corpus_dir / "widgets-en.md").write_text(WIDGETS, encoding="utf-8")
    embeddings = FakeEmbeddings()
    run_ingest(settings, embeddings)
    return Advisor(settings, embeddings)


def test_the_fitted_selector_leads_with_the_unit_that_holds_the_value(fitted: Advisor) -> None:
    # what is tested is the lead, not whether the toy corpus answers: the answerable bar is the real corpus's
    assert fitted.selector is not None
    fitted.selector = replace(fitted.selector, answerable=replace(fitted.selector.answerable, threshold=0.0))
    answer = fitted.ask("What apiVersion does the Widgetd WidgetFlavor use?")
    assert not answer.refused
    assert 1 <= len(answer.lead) <= 3
    assert any("widgets.example.io/v1beta2" in " ".join([q.text, *q.followers]) for q in answer.lead)
    if answer.value_line is not None:  # shown only when confident enough, and then right
        assert answer.value_line.confidence >= fitted.selector.value.threshold
        assert [f.value for f in answer.value_line.findings] == ["widgets.example.io/v1beta2"]
    assert all(q.score is not None for q in answer.lead if q.role != "value")


def _answerable(advisor: Advisor, question: str) -> float:
    """The answerable model's probability for ``question`` (what ``Advisor.ask`` compares with the bar)."""
    assert advisor.selector is not None
    seen = advisor.inspect(question)
    r = seen.reading
    return choose(
        advisor.selector, seen.candidates, r.typed, r.queries, seen.question, len(r.missing), r.support,
        r.decision.text is None, r.located,
    ).answerable  # fmt: skip


def test_the_fitted_selector_answers_not_stated_for_a_value_no_document_gives(fitted: Advisor) -> None:
    absent = "What is the default restart timeout of Widgetd, in seconds?"
    present = "What apiVersion does the Widgetd WidgetFlavor use?"
    low, high = _answerable(fitted, absent), _answerable(fitted, present)
    assert low < high
    # with the bar between the two (the fitted bar is chosen on the real corpus, not on this toy one)
    assert fitted.selector is not None
    bar = replace(fitted.selector.answerable, threshold=(low + high) / 2)
    fitted.selector = replace(fitted.selector, answerable=bar)
    answer = fitted.ask(absent)
    assert answer.refused and answer.not_stated is not None
    assert not fitted.ask(present).refused


def test_a_value_in_a_manifest_is_answered_first_from_its_code_line(advisor: Advisor) -> None:
    answer = advisor.ask("What apiVersion does the Widgetd WidgetFlavor use?")
    assert not answer.refused
    assert answer.question_info is not None and answer.question_info.answer_type == "api_version"
    assert answer.answer.startswith("**Answer:** **widgets.example.io/v1beta2** [1]")
    assert [f.value for f in answer.findings] == ["widgets.example.io/v1beta2"]
    # the line is shown once, under the sentence that announces its block (a window of the block, or the block
    # that sentence brings along), and cited with it
    assert answer.answer.count("apiVersion: widgets.example.io/v1beta2") == 1
    assert "- Create a Topology and point a WidgetFlavor at it: [1]\n" in answer.answer
    assert answer.answer.count("Create a Topology and point a WidgetFlavor at it:") == 1
    assert "apiVersion: widgets.example.io/v1beta2" in answer.citations[0].quote
    assert "point a WidgetFlavor at it:" in answer.citations[0].quote


def test_each_part_of_a_multi_part_question_gets_its_own_value(advisor: Advisor) -> None:
    answer = advisor.ask(
        "For Widgetd, what apiVersion does the WidgetFlavor use, and which spec field points it at the topology?"
    )
    assert answer.question_info is not None and [p.answer_type for p in answer.question_info.parts] == [
        "api_version",
        "key",
    ]
    assert {f.value for f in answer.findings} == {"widgets.example.io/v1beta2", "topologyName"}
    assert answer.answer.splitlines()[0].count("**") == 6  # "Answer:" and both values in bold


def test_a_flag_in_prose_is_a_value_too(advisor: Advisor) -> None:
    answer = advisor.ask("Which widgetd flag sets the label that names a rack?")
    assert [f.value for f in answer.findings] == ["--rack-label=example.io/rack"]
    assert "**--rack-label=example.io/rack**" in answer.answer


def test_a_value_no_document_states_is_not_stated(advisor: Advisor) -> None:
    answer = advisor.ask("What is the default restart timeout of Widgetd, in seconds?")
    assert answer.refused and answer.not_stated is not None
    assert answer.not_stated.focus == "Widgetd"
    assert answer.answer.startswith("**Not stated in the documents** about Widgetd")
    assert "Related, but not an answer:" in answer.answer
    assert answer.citations and len(answer.citations) <= 3
    assert answer.verdict is None


def test_japanese_not_stated_is_said_in_japanese(advisor: Advisor) -> None:
    answer = advisor.ask("Widgetdの再起動タイムアウトのデフォルトは何秒？")
    assert answer.refused and answer.not_stated is not None
    assert answer.answer.startswith("**資料には記載がありません**")


def test_a_factual_question_naming_a_platform_gets_no_verdict(advisor: Advisor) -> None:
    answer = advisor.ask("Which flag of widgetd should we set for Slurm-style rack placement, the rack label?")
    assert answer.verdict is None


def test_ask_json_carries_the_typed_question_and_not_stated(
    advisor: Advisor, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("app.cli.settings_or_exit", lambda prog: advisor.settings)
    monkeypatch.setattr("app.pipeline.make_embeddings", lambda settings: advisor.embeddings)
    assert ask_main(["--json", "What apiVersion does the Widgetd WidgetFlavor use?"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["question"]["text"].startswith("What apiVersion")
    assert out["question"]["answer_type"] == "api_version" and "Widgetd" in out["question"]["focus"]
    assert out["question"]["parts"][0]["answer_type"] == "api_version"
    assert out["findings"][0]["value"] == "widgets.example.io/v1beta2" and out["not_stated"] is None
    assert ask_main(["--json", "What is the default restart timeout of Widgetd, in seconds?"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["refused"] is True and set(out["not_stated"]) == {"asked", "focus"}
    assert out["citations"] and out["verdict"] is None
