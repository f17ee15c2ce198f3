"""The source panel in Chromium: a citation's title opens the cited section in place, and the main states' screenshots.

On a desktop the panel sits beside the chat; on a phone it is a drawer over the page. It shows the whole
cited section from the local index with the quote highlighted and in view, links out to the original page
(with the text fragment), shows a translation's original beside it, and labels paraphrased notes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext, Locator, Page, expect

from core.settings import Settings
from ingest.indexer import run_ingest
from tests.app.web.browser_kit import (
    DESKTOP,
    EN_QUESTION,
    PHONE,
    SELECTION_QUESTION,
    TIMEOUT_MS,
    article_settings,
    ask,
    box,
    chromium,
    launched,
    open_page,
    reveal,
    shot,
)
from tests.app.web.test_browser import NOTES_DOC

pytestmark = pytest.mark.browser


def open_source(page: Page, bot: Locator, n: int = 1) -> Locator:
    """Click source ``n``'s title; return the panel once it shows that source."""
    bot.locator(".source").nth(n - 1).locator("a.src-title").click()
    panel = page.locator("#source-panel")
    expect(panel.locator(f'.source-view[data-n="{n}"]')).to_be_visible(timeout=TIMEOUT_MS)
    return panel


def _hit_in_view(panel: Locator) -> None:
    hit = panel.locator(".hit").first
    expect(hit).to_be_visible()
    expect(hit).to_be_in_viewport()
    found, frame = box(hit), box(panel)
    assert frame["y"] <= found["y"] <= frame["y"] + frame["height"], (found, frame)


def test_a_source_title_opens_the_cited_section_beside_the_chat(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        bot = ask(page, EN_QUESTION)
        panel = open_source(page, bot)
        expect(panel).to_contain_text("Gateway Operations Guide")
        expect(panel).to_contain_text("Each minor release is supported for fourteen months")  # the whole section
        expect(panel.locator(".hit", has_text="three times a year").first).to_be_visible()  # the quote, marked
        _hit_in_view(panel)
        expect(panel.locator("ol li").first).to_be_visible()  # rendered Markdown, not "1." text
        out = panel.locator("a.sv-out")
        expect(out).to_have_attribute("href", bot.locator(".source a.src-title").first.get_attribute("href") or "")
        assert (out.get_attribute("href") or "").startswith("https://example.test/gateway-en#:~:text=")
        expect(out).to_have_attribute("target", "_blank")
        frame = box(panel)
        assert frame["x"] >= DESKTOP[0] / 3 and frame["x"] + frame["width"] <= DESKTOP[0] + 1, frame  # on the right
        expect(page.locator("#chat")).to_be_visible()  # the conversation is still there
        shot(page, shots, "source-panel-desktop")
        page.click("#source-close")
        expect(panel).to_be_hidden()


def test_on_a_phone_the_source_opens_in_a_drawer(indexed: Settings, phone: BrowserContext, shots: Path) -> None:
    with launched(indexed) as url:
        page = open_page(phone, url)
        bot = ask(page, EN_QUESTION)
        panel = open_source(page, bot)
        frame = box(panel)
        assert frame["width"] >= 0.95 * PHONE[0] and frame["height"] >= 0.8 * PHONE[1], frame
        _hit_in_view(panel)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE[0]
        shot(page, shots, "source-panel-phone")
        page.keyboard.press("Escape")
        expect(panel).to_be_hidden()


def test_a_translation_is_shown_beside_its_original(
    settings: Settings, tmp_path: Path, browser: BrowserContext
) -> None:
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(browser, url)
        bot = ask(page, SELECTION_QUESTION)
        translated = bot.locator(".source", has=page.locator(".badge", has_text="translation")).first
        n = int((translated.get_attribute("id") or "").rsplit("-", 1)[1])
        panel = open_source(page, bot, n)
        columns = panel.locator(".sv-doc")
        expect(columns).to_have_count(2)
        own, original = box(columns.nth(0)), box(columns.nth(1))
        assert abs(own["y"] - original["y"]) < 2 and original["x"] > own["x"] + own["width"] / 2, (own, original)
        expect(columns.nth(1)).to_contain_text("Original")
        expect(columns.nth(1).locator(".hit").first).to_be_visible()  # the original passage is marked too
        assert any("\u3040" <= ch <= "\u30ff" for ch in columns.nth(1).inner_text())  # Japanese original text
        expect(panel).to_contain_text("translation of")


def test_paraphrased_notes_are_labelled_as_notes(indexed: Settings, browser: BrowserContext) -> None:
    (indexed.index.corpus_dir / "vendor-notes.md").write_text(NOTES_DOC, encoding="utf-8")
    run_ingest(indexed, FakeEmbeddings())
    with launched(indexed) as url:
        page = open_page(browser, url)
        bot = ask(page, "How long does a gateway restart take according to the vendor post?")
        notes = bot.locator(".source", has_text="Vendor blog on gateways").first
        n = int((notes.get_attribute("id") or "").rsplit("-", 1)[1])
        panel = open_source(page, bot, n)
        expect(panel.locator(".sv-notes")).to_contain_text("Paraphrased notes, not the source's wording")
        expect(panel).to_contain_text("ninety seconds")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_screenshots_of_the_main_states(settings: Settings, tmp_path: Path, shots: Path, size: tuple[int, int]) -> None:
    """Selection answer, source panel, typed answer, not-stated answer, questionnaire with its "Read as" line
    and library, for a person to look at."""
    # the value line as the rules find it (the fitted selector shows one only when confident)
    art = article_settings(settings, tmp_path).with_(answer_selector=False)
    name = "desktop" if size == DESKTOP else "phone"
    for context in chromium(tmp_path, size):
        with launched(art) as url:
            page = open_page(context, url)
            shot(page, shots, f"{name}-0-first-screen")
            bot = ask(page, SELECTION_QUESTION)
            expect(bot.locator(".verdict-line")).to_have_count(1)
            reveal(page, bot.locator(".verdict-line"))
            shot(page, shots, f"{name}-1-selection-answer", full_page=False)
            panel = open_source(page, bot)
            _hit_in_view(panel)
            page.screenshot(path=str(shots / f"{name}-2-source-panel.png"))
            page.click("#source-close")
            typed = ask(page, "How much memory does the gateway control plane need?")
            expect(typed.locator(".direct-answer strong.value")).to_have_text("512 MB")
            reveal(page, typed.locator(".direct-answer"))
            shot(page, shots, f"{name}-3-typed-answer", full_page=False)
            near = ask(page, "What is the default port of the gateway's admin API?")
            expect(near.locator(".not-stated")).to_be_visible()
            reveal(page, near.locator(".not-stated"))
            shot(page, shots, f"{name}-4-not-stated", full_page=False)
            page.get_by_role("tab", name="Which platform?").click()
            page.locator("#q-deployment").get_by_label("On-prem", exact=True).check()
            page.locator("#q-fleet").get_by_label("Fixed fleet", exact=True).check()
            page.click("#recommend")
            read_as = page.locator("#recommendation .verdict-line .read-as")
            expect(read_as).to_contain_text("Read as: on-prem ✎ · fixed fleet ✎", timeout=60_000)
            read_as.scroll_into_view_if_needed()
            shot(page, shots, f"{name}-5-questionnaire")
            page.get_by_role("tab", name="Library").click()
            expect(page.locator("#library table")).to_be_visible(timeout=TIMEOUT_MS)
            shot(page, shots, f"{name}-6-library")
    assert len(list(shots.glob(f"{name}-*.png"))) == 7
