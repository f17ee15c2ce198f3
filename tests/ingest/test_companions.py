"""Translation companions end to end: linking, stale detection, one source per section, aligned quotes.

The documents are written here: a small Japanese "article" and its English companion with the same
headings, list and table, so every assertion can be checked by reading this file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from app.cli import main as ask_main
from app.pipeline import Advisor
from core.settings import Settings
from ingest.companions import link, structure_problem
from ingest.documents import parse_document
from ingest.indexer import run_ingest
from ingest.rules import extract_rules, load_rules
from ingest.store import Store

ORIGINAL_BODY = """
# 基盤の比較

## 1. 概要

- Alphaクラスタは軽量で、保守は年1回のアップグレードだけです。
- Betaクラスタは多機能ですが、パッチ適用が毎月必要です。

## 2. 推奨シナリオ

| シナリオ | 適切なプラットフォーム | 理由 |
|---|---|---|
| オンプレの専用クラスタで学習 | Slurm | 通信が速い |
| クラウドでノードを頻繁に伸縮 | Kubernetes | 自動スケール |
"""

TRANSLATION_BODY = """
# Comparing platforms

## 1. Overview

- The Alpha cluster is lightweight; its maintenance is a single upgrade per year.
- The Beta cluster has many features, but it needs patching every month.

## 2. Recommended scenarios

