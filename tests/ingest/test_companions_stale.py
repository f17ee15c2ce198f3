"""A companion that fell behind its original never blocks ingest: sections still matching stay aligned.

The original (Japanese) gains, loses or renames a section after its English companion was written. The
companion is then stale: the sections that still match are aligned (by heading number, then by
position), the others are left out of the index and reported, and every other document is ingested.
The documents are written here, so each expectation can be checked by reading this file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from fakes import FakeEmbeddings

from core.settings import Settings
from ingest.cli import main as ingest_main
from ingest.companions import align, link
from ingest.documents import parse_document
from ingest.indexer import run_ingest
from ingest.store import Store, StoredChunk

ORIGINAL = """
# 基盤の運用

## 1. 概要

- Alphaクラスタは軽量です。
- Betaクラスタは多機能です。

## 2. 運用

### 構築

Alphaの構築は半日で終わります。

### 保守

Betaの保守には専任が1名必要です。

## 3. 推奨

| 条件 | 基盤 |
|---|---|
| オンプレ | Slurm |
"""

TRANSLATION = """
# Operating the platforms

## 1. Overview

- The Alpha cluster is lightweight.
- The Beta cluster has many features.

## 2. Operations

### Building

Building Alpha takes half a day.

### Maintenance

Maintaining Beta needs one dedicated engineer.

## 3. Recommendations

