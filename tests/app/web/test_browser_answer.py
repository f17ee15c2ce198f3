"""The answer's shape in Chromium, at desktop (1366×900) and phone (390×844) size, as a user meets it.

A selection answer shows one verdict line (one badge, "Read as: …") with its reasons, then the quotes,
then what would change it, collapsed, then the sources — and no internal value anywhere on the page or in
the export; a typed answer opens with the value in bold and its [n]; a near-miss shows the "not stated"
callout, with the related passages under it and no answer; a selection question stating no fact asks for
the facts, in the question's language; the status line names a stale translation and its unindexed
sections. The questionnaire is in test_browser_questionnaire.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext, Locator, Page, expect

from core.settings import Settings
from ingest.indexer import run_ingest
from tests.app.web.browser_kit import (
    DESKTOP,
    PHONE,
    SELECTION_QUESTION,
    TIMEOUT_MS,
    article_settings,
    ask,
    box,
    chromium,
    launched,
    open_page,
    shot,
)

pytestmark = pytest.mark.browser
SIZES = {"desktop": DESKTOP, "phone": PHONE}
RAW_VALUES = ("training_and_serving", "on_prem", "training_speed_cost", "→ kubernetes", "→ slurm", "→ hybrid")
TYPED_QUESTION = "How much memory does the gateway control plane need?"
NEAR_MISS = "What is the default port of the gateway's admin API?"
NEAR_MISS_JA = "Alphaの最新バージョンはいつリリースされましたか？"


@pytest.fixture(params=list(SIZES))
def sized(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[BrowserContext, tuple[int, int]]]:
    """Chromium at desktop size, then at phone size."""
    size = SIZES[request.param]
    for context in chromium(tmp_path, size):
        yield context, size


def _top(locator: Locator) -> float:
    return box(locator)["y"]


def _no_raw_values(page: Page) -> None:
    text = page.locator("body").inner_text()
    for raw in RAW_VALUES:
        assert raw not in text, raw


def _fits(page: Page, width: int) -> None:
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


def test_a_selection_answer_has_one_verdict_line_and_human_labels_only(
    settings: Settings, tmp_path: Path, sized: tuple[BrowserContext, tuple[int, int]], shots: Path
) -> None:
    context, (width, _) = sized
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(context, url)
        bot = ask(page, SELECTION_QUESTION)
        expect(bot.locator(".verdict-line")).to_have_count(1)
        expect(bot.locator(".verdict")).to_have_count(1)  # one badge
        line = bot.locator(".verdict-line")
        expect(line).to_contain_text("Verdict:")
        expect(line.locator(".verdict")).to_have_text("Slurm")
        expect(line.locator(".read-as")).to_contain_text("Read as:")
        expect(line.locator(".read-as .facet", has_text="on-prem")).to_be_visible()
        assert bot.inner_text().count("Verdict") == 1  # not a badge, a "Verdict: …" line and a heading
        vote = bot.locator("ul.votes li").first
        expect(vote).to_contain_text("on-prem → Slurm:")
        expect(vote.locator("sup.cite a")).to_be_visible()  # each reason cites its rule
        why = bot.locator("details.why")
        expect(why).to_have_count(1)
        expect(why.locator("ul.changes li").first).to_be_hidden()  # collapsed
        # Read top to bottom: the verdict, the quotes, why, the sources.
        tops = [_top(x) for x in (line, bot.locator(".quotes"), why, bot.locator(".source").first)]
        assert tops == sorted(tops), tops
        why.locator("summary").click()
        expect(why.locator("ul.changes li").first).to_be_visible()
        expect(why.locator("ul.changes")).to_contain_text("→")
        expect(why.locator("table.rules-used td", has_text="Slurm").first).to_be_visible()
        _no_raw_values(page)
        _fits(page, width)
        shot(page, shots, f"selection-{width}")
        page.click("#export-chat")
        link = page.locator("#chat-file a").first
        expect(link).to_be_visible(timeout=TIMEOUT_MS)
        with page.expect_download() as download:
            link.click()
        text = Path(download.value.path()).read_text(encoding="utf-8")
    assert text.count("Verdict") == 1 and "**Verdict: Slurm** — Read as: on-prem" in text
    assert "What would change it:" in text and "<" not in text.replace("<https", "")
    for raw in RAW_VALUES:
        assert raw not in text, raw


def test_a_typed_answer_opens_with_the_value_and_its_source(
    indexed: Settings, sized: tuple[BrowserContext, tuple[int, int]], shots: Path
) -> None:
    context, (width, _) = sized
    # the value line as the rules find it (the fitted selector shows one only when confident): this is about drawing it
    with launched(indexed.with_(answer_selector=False)) as url:
        page = open_page(context, url)
        bot = ask(page, TYPED_QUESTION)
        direct = bot.locator(".direct-answer")
        expect(direct).to_have_count(1)
        expect(direct.locator("strong.value")).to_have_text("512 MB")
        marker = direct.locator("sup.cite a")
        expect(marker).to_have_text("[1]")
        assert _top(direct) < _top(bot.locator(".quotes"))  # the value first, its quote after
        expect(bot.locator(".quotes")).to_contain_text("From the knowledge base")
        assert bot.inner_text().count("Answer:") == 1
        if width == PHONE[0]:
            found = box(marker)
            assert found["width"] >= 24 and found["height"] >= 24, found
        _fits(page, width)
        shot(page, shots, f"typed-{width}")


def test_a_near_miss_shows_the_not_stated_callout_and_no_answer(
    indexed: Settings, sized: tuple[BrowserContext, tuple[int, int]], shots: Path
) -> None:
    context, (width, _) = sized
    with launched(indexed) as url:
        page = open_page(context, url)
        bot = ask(page, NEAR_MISS)
        callout = bot.locator(".not-stated")
        expect(callout).to_be_visible()
        expect(callout).to_contain_text("Not stated in the documents")
        expect(callout).to_contain_text("You asked: “What is the default port of the gateway's admin API?”")
        expect(callout).to_contain_text("About: Gateway")
        expect(bot.locator(".verdict-line, .verdict, .direct-answer, .quotes")).to_have_count(0)  # no answer
        related = bot.locator(".related")
        expect(related.locator(".related-head")).to_have_text("Related, but not an answer")
        expect(related.locator("li").first).to_be_visible()
        # Visually subordinate: below the callout, in smaller and paler type.
        assert _top(callout) < _top(related)
        size = "el => parseFloat(getComputedStyle(el).fontSize)"
        assert related.locator("li").first.evaluate(size) < callout.locator(".ns-title").evaluate(size)
        colour = "el => getComputedStyle(el).color"
        assert related.evaluate(colour) != callout.evaluate(colour)
        assert bot.inner_text().count("Not stated in the documents") == 1
        _fits(page, width)
        shot(page, shots, f"not-stated-{width}")
        ja = ask(page, NEAR_MISS_JA)  # the UI stays English: the framing follows the question
        expect(ja.locator(".not-stated")).to_contain_text("資料には記載がありません")
        expect(ja.locator(".not-stated")).to_contain_text("質問: 「Alphaの最新バージョンはいつリリースされましたか？」")
        expect(ja.locator(".related-head")).to_have_text("関連する記述（回答ではありません）")
        expect(ja).not_to_contain_text("Not stated")


def test_a_selection_question_without_a_deciding_fact_gets_depends_in_its_language(
    settings: Settings, tmp_path: Path, browser: BrowserContext, shots: Path
) -> None:
    # every platform question gets a decision (issue 26): with no deciding fact stated, "it depends", naming
    # the facet that decides it and what each of its values gives, never a bare request for the situation
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(browser, url)
        en = ask(page, "Should we use Slurm or Kubernetes?")
        expect(en.locator(".needs")).to_have_count(0)
        expect(en).to_contain_text("It depends — Depends on: what matters most")
        expect(en).to_contain_text("mattered most → Slurm")
        expect(en).to_contain_text("mattered most → Kubernetes")
        ja = ask(page, "SlurmとKubernetesのどちらを選ぶべきですか？")
        expect(ja).to_contain_text("判定: 条件次第 — 決め手: 最も重視すること")
        expect(ja).not_to_contain_text("It depends")
        shot(page, shots, "needs")


ORIGINAL_BODY = """
# 凧揚げクラスタ運用