| Scenario | Suitable platform | Reason |
|---|---|---|
| Training on a dedicated on-prem cluster | Slurm | Fast communication |
| Nodes scaled out and in frequently in the cloud | Kubernetes | Automatic scaling |
"""


def _front(**fields: str) -> str:
    return "---\n" + "".join(f'{k}: "{v}"\n' for k, v in fields.items()) + "---\n"


def write_pair(corpus: Path, translations: Path, source_hash: str | None = None) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    translations.mkdir(parents=True, exist_ok=True)
    (corpus / "art-ja.md").write_text(
        _front(id="art-ja", title="基盤の比較", url="https://example.test/art", language="ja") + ORIGINAL_BODY,
        encoding="utf-8",
    )
    digest = source_hash or hashlib.sha256(ORIGINAL_BODY.encode("utf-8")).hexdigest()
    (translations / "art-en.md").write_text(
        _front(
            id="art-en",
            title="Comparing platforms (English translation)",
            url="https://example.test/art",
            language="en",
            translation_of="art-ja",
            source_sha256=digest,
            completeness="translation (not the publisher's wording)",
        )
        + TRANSLATION_BODY,
        encoding="utf-8",
    )


@pytest.fixture
def paired(settings: Settings, tmp_path: Path) -> Settings:
    corpus = tmp_path / "pair" / "docs"
    write_pair(corpus, tmp_path / "pair" / "translations")
    return settings.with_(corpus_dir=corpus, translations_dir=tmp_path / "pair" / "translations")


def _docs(original: str = ORIGINAL_BODY, translation: str = TRANSLATION_BODY, sha: str = "") -> list:
    o = parse_document(("---\nid: art-ja\n---\n" + original).encode(), "art-ja.md")
    t = parse_document(
        (
            f'---\nid: art-en\ntranslation_of: art-ja\nsource_sha256: "{sha or o.body_sha256}"\n---\n' + translation
        ).encode(),
        "translations/art-en.md",
    )
    return [o, t]


def test_link_maps_sections_one_to_one() -> None:
    linked = link(_docs())
    assert not linked.problems and not linked.stale
    translation = linked.documents[1]
    assert translation.section_map["2. Recommended scenarios"] == "2. 推奨シナリオ"


def test_a_changed_original_makes_the_translation_stale() -> None:
    linked = link(_docs(sha="0" * 64))
    assert linked.stale == ["art-en"] and not linked.problems


@pytest.mark.parametrize(
    ("translation", "expected"),
    [
        (TRANSLATION_BODY.replace("## 2. Recommended", "### 2. Recommended"), "level-3 heading here, level 2"),
        (TRANSLATION_BODY.replace("| Nodes scaled", "| Extra | row | here |\n| Nodes scaled"), "table (5 lines)"),
        (TRANSLATION_BODY + "\n## 3. Extra\n\ntext\n", "it has 4 headings, the original 3"),
    ],
)
def test_a_structure_mismatch_names_the_section(translation: str, expected: str) -> None:
    problem = structure_problem(translation, ORIGINAL_BODY)
    assert problem is not None and expected in problem
    linked = link(_docs(translation=translation))
    assert linked.problems and "does not match 'art-ja'" in linked.problems[0].reason
    assert [d.id for d in linked.documents] == ["art-ja"]  # the broken companion is not indexed


def test_list_items_are_counted_as_the_parser_reads_them() -> None:
    original = "## A\n\n- Set the queue:\n  - name: gpu\n  - nodes: 4\n"
    # the sub-items turned into a code block inside the item: their lines look like items, but are code
    as_code = "## A\n\n- キューを設定する:\n\n  ```yaml\n  - name: gpu\n  - nodes: 4\n  ```\n"
    problem = structure_problem(as_code, original)
    assert problem is not None
    assert "holds list item (1 with sub-items); the original list item (3 with sub-items)" in problem
    # an item holding the same code on both sides corresponds
    holding = "## A\n\n- Apply it:\n\n  ```yaml\n  - name: gpu\n  ```\n  - and check it\n"
    assert structure_problem(holding.replace("Apply it", "適用する"), holding) is None


def test_a_translation_of_a_missing_document_is_an_error() -> None:
    _, translation = _docs()
    linked = link([translation])
    assert linked.problems[0].path == "translations/art-en.md"
    assert "names no document" in linked.problems[0].reason


def test_rules_are_read_from_the_recommendation_table_in_both_languages() -> None:
    ja = extract_rules(ORIGINAL_BODY.split("## 2. 推奨シナリオ")[1], "art-ja#1", "art-ja", "2", "ja")
    en = extract_rules(TRANSLATION_BODY.split("## 2. Recommended scenarios")[1], "art-en#1", "art-en", "2", "en")
    assert [(r.verdict, r.condition) for r in ja] == [
        ("slurm", "オンプレの専用クラスタで学習"),
        ("kubernetes", "クラウドでノードを頻繁に伸縮"),
    ]
    assert [r.reason for r in en] == ["Fast communication", "Automatic scaling"]
    assert all(r.quote.startswith("| Scenario") for r in en)


@pytest.mark.parametrize(
    ("sentence", "verdict"),
    [
        ("- LLMを最短で学習したいだけならSlurmが近道。", "slurm"),
        ("- If you also want autoscaling in the cloud, consider Kubernetes.", "kubernetes"),
        ("- 長時間学習はSlurmクラスタ、推論はKubernetesでスケールアウトする。", "hybrid"),
        ("- If no topology is given, Slurm will use a flat one.", None),  # a description, not a recommendation
        ("- Slurm and Kubernetes both schedule jobs.", None),
    ],
)
def test_conditional_statements_become_rules(sentence: str, verdict: str | None) -> None:
    rules = extract_rules(sentence, "d#0", "d", "S", "ja")
    assert [r.verdict for r in rules] == ([verdict] if verdict else [])


def test_ingest_reports_stale_translations_and_stores_rules(paired: Settings, tmp_path: Path) -> None:
    report = run_ingest(paired, _embeddings())
    assert report.translations_stale == [] and report.docs_added == 2
    write_pair(paired.index.corpus_dir, paired.index.translations_folder, source_hash="f" * 64)
    report = run_ingest(paired, _embeddings())
    assert report.translations_stale == ["art-en"]
    assert "stale translation(s): art-en" in report.summary()
    info = Store.open(paired).info()
    assert info is not None and info.translations_stale == ["art-en"]
    gen = Store.open(paired).current()
    assert gen is not None
    chunks, _ = gen.all_chunks()
    assert {c.original_section for c in chunks if c.doc_id == "art-en" and c.section} == {"1. 概要", "2. 推奨シナリオ"}
    assert sum(len(load_rules(c.rules)) for c in chunks) == 4


def _embeddings():  # type: ignore[no-untyped-def]
    from fakes import FakeEmbeddings

    return FakeEmbeddings()


def test_one_section_once_in_the_question_language_with_the_original_beneath(paired: Settings) -> None:
    run_ingest(paired, _embeddings())
    advisor = Advisor(paired, _embeddings())
    en = advisor.ask("How often does the Beta cluster need patching?")
    origins = [(p.translation_of or p.doc_id, p.original_section or p.section) for p in en.passages]
    assert len(origins) == len(set(origins)), "a section and its translation both in the passages"
    assert all(p.language == "en" for p in en.passages)
    cited = next(c for c in en.citations if c.doc_id == "art-en")
    assert cited.translation_of == "art-ja" and cited.verbatim is False
    assert cited.original is not None and "パッチ適用が毎月必要" in cited.original.quote
    # the quote carries its original's words (the web UI shows them on request, the citation links them)
    assert any("パッチ適用が毎月必要" in q.original for q in en.lead + en.more if q.translation_of == "art-ja")
    ja = advisor.ask("Betaクラスタのパッチ適用の頻度は？")
    assert all(p.language == "ja" for p in ja.passages)
    assert all(c.translation_of is None for c in ja.citations)


def test_ask_json_citation_of_a_translation_carries_its_original(
    paired: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_ingest(paired, _embeddings())
    monkeypatch.setattr("app.cli.settings_or_exit", lambda prog: paired)
    monkeypatch.setattr("app.pipeline.make_embeddings", lambda settings: _embeddings())
    assert ask_main(["How often does the Beta cluster need patching?", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    cited = next(c for c in out["citations"] if c["doc_id"] == "art-en")
    assert cited["translation_of"] == "art-ja" and cited["original"]["section"] == "1. 概要"
    assert cited["link"].startswith("https://example.test/art#:~:text=")


def test_ingest_json_lists_stale_translations(
    paired: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ingest.cli import main as ingest_main

    write_pair(paired.index.corpus_dir, paired.index.translations_folder, source_hash="e" * 64)
    monkeypatch.setattr("ingest.cli.settings_or_exit", lambda prog, overrides=None: paired)
    monkeypatch.setattr("ingest.cli.make_embeddings", lambda settings: _embeddings())
    assert ingest_main(["--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["translations_stale"] == ["art-en"]
    assert "translation art-en is stale" in captured.err


def test_library_lists_each_document_with_its_kind(paired: Settings) -> None:
    (paired.index.corpus_dir / "notes.md").write_text(
        _front(id="notes", title="Blog (notes)", url="https://example.test/b", language="en",
               completeness="partial (paraphrased notes; not verbatim)")
        + "# Blog (notes)\n\nThe post says the Beta cluster restarts in a minute.\n",
        encoding="utf-8",
    )  # fmt: skip
    run_ingest(paired, _embeddings())
    library = {d.doc_id: d for d in Advisor(paired, _embeddings()).library()}
    assert {k: d.kind for k, d in library.items()} == {"art-ja": "full", "art-en": "translation", "notes": "notes"}
    assert library["art-en"].translation_of == "art-ja" and library["art-en"].chunks > 0
