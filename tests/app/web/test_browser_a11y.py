"""Issue 27, item 7: axe-core's audit in Chromium on the main screens, at desktop and phone size.

The screens: the empty chat, after an answer, the source panel open, the questionnaire with a
recommendation, the library. No serious or critical violation on any of them. axe-core comes from the
axe-playwright-python package (its bundled axe.min.js), never from this repository.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, expect

from core.settings import Settings
from tests.app.web.browser_kit import (
    DESKTOP,
    EN_QUESTION,
    PHONE,
    TIMEOUT_MS,
    article_settings,
    ask,
    axe_violations,
    chromium,
    launched,
    open_page,
    shot,
)

pytestmark = pytest.mark.browser
SIZES = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(params=list(SIZES))
def sized(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BrowserContext]:
    yield from chromium(tmp_path, SIZES[request.param])


def test_the_main_screens_have_no_serious_accessibility_violations(
    indexed: Settings, sized: BrowserContext, tmp_path: Path, shots: Path
) -> None:
    art = article_settings(indexed, tmp_path)
    found: dict[str, list[dict[str, object]]] = {}
    with launched(art) as url:
        page = open_page(sized, url)
        expect(page.locator("#chat .example").first).to_be_visible(timeout=TIMEOUT_MS)
        found["empty"] = axe_violations(page)
        shot(page, shots, "a11y-empty", full_page=False)
        bot = ask(page, EN_QUESTION)
        page.wait_for_timeout(800)
        found["answer"] = axe_violations(page)
        shot(page, shots, "a11y-answer", full_page=False)
        bot.locator(".source").first.locator("a.src-title").click()
        expect(page.locator("#source-panel .source-view")).to_be_visible(timeout=TIMEOUT_MS)
        page.wait_for_timeout(500)
        found["source panel"] = axe_violations(page)
        shot(page, shots, "a11y-source", full_page=False)
        page.keyboard.press("Escape")
        expect(page.locator("#source-panel .source-view")).to_be_hidden(timeout=TIMEOUT_MS)
        page.get_by_role("tab", name="Which platform?").click()
        page.locator("#q-deployment input").first.check()
        page.click("#recommend")
        expect(page.locator("#recommendation .verdict-line")).to_be_visible(timeout=TIMEOUT_MS)
        found["questionnaire"] = axe_violations(page)
        shot(page, shots, "a11y-questionnaire", full_page=False)
        page.get_by_role("tab", name="Library").click()
        expect(page.locator("#library table")).to_be_visible(timeout=TIMEOUT_MS)
        found["library"] = axe_violations(page)
        shot(page, shots, "a11y-library", full_page=False)
    (shots / "axe.json").write_text(json.dumps(found, indent=1, ensure_ascii=False), encoding="utf-8")
    bad = {screen: v for screen, v in found.items() if v}
    assert bad == {}, bad