## 1. 概要

- 凧揚げクラスタは週に一度だけ再起動します。

## 2. 保守

保守担当は二名で足ります。

## 3. 推奨

| 条件 | 基盤 |
|---|---|
| 週末のみ | 凧揚げ |
"""

COMPANION_BODY = """
# Running the kite cluster

## 1. Overview

- The kite cluster restarts only once a week.

## 2. Maintenance

Two maintainers are enough.

## 3. Recommendation

| Condition | Platform |
|---|---|
| Weekends only | Kite |
"""


def _front(**fields: str) -> str:
    return "---\n" + "".join(f'{k}: "{v}"\n' for k, v in fields.items()) + "---\n"


def _kite_pair(settings: Settings, tmp_path: Path, original: str) -> Settings:
    docs, translations = tmp_path / "kite" / "docs", tmp_path / "kite" / "translations"
    docs.mkdir(parents=True, exist_ok=True)
    translations.mkdir(parents=True, exist_ok=True)
    front = _front(id="kite-ja", title="凧揚げクラスタ運用", url="https://example.test/kite", language="ja")
    (docs / "kite-ja.md").write_text(front + original, encoding="utf-8")
    companion = _front(
        id="kite-en", title="Running the kite cluster (English translation)", url="https://example.test/kite",
        language="en", translation_of="kite-ja", completeness="translation (not the publisher's wording)",
        source_sha256=hashlib.sha256(ORIGINAL_BODY.encode("utf-8")).hexdigest(),
    )  # fmt: skip
    (translations / "kite-en.md").write_text(companion + COMPANION_BODY, encoding="utf-8")
    return settings.with_(corpus_dir=docs, translations_dir=translations)


def test_the_status_line_names_a_stale_translation_and_its_unindexed_sections(
    settings: Settings, tmp_path: Path, browser: BrowserContext, shots: Path
) -> None:
    kite = _kite_pair(settings, tmp_path, ORIGINAL_BODY)
    run_ingest(kite, FakeEmbeddings())
    # The original loses its overview: the companion is stale, and its overview matches nothing now.
    _kite_pair(
        settings, tmp_path, ORIGINAL_BODY.replace("## 1. 概要\n\n- 凧揚げクラスタは週に一度だけ再起動します。\n\n", "")
    )
    run_ingest(kite, FakeEmbeddings())
    with launched(kite) as url:
        page = open_page(browser, url)
        status = page.locator("#index-status")
        expect(status).to_contain_text(
            "1 translation is stale: kite-en; 1 of its sections is not indexed until it is re-translated (1. Overview)",
            timeout=TIMEOUT_MS,
        )
        page.get_by_label("日本語").check()
        expect(status).to_contain_text(
            "古い翻訳が 1 件あります: kite-en。再翻訳するまで 1 セクションは索引に含まれません"
        )
        shot(page, shots, "stale-status")