| Condition | Platform |
|---|---|
| On-prem | Slurm |
"""

ADDED = "\n## 4. 追記\n\n- Gammaクラスタは2027年にquasarfold方式へ移行します。\n"
REMOVED_SECTION = "## 1. 概要\n\n- Alphaクラスタは軽量です。\n- Betaクラスタは多機能です。\n\n"


def _front(**fields: str) -> str:
    return "---\n" + "".join(f'{k}: "{v}"\n' for k, v in fields.items()) + "---\n"


def write_pair(corpus: Path, translations: Path, original: str, source: str = ORIGINAL) -> None:
    """The original with ``original`` as its body; the companion translated from ``source``."""
    corpus.mkdir(parents=True, exist_ok=True)
    translations.mkdir(parents=True, exist_ok=True)
    (corpus / "ops-ja.md").write_text(
        _front(id="ops-ja", title="基盤の運用", url="https://example.test/ops", language="ja") + original,
        encoding="utf-8",
    )
    (translations / "ops-en.md").write_text(
        _front(
            id="ops-en",
            title="Operating the platforms (English translation)",
            url="https://example.test/ops",
            language="en",
            translation_of="ops-ja",
            source_sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
            completeness="translation (not the publisher's wording)",
        )
        + TRANSLATION,
        encoding="utf-8",
    )


@pytest.fixture
def pair(settings: Settings, tmp_path: Path) -> Settings:
    corpus, translations = tmp_path / "pair" / "docs", tmp_path / "pair" / "translations"
    write_pair(corpus, translations, ORIGINAL)
    (corpus / "other.md").write_text(
        _front(id="other", title="Other", language="en") + "# Other\n\nThe zebracorn queue drains nightly.\n",
        encoding="utf-8",
    )
    return settings.with_(corpus_dir=corpus, translations_dir=translations)


def changed_original(settings: Settings, body: str) -> None:
    write_pair(settings.index.corpus_dir, settings.index.translations_folder, body)


def linked(original: str) -> tuple[dict[str, str], list[str], list[str]]:
    """(the companion's section map, the stale ids, the companion's unaligned sections) after linking."""
    o = parse_document(("---\nid: ops-ja\n---\n" + original).encode(), "ops-ja.md")
    sha = hashlib.sha256(ORIGINAL.encode("utf-8")).hexdigest()
    t = parse_document(
        f'---\nid: ops-en\ntranslation_of: ops-ja\nsource_sha256: "{sha}"\n---\n{TRANSLATION}'.encode(), "t/ops-en.md"
    )
    result = link([o, t])
    assert not result.problems, result.problems
    return result.documents[1].section_map, result.stale, result.unaligned.get("ops-en", [])


def companion_chunks(settings: Settings) -> list[StoredChunk]:
    gen = Store.open(settings).current()
    assert gen is not None
    return [c for c in gen.all_chunks()[0] if c.doc_id == "ops-en"]


# --- alignment (pure) -------------------------------------------------------------------------------


def test_an_unchanged_original_maps_every_section_one_to_one() -> None:
    sections, stale, unaligned = linked(ORIGINAL)
    assert (stale, unaligned) == ([], [])
    assert sections["2. Operations > Maintenance"] == "2. 運用 > 保守"


def test_a_section_added_to_the_original_leaves_the_companion_aligned() -> None:
    sections, stale, unaligned = linked(ORIGINAL + ADDED)
    assert (stale, unaligned) == (["ops-en"], [])
    assert sections == {
        "": "",
        "1. Overview": "1. 概要",
        "2. Operations": "2. 運用",
        "2. Operations > Building": "2. 運用 > 構築",
        "2. Operations > Maintenance": "2. 運用 > 保守",
        "3. Recommendations": "3. 推奨",
    }


def test_a_section_removed_from_the_original_unaligns_only_its_translation() -> None:
    assert REMOVED_SECTION in ORIGINAL
    sections, stale, unaligned = linked(ORIGINAL.replace(REMOVED_SECTION, ""))
    assert (stale, unaligned) == (["ops-en"], ["1. Overview"])
    # Sections 2 and 3 keep their numbers (anchors); the sub-sections between them pair by position.
    assert sections["2. Operations > Maintenance"] == "2. 運用 > 保守"
    assert sections["3. Recommendations"] == "3. 推奨"
    assert "1. Overview" not in sections


def test_renamed_sections_stay_aligned_under_their_new_names() -> None:
    renamed = ORIGINAL.replace("## 3. 推奨", "## 3. 推奨構成").replace("### 構築", "### 初期構築")
    sections, stale, unaligned = linked(renamed)
    assert (stale, unaligned) == (["ops-en"], [])
    assert sections["3. Recommendations"] == "3. 推奨構成"  # anchored by its number
    assert sections["2. Operations > Building"] == "2. 運用 > 初期構築"  # by position between anchors


def test_a_changed_table_unaligns_its_section_only() -> None:
    grown = ORIGINAL.replace("| オンプレ | Slurm |", "| オンプレ | Slurm |\n| クラウド | Kubernetes |")
    sections, _, unaligned = linked(grown)
    assert unaligned == ["3. Recommendations"] and sections["1. Overview"] == "1. 概要"


def test_an_ambiguous_position_is_left_unaligned() -> None:
    # Unnumbered headings of one shape, one more in the original: which one was added cannot be told.
    mapping, unaligned = align("## A\n\ntext\n\n## B\n\ntext", "## あ\n\ntext\n\n## い\n\ntext\n\n## う\n\ntext")
    assert mapping == {"": ""} and unaligned == ["A", "B"]
    # A different shape disambiguates: the list is the new section.
    mapping, unaligned = align("## A\n\ntext\n\n## B\n\ntext", "## あ\n\ntext\n\n## 新\n\n- x\n\n## い\n\ntext")
    assert mapping == {"": "", "A": "あ", "B": "い"} and unaligned == []


def test_a_structure_mismatch_is_still_an_error_for_a_current_companion() -> None:
    o = parse_document(("---\nid: ops-ja\n---\n" + ORIGINAL + ADDED).encode(), "ops-ja.md")
    t = parse_document(
        f'---\nid: ops-en\ntranslation_of: ops-ja\nsource_sha256: "{o.body_sha256}"\n---\n{TRANSLATION}'.encode(),
        "t/ops-en.md",
    )
    result = link([o, t])
    assert [d.id for d in result.documents] == ["ops-ja"]
    assert "section structure does not match 'ops-ja'" in result.problems[0].reason


# --- ingest ----------------------------------------------------------------------------------------


def test_ingest_succeeds_when_the_original_gains_a_section(pair: Settings) -> None:
    run_ingest(pair, FakeEmbeddings())
    changed_original(pair, ORIGINAL + ADDED)
    report = run_ingest(pair, FakeEmbeddings())
    assert report.translations_stale == ["ops-en"] and report.translations_unaligned == {}
    # The original changed; the companion's text and section map did not, so its chunks are kept as they are.
    assert report.docs_updated == 1 and report.docs_unchanged == 2
    gen = Store.open(pair).current()
    assert gen is not None
    added = [c for c in gen.all_chunks()[0] if c.section == "4. 追記"]
    assert [(c.doc_id, c.language) for c in added] == [("ops-ja", "ja")]
    assert {c.original_section for c in companion_chunks(pair)} >= {"1. 概要", "2. 運用 > 保守", "3. 推奨"}


def test_the_new_section_answers_in_the_original_language(pair: Settings) -> None:
    from app.pipeline import Advisor

    changed_original(pair, ORIGINAL + ADDED)
    run_ingest(pair, FakeEmbeddings())
    answer = Advisor(pair, FakeEmbeddings()).ask("When does the Gamma cluster move to quasarfold?")
    assert not answer.refused, answer.answer
    new = [q for q in answer.lead if q.doc_id == "ops-ja" and q.section == "4. 追記"]
    assert new and "quasarfold" in " ".join([new[0].text, *new[0].followers]), answer.answer


def test_an_unaligned_section_is_not_indexed_and_is_reported(
    pair: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    changed_original(pair, ORIGINAL.replace(REMOVED_SECTION, ""))
    report = run_ingest(pair, FakeEmbeddings())
    expected = {"ops-en": ["1. Overview"]}
    assert report.translations_stale == ["ops-en"] and report.translations_unaligned == expected
    assert "ops-en: 1 section(s) match nothing in the changed original" in report.summary()
    sections = {c.section for c in companion_chunks(pair)}
    assert "1. Overview" not in sections and "3. Recommendations" in sections
    assert not any("lightweight" in c.text for c in companion_chunks(pair))
    info = Store.open(pair).info()
    assert info is not None and info.translations_unaligned == expected and info.translations_stale == ["ops-en"]
    # `ingest --json` (a no-op now) reports the same, and says it in words on stderr.
    monkeypatch.setattr("ingest.cli.settings_or_exit", lambda prog, overrides=None: pair)
    monkeypatch.setattr("ingest.cli.make_embeddings", lambda settings: FakeEmbeddings())
    assert ingest_main(["--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["translations_stale"] == ["ops-en"] and out["translations_unaligned"] == expected
    assert "translation ops-en: left out until re-translated" in captured.err
    assert ingest_main([]) == 0
    assert "match nothing in the changed original" in capsys.readouterr().out


def test_rewriting_the_companion_clears_the_report(pair: Settings) -> None:
    body = ORIGINAL.replace(REMOVED_SECTION, "")
    changed_original(pair, body)
    run_ingest(pair, FakeEmbeddings())
    fixed = TRANSLATION.replace(
        "## 1. Overview\n\n- The Alpha cluster is lightweight.\n- The Beta cluster has many features.\n\n", ""
    )
    assert fixed != TRANSLATION
    path = pair.index.translations_folder / "ops-en.md"
    text = path.read_text(encoding="utf-8").replace(TRANSLATION, fixed)
    old_sha = hashlib.sha256(ORIGINAL.encode()).hexdigest()
    path.write_text(text.replace(old_sha, hashlib.sha256(body.encode()).hexdigest()), encoding="utf-8")
    report = run_ingest(pair, FakeEmbeddings())
    assert (report.translations_stale, report.translations_unaligned) == ([], {})
    info = Store.open(pair).info()
    assert info is not None and (info.translations_stale, info.translations_unaligned) == ([], {})
