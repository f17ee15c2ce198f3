"""The web UI end to end in real headless Chromium (Debian's /usr/bin/chromium) driven by Playwright.

Types a Japanese and an English question, checks answers and citation markers render, opens a
source, gives feedback and finds it in the feedback file, checks that HTML in a question stays inert,
and that the page is usable quickly while models load. Screenshots go to <project>/test-artifacts/.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Dialog, Page, expect, sync_playwright

from app.pipeline import Advisor
from app.web import build_app, launch_options
from ingest.embeddings import FakeEmbeddings
from ingest.indexer import run_ingest
from ingest.settings import Settings

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
JA_QUESTION = "AlphaはGPUを何%まで使い切りましたか？"
EN_QUESTION = "How often do minor releases ship?"
TIMEOUT_MS = 30_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def launched(settings: Settings, advisor: Advisor | None = None) -> Iterator[str]:
    demo = build_app(settings, advisor)
    options = {**launch_options(settings), "server_port": free_port(), "prevent_thread_lock": True, "quiet": True}
    _, url, _ = demo.launch(**options)
    try:
        yield url
    finally:
        demo.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    assert Path(CHROMIUM).exists(), "Debian chromium is part of the project set-up (make browser)"
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
            locale="ja-JP",
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def indexed(settings: Settings) -> Settings:
    run_ingest(settings, FakeEmbeddings())
    return settings


def open_page(context: BrowserContext, url: str, dialogs: list[str]) -> Page:
    page = context.pages[0] if context.pages else context.new_page()

    def on_dialog(dialog: Dialog) -> None:  # an alert() would mean injected script ran
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(url, wait_until="load")
    page.wait_for_selector("#question textarea", timeout=TIMEOUT_MS)
    return page


def ask(page: Page, question: str) -> Any:
    """Type and send a question; return the locator of the new (final) bot message."""
    before = page.locator('[data-testid="bot"]').count()
    page.fill("#question textarea", question)
    page.click("#send")
    bot = page.locator('[data-testid="bot"]').nth(before)
    # Final answers carry the backend/latency footer; partial and error messages do not.
    expect(bot.locator("sub, p:has-text('⚠️')").first).to_be_visible(timeout=TIMEOUT_MS)
    return bot


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_chat_answers_citations_sources_and_feedback(indexed: Settings, browser: BrowserContext) -> None:
    dialogs: list[str] = []
    with launched(indexed) as url:
        page = open_page(browser, url, dialogs)
        expect(page.locator("#index-status")).to_contain_text("documents", timeout=TIMEOUT_MS)
        shot(page, "01-start")

        ja = ask(page, JA_QUESTION)
        expect(ja).to_contain_text("92%")
        expect(ja.locator("sup.cite a").first).to_have_text("[1]")
        expect(ja.locator(".source").first).to_contain_text("ジョブスケジューラ比較メモ")

        en = ask(page, EN_QUESTION)
        expect(en).to_contain_text("three times a year")
        marker = en.locator("sup.cite a").first
        expect(marker).to_be_visible()
        href = marker.get_attribute("href") or ""
        assert href.startswith("#src-") and en.locator(href).count() == 1  # marker points at its source

        # Open a source: the quoted passage expands.
        details = en.locator(".source details").first
        assert details.get_attribute("open") is None
        details.locator("summary").click()
        expect(details).to_have_attribute("open", "")
        expect(details.locator("blockquote")).to_contain_text("three times a year")
        link = en.locator(".source a[target=_blank]").first
        assert link.get_attribute("href") == "https://example.test/gateway-en"
        assert "noopener" in (link.get_attribute("rel") or "")

        # The passages panel shows scores for the last answer.
        page.click("#passages button, #passages .label-wrap")
        expect(page.locator("#passages table")).to_contain_text("Gateway Operations Guide")
        shot(page, "02-answers-and-open-source")

        # Feedback with a comment lands in the JSONL file.
        page.fill("#feedback-comment textarea", "正確でした — accurate")
        page.click("#thumbs-up")
        expect(page.locator("#feedback-status")).to_contain_text("saved", timeout=TIMEOUT_MS)
        shot(page, "03-feedback")
    records = [json.loads(line) for line in indexed.web.feedback_path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 1
    assert records[0]["question"] == EN_QUESTION and records[0]["rating"] == "up"
    assert records[0]["comment"] == "正確でした — accurate"
    assert records[0]["citations"][0]["doc_id"] == "gateway-en"
    assert dialogs == []


HOSTILE_DOC = """---
id: "hostile-en"
title: "Walrus <img src=x onerror=alert(3)> Notes"
url: "https://example.test/hostile-en"
language: "en"
license: "CC0-1.0"
completeness: "full"
---

# Walrus Notes

## Restarts

The walrus scheduler restarts every night <img src=x onerror=alert(5)> at three o'clock <script>alert(6)</script>.
"""


def test_html_in_a_question_or_document_is_rendered_inert(settings: Settings, browser: BrowserContext) -> None:
    (settings.index.corpus_dir / "hostile-en.md").write_text(HOSTILE_DOC, encoding="utf-8")
    run_ingest(settings, FakeEmbeddings())
    dialogs: list[str] = []
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)> When does the walrus scheduler restart?"
    with launched(settings) as url:
        page = open_page(browser, url, dialogs)
        bot = ask(page, payload)
        user = page.locator('[data-testid="user"]').last
        expect(user).to_contain_text("<img src=x onerror=alert(2)>")  # shown as text
        expect(bot).to_contain_text("walrus scheduler restarts every night")  # the document was quoted...
        expect(bot).to_contain_text("<img src=x onerror=alert(5)>")  # ...with its HTML as text
        bot.locator(".source details summary").first.click()
        assert page.locator("#chat img[src=x]").count() == 0
        assert page.locator("#chat script").count() == 0
        assert page.locator('#chat a[href^="javascript"]').count() == 0
        page.wait_for_timeout(500)
        shot(page, "04-xss-inert")
    assert dialogs == []


def test_platform_helper_tab(indexed: Settings, browser: BrowserContext) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url, [])
        page.get_by_role("tab", name="Which platform?", exact=False).click()
        page.get_by_label("Cloud · クラウド").check()
        page.get_by_label("Elastic · 伸縮").check()
        page.click("#recommend")
        result = page.locator("#recommendation")
        expect(result).to_contain_text("Weighted verdicts", timeout=TIMEOUT_MS)
        expect(result).to_contain_text("Cloud GPUs")
        expect(result).to_contain_text("Elastic fleet")
        shot(page, "05-platform-helper")


class SlowAdvisor(Advisor):
    """Models that take a few seconds to load, to see the page before they are ready."""

    def warm_up(self) -> None:
        time.sleep(4)
        super().warm_up()


def test_page_is_usable_fast_and_says_when_models_load(indexed: Settings, browser: BrowserContext) -> None:
    started = time.monotonic()
    with launched(indexed, SlowAdvisor(indexed, FakeEmbeddings())) as url:
        page = open_page(browser, url, [])
        usable_after = time.monotonic() - started
        expect(page.locator("#index-status")).to_contain_text("Loading")
        shot(page, "06-loading")
        page.click("#refresh-status")  # no need to wait for the timer
        deadline = time.monotonic() + 20
        while "documents" not in page.locator("#index-status").inner_text() and time.monotonic() < deadline:
            page.wait_for_timeout(500)
            page.click("#refresh-status")
        expect(page.locator("#index-status")).to_contain_text("documents")
    assert usable_after < 15, f"page took {usable_after:.1f}s to become usable"
