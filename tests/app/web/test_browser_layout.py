"""The layout defects from the UI review, measured in Chromium at desktop (1366×900) and phone (390×844) size.

The examples are on the first screen; the header has no empty block beside the language toggle; tap
targets are big enough on a phone; the library reads as a table on a desktop and as cards on a phone;
quotes and decision rules render their Markdown tables as tables, each rule's quote inside its own card;
the questionnaire's lines are escaped once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from core.settings import Settings
from tests.app.web.browser_kit import (
    DESKTOP,
    EN_QUESTION,
    PHONE,
    SELECTION_QUESTION,
    TIMEOUT_MS,
    VOTE_LABELS,
    article_settings,
    ask,
    box,
    chromium,
    launched,
    open_page,
    shot,
    text_lines,
)

pytestmark = pytest.mark.browser
SIZES = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(params=list(SIZES))
def sized(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[BrowserContext, tuple[int, int]]]:
    """Chromium at desktop size, then at phone size."""
    size = SIZES[request.param]
    for context in chromium(tmp_path, size):
        yield context, size


def test_examples_are_on_the_first_screen_and_whole(
    indexed: Settings, sized: tuple[BrowserContext, tuple[int, int]]
) -> None:
    context, (width, height) = sized
    with launched(indexed) as url:
        page = open_page(context, url)
        examples = page.get_by_role("button", name=re.compile(r"on-premises GPU cluster|gang scheduling"))
        expect(examples).to_have_count(2)
        for i in range(2):
            example = examples.nth(i)
            expect(example).to_be_in_viewport(ratio=1.0)  # visible without scrolling
            found = box(example)
            assert found["y"] + found["height"] <= height and found["x"] + found["width"] <= width, found
            assert not example.evaluate("e => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1")
        expect(examples.first).to_contain_text("on-premises GPU cluster: Slurm or Kubernetes?")  # not cut off
        page.get_by_label("日本語").check()  # the examples follow the UI language
        expect(page.get_by_role("button", name=re.compile("オンプレミスのGPUクラスタ"))).to_be_in_viewport(ratio=1.0)
        page.get_by_label("EN", exact=True).check()
        examples.first.click()  # an example is asked at once
        expect(page.locator('[data-testid="user"]').first).to_contain_text(SELECTION_QUESTION, timeout=TIMEOUT_MS)


def test_no_empty_block_beside_the_language_toggle(
    indexed: Settings, sized: tuple[BrowserContext, tuple[int, int]]
) -> None:
    context, _ = sized
    with launched(indexed) as url:
        page = open_page(context, url)
        toggle = page.locator("#lang-toggle")
        expect(toggle).to_be_visible()
        outer = box(toggle.locator("xpath=.."))  # the form block Gradio wraps the toggle in
        inner = box(toggle)
        assert outer["width"] <= inner["width"] + 2, (outer, inner)
        for label in ("EN", "日本語"):
            option = box(toggle.locator("label", has_text=label))
            assert option["x"] + option["width"] <= inner["x"] + inner["width"] + 1, (label, option, inner)
            assert text_lines(toggle.locator("label", has_text=label).locator("span").last) == 1


def test_phone_tap_targets_are_big_enough(indexed: Settings, phone: BrowserContext, shots: Path) -> None:
    with launched(indexed) as url:
        page = open_page(phone, url)
        bot = ask(page, EN_QUESTION)
        buttons = [page.locator(f'#chat button[aria-label="{label}"]').first for label in VOTE_LABELS.values()]
        buttons.append(page.locator("#chat .message-buttons button").last)  # copy
        for button in buttons:
            button.scroll_into_view_if_needed()
            found = box(button)
            assert found["width"] >= 44 and found["height"] >= 44, found
        marker = bot.locator("sup.cite a").first
        marker.scroll_into_view_if_needed()
        found = box(marker)
        assert found["width"] >= 24 and found["height"] >= 24, found
        shot(page, shots, "phone-tap-targets")


APACHE_DOC = """---
id: "queue-apache"
title: "Queue Operations Handbook"
url: "https://example.test/queue"
language: "en"
license: "Apache-2.0"
completeness: "full"
---

# Queue Operations Handbook

## Limits

The zebra queue accepts at most forty-two pending jobs per tenant before it rejects new submissions.
"""


def _library(page: Page) -> None:
    page.get_by_role("tab", name="Library").click()
    expect(page.locator("#library")).to_contain_text("Apache-2.0", timeout=TIMEOUT_MS)


def test_library_reads_as_a_table_on_a_desktop_and_as_cards_on_a_phone(
    settings: Settings, tmp_path: Path, sized: tuple[BrowserContext, tuple[int, int]], shots: Path
) -> None:
    context, (width, _) = sized
    (settings.index.corpus_dir / "queue-apache.md").write_text(APACHE_DOC, encoding="utf-8")
    art = article_settings(settings, tmp_path)  # with the article's long licence text beside short ones
    with launched(art) as url:
        page = open_page(context, url)
        _library(page)
        licence = page.locator("#library td", has_text="Apache-2.0").first
        expect(licence).to_be_visible()
        assert text_lines(licence.get_by_text("Apache-2.0", exact=True)) == 1  # "Apache-2.0" is not split
        # The column names a reader sees: the header row, or on a phone each card's field names.
        names = page.locator("#library th:visible, #library td .cell-label:visible")
        expect(names.first).to_be_visible()
        assert names.count() >= 5
        for i in range(names.count()):
            assert text_lines(names.nth(i)) == 1, names.nth(i).inner_text()  # no "L a n g u a g e"
        if width == PHONE[0]:
            card = box(page.locator("#library tbody tr").first)
            assert card["width"] >= 0.8 * (width - 64), card  # a card as wide as the screen allows
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width  # nothing sticks out
        shot(page, shots, f"library-{width}")


def _words_whole(page: Page, scope: str) -> None:
    """No word of a rendered table's cells is split across lines ("Suit / able plat / form")."""
    cells = page.locator(f"{scope} table").first.locator("th, td")
    for i in range(cells.count()):
        cell = cells.nth(i)
        words = len(cell.inner_text().split())
        assert 0 < text_lines(cell) <= max(words, 1), cell.inner_text()


def _same_row(page: Page, first: str, second: str, scope: str) -> None:
    """Two cells of a rendered table side by side: same row, the second to the right of the first."""
    row = page.locator(f"{scope} tr", has_text=first).first
    expect(row).to_be_visible()
    # Both boxes in one go: the chat may still be scrolling.
    a, b = row.evaluate(
        """(tr, texts) => texts.map(t => [...tr.querySelectorAll('td')].find(td => td.textContent.includes(t)))
                               .map(td => td && td.getBoundingClientRect().toJSON())""",
        [first, second],
    )
    assert a and b and abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"], (a, b)


def test_quotes_and_rules_render_tables_and_group_each_rule(
    settings: Settings, tmp_path: Path, sized: tuple[BrowserContext, tuple[int, int]], shots: Path
) -> None:
    context, (width, _) = sized
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(context, url)
        bot = ask(page, SELECTION_QUESTION)
        source = bot.locator(".source", has=page.locator("table")).first
        source.locator("summary").first.click()
        table = source.locator("blockquote table").first
        expect(table.locator("th", has_text="Suitable platform")).to_be_visible()  # a table with its header
        _same_row(page, "dedicated HPC cluster", "Slurm", f"#{source.get_attribute('id')} blockquote")
        _words_whole(page, f"#{source.get_attribute('id')} blockquote")
        shot(page, shots, f"quote-table-{width}")

        page.get_by_role("tab", name="Library").click()
        page.click("#rules-box button, #rules-box .label-wrap")
        rules = page.locator("#rules .rule")
        expect(rules.first).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.locator("#rules .rule table th", has_text="Suitable platform").first).to_be_visible()
        _same_row(page, "Cloud-first", "Kubernetes", "#rules .rule")
        _words_whole(page, "#rules .rule:has(table)")
        assert "\n- " not in page.locator("#rules").inner_text()  # lists are lists, not "- " lines
        for i in range(min(rules.count(), 12)):  # each quote inside its rule's card, cards apart
            card, quote = box(rules.nth(i)), box(rules.nth(i).locator("blockquote").first)
            assert card["y"] <= quote["y"] and quote["y"] + quote["height"] <= card["y"] + card["height"] + 1
            if i:
                previous = box(rules.nth(i - 1))
                assert previous["y"] + previous["height"] < card["y"], (previous, card)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        shot(page, shots, f"rules-{width}")


def test_questionnaire_labels_are_escaped_once(settings: Settings, tmp_path: Path, browser: BrowserContext) -> None:
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(browser, url)
        page.get_by_role("tab", name="Which platform?").click()
        choices = (
            ("hpc_experience", "Experienced with HPC"),
            ("ops_team", "Small ops team"),
            ("deployment", "On-prem"),
        )
        for field, label in choices:
            page.locator(f"#q-{field}").get_by_label(label, exact=True).check()
        page.click("#recommend")
        result = page.locator("#recommendation")
        expect(result).to_contain_text("Operations team:", timeout=60_000)
        expect(result.locator("li", has_text="Operations team:").locator("sup.cite a").first).to_be_visible()
        for escaped in ("&#x27;", "&amp;", "&lt;", "&quot;"):
            expect(result).not_to_contain_text(escaped)
