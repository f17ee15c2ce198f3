"""The web UI end to end in real headless Chromium (Debian's /usr/bin/chromium) driven by Playwright.

Types a Japanese and an English question, checks answers and citation markers render, opens a
quoted passage, votes on an answer and finds the vote in the feedback database, checks that HTML in a
question stays inert, that the page is usable quickly while models load, and the flows a user relies
on: citation jumps, copy, reload, export, backend health, the questionnaire and the passages slider.
The defects of the UI review have their own files (test_browser_chat, test_browser_layout,
test_browser_sources). Screenshots go to the test's tmp_path, never into the repository.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext, expect

from app.pipeline import Advisor
from app.web.feedback_db import open_store
from core.settings import Settings
from ingest.indexer import run_ingest
from tests.app.web.browser_kit import (
    EN_QUESTION,
    JA_QUESTION,
    TIMEOUT_MS,
    article_settings,
    ask,
    free_port,
    launched,
    open_page,
    set_slider,
    shot,
    vote,
)

pytestmark = pytest.mark.browser


def _feedback(settings: Settings) -> list[dict[str, object]]:
    """The ratings in the feedback database, as the JSON the export gives."""
    store = open_store(settings)
    try:
        return [json.loads(record.model_dump_json()) for record in store.all()]
    finally:
        store.close()


def test_chat_answers_citations_sources_and_feedback(indexed: Settings, browser: BrowserContext, shots: Path) -> None:
    dialogs: list[str] = []
    with launched(indexed) as url:
        page = open_page(browser, url, dialogs)
        expect(page.locator("#index-status")).to_contain_text("documents", timeout=TIMEOUT_MS)
        shot(page, shots, "01-start")

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

        # Open a source's quote: the quoted passage expands.
        details = en.locator(".source details").first
        assert details.get_attribute("open") is None
        details.locator("summary").click()
        expect(details).to_have_attribute("open", "")
        expect(details.locator("blockquote")).to_contain_text("three times a year")
        link = en.locator(".source a.src-title").first
        assert (link.get_attribute("href") or "").startswith("https://example.test/gateway-en#:~:text=")
        assert "noopener" in (link.get_attribute("rel") or "")

        # The passages panel shows scores for the last answer.
        page.click("#passages button, #passages .label-wrap")
        expect(page.locator("#passages")).to_contain_text("Gateway Operations Guide")
        expect(page.locator("#passages")).to_contain_text("Relevance")
        shot(page, shots, "02-answers-and-open-source")

        # A vote with a comment on this answer lands in the feedback database.
        vote(page, 1, "up")
        expect(page.locator("#feedback-status")).to_contain_text("rating is saved", timeout=TIMEOUT_MS)
        page.fill("#feedback-comment textarea", "正確でした — accurate")
        page.click("#save-comment")
        expect(page.locator("#feedback-status")).to_contain_text("Comment saved", timeout=TIMEOUT_MS)
        shot(page, shots, "03-feedback")
    records = _feedback(indexed)
    assert len(records) == 1
    assert records[0]["question"] == EN_QUESTION and records[0]["rating"] == "up"
    assert records[0]["comment"] == "正確でした — accurate"
    assert records[0]["citations"][0]["doc_id"] == "gateway-en"  # type: ignore[index]
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


def test_html_in_a_question_or_document_is_rendered_inert(
    settings: Settings, browser: BrowserContext, shots: Path
) -> None:
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
        expect(bot.locator(".source details blockquote").first).to_be_visible()
        bot.locator(".source a.src-title").first.click()  # the source panel renders the document too
        expect(page.locator("#source-panel")).to_contain_text("walrus scheduler restarts", timeout=TIMEOUT_MS)
        assert page.locator("#chat img[src=x], #source-panel img[src=x]").count() == 0
        assert page.locator("#chat script, #source-panel script").count() == 0
        assert page.locator('a[href^="javascript"]').count() == 0
        shot(page, shots, "04-xss-inert")
    assert dialogs == []


class SlowAdvisor(Advisor):
    """Models that take a few seconds to load, to see the page before they are ready."""

    def warm_up(self) -> None:
        time.sleep(4)
        super().warm_up()


def test_page_is_usable_fast_and_says_when_models_load(indexed: Settings, browser: BrowserContext, shots: Path) -> None:
    started = time.monotonic()
    with launched(indexed, SlowAdvisor(indexed, FakeEmbeddings())) as url:
        page = open_page(browser, url)
        usable_after = time.monotonic() - started
        expect(page.locator("#index-status")).to_contain_text("Loading")
        shot(page, shots, "06-loading")
        deadline = time.monotonic() + 30
        page.locator("#settings .label-wrap").first.click()  # Refresh is under Settings, folded at first
        while True:  # refresh instead of waiting for the timer, until the models are loaded
            page.click("#refresh-status")
            try:
                expect(page.locator("#index-status")).to_contain_text("documents", timeout=1000)
                break
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
    assert usable_after < 15, f"page took {usable_after:.1f}s to become usable"


def test_phone_layout_input_tabs_and_passages_fit(indexed: Settings, phone: BrowserContext, shots: Path) -> None:
    with launched(indexed) as url:
        page = open_page(phone, url)
        box = page.locator("#question textarea").bounding_box()
        assert box is not None and box["y"] + box["height"] <= 844, box  # input above the fold
        helper_tab = page.get_by_role("tab", name="Which platform?")
        expect(helper_tab).to_be_visible()  # not hidden behind an overflow menu
        ask(page, EN_QUESTION)
        page.click("#passages button, #passages .label-wrap")
        expect(page.locator("#passages")).to_contain_text("Gateway Operations Guide")
        page.wait_for_timeout(600)  # the accordion's opening settles
        overflow = page.evaluate(
            """() => [document.documentElement.scrollWidth, document.querySelector('#passages').scrollWidth,
                      document.querySelector('#passages').clientWidth]"""
        )
        assert overflow[0] <= 390 and overflow[1] <= overflow[2] + 1, overflow
        shot(page, shots, "phone-answer")
        helper_tab.click()
        expect(page.locator("#recommend")).to_be_visible()  # the questionnaire is reachable
        shot(page, shots, "phone-questionnaire")


def test_citation_jump_scrolls_to_the_source_and_highlights_it(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        bot = ask(page, EN_QUESTION)
        marker = bot.locator("sup.cite a").first
        target_id = (marker.get_attribute("href") or "#missing")[1:]
        target = bot.locator(f"#{target_id}")
        marker.click()
        expect(target).to_have_class(re.compile(r"\bflash\b"))
        expect(target.locator("details")).to_have_attribute("open", "")
        # Smooth scrolling ends with the source inside the chat's visible area.
        page.wait_for_function(
            """id => { const chat = document.querySelector('#chat').getBoundingClientRect();
                       const src = document.getElementById(id).getBoundingClientRect();
                       return src.top >= chat.top + 40 && src.top <= chat.bottom; }""",
            arg=target_id,
            timeout=TIMEOUT_MS,
        )
        shot(page, shots, "citation-jump")


def test_copy_button_copies_plain_text_with_markers_and_sources(indexed: Settings, browser: BrowserContext) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        ask(page, EN_QUESTION)
        page.locator('#chat button[aria-label="Copy message"]').last.click()
        page.wait_for_function(
            "async () => (await navigator.clipboard.readText()).includes('three times a year')", timeout=TIMEOUT_MS
        )
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert "three times a year" in copied and "[1]" in copied and "Sources:" in copied
        assert "<sup" not in copied and "<div" not in copied and "plain:" not in copied
        assert "https://example.test/gateway-en#:~:text=" in copied


def _wait_for_ratings(settings: Settings, expected: list[str]) -> list[str]:
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    ratings: list[str] = []
    while time.monotonic() < deadline:
        ratings = [str(r["rating"]) for r in _feedback(settings)]
        if ratings == expected:
            break
        time.sleep(0.1)
    return ratings


def test_a_second_vote_replaces_the_first(indexed: Settings, browser: BrowserContext) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        ask(page, EN_QUESTION)
        vote(page, 0, "down")
        expect(page.locator("#feedback-status")).to_contain_text("rating is saved", timeout=TIMEOUT_MS)
        assert _wait_for_ratings(indexed, ["down"]) == ["down"]
        vote(page, 0, "up")
        assert _wait_for_ratings(indexed, ["up"]) == ["up"]


def test_reload_keeps_conversation_and_language_and_export(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        ask(page, EN_QUESTION)
        stored = page.evaluate("() => localStorage.getItem('advisor-lang')")
        page.get_by_label("日本語").check()
        expect(page.locator("#send")).to_have_text("質問する")  # one language at a time
        expect(page.locator("#index-status")).to_contain_text("文書")
        expect(page.get_by_role("tab", name="どちらの基盤？")).to_be_visible()
        page.wait_for_function("old => localStorage.getItem('advisor-lang') !== old", arg=stored)
        page.reload(wait_until="load")
        page.wait_for_selector("#question textarea", timeout=TIMEOUT_MS)
        expect(page.locator('[data-testid="bot"]').first).to_contain_text("three times a year", timeout=TIMEOUT_MS)
        expect(page.locator("#send")).to_have_text("質問する")
        shot(page, shots, "after-reload")
        page.click("#export-chat")
        link = page.locator("#chat-file a").first
        expect(link).to_be_visible(timeout=TIMEOUT_MS)
        with page.expect_download() as download:
            link.click()
        text = Path(download.value.path()).read_text(encoding="utf-8")
        assert f"## {EN_QUESTION}" in text and "three times a year" in text and "<sup" not in text


def test_settings_are_folded_and_a_backend_without_server_is_not_offered(
    indexed: Settings, browser: BrowserContext
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with launched(indexed.with_(openai_base_url=dead)) as url:
        page = open_page(browser, url)
        expect(page.locator("#backend")).to_be_hidden()  # Settings folded on the first screen
        page.locator("#settings .label-wrap").first.click()
        expect(page.locator("#backend").get_by_label("Extractive", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
        page.wait_for_timeout(1500)  # the page's first health check has run
        expect(page.locator("#backend input[type=radio]")).to_have_count(1)  # OpenAI-compatible, Ollama: no server
        expect(page.locator("#settings")).to_contain_text("while its server is running")  # the reason, in words
        expect(page.locator("#settings")).not_to_contain_text("Ollama")


def test_a_configured_backend_without_server_says_what_to_do_in_plain_words(
    indexed: Settings, browser: BrowserContext
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with launched(indexed.with_(openai_base_url=dead, **{"answer.backend": "openai"})) as url:
        page = open_page(browser, url)
        bot = ask(page, EN_QUESTION)
        expect(bot).to_contain_text("The language model is not available right now")
        expect(bot).to_contain_text("three times a year")
        expect(bot).not_to_contain_text(dead)
        expect(bot).not_to_contain_text("LLMUnavailable")


def test_questionnaire_recommends_from_the_articles_rules_and_cites_them(
    settings: Settings, browser: BrowserContext, shots: Path, tmp_path: Path
) -> None:
    """The article's Kubernetes team (cloud, elastic fleet, training and serving) in the browser form."""
    art = article_settings(settings, tmp_path)
    with launched(art) as url:
        page = open_page(browser, url)
        page.get_by_role("tab", name="Which platform?").click()
        for field, label in (("deployment", "Cloud"), ("workload", "Training and serving"), ("fleet", "Elastic fleet")):
            page.locator(f"#q-{field}").get_by_label(label, exact=True).check()
        page.click("#recommend")
        result = page.locator("#recommendation")
        expect(result).to_contain_text("Kubernetes", timeout=60_000)
        expect(result).to_contain_text("Cloud-first")  # the scenario row it matched, quoted
        expect(result.locator("sup.cite a").first).to_be_visible()  # and cited
        shot(page, shots, "questionnaire-kubernetes")


def test_the_passages_slider_sets_how_many_passages_an_answer_uses(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        page.locator("#settings .label-wrap").first.click()  # Settings is folded on the first screen
        set_slider(page, "#k", "1")
        bot = ask(page, EN_QUESTION)
        expect(bot.locator(".source")).to_have_count(1)  # one passage: one source (it was 6 and 4)
        page.click("#passages button, #passages .label-wrap")
        expect(page.locator("#passages")).to_contain_text("Gateway Operations Guide")
        expect(page.locator("#passages")).not_to_contain_text("ジョブスケジューラ比較メモ")
        shot(page, shots, "k-1")


NOTES_DOC = """---
id: "vendor-notes"
title: "Vendor blog on gateways (notes)"
url: "https://example.test/vendor"
language: "en"
completeness: "partial (paraphrased notes from search-index excerpts; not verbatim)"
---

# Vendor blog on gateways (notes)

> **What this file is.** Paraphrased notes, not the post's text. Two stored variants of the gateway post
> exist; cite the URL above for the original and treat anything below as a summary.

## Gateway restarts

The post says a gateway restart takes about ninety seconds.

## Coverage note for citation checking

The gateway guide is cited for restart timing; the available excerpt is cut off at this point.
"""


def test_notes_about_a_stored_file_are_never_quoted(indexed: Settings, browser: BrowserContext, shots: Path) -> None:
    (indexed.index.corpus_dir / "vendor-notes.md").write_text(NOTES_DOC, encoding="utf-8")
    run_ingest(indexed, FakeEmbeddings())
    with launched(indexed) as url:
        page = open_page(browser, url)
        bot = ask(page, "How long does a gateway restart take according to the vendor post?")
        expect(bot).to_contain_text("ninety seconds")
        for note in ("What this file is", "stored variants", "cut off at this point", "citation checking"):
            expect(bot).not_to_contain_text(note)  # neither in the answer nor in its sources' quotes
        shot(page, shots, "no-file-notes")


def test_small_defects_refusal_once_no_empty_bullets_and_a_rendered_passages_panel(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        refusal = ask(page, "What is the capital of Australia?")
        text = refusal.inner_text()
        assert text.count("can't answer") + text.count("cannot answer") == 1, text  # said once
        bot = ask(page, EN_QUESTION)
        empty = bot.locator("li").evaluate_all("items => items.filter(li => !li.textContent.trim()).length")
        assert empty == 0  # no stray empty bullet before a section heading
        page.click("#passages button, #passages .label-wrap")
        panel = page.locator("#passages")
        expect(panel).to_contain_text("Gateway Operations Guide")
        expect(panel).not_to_contain_text("&#96;")  # rendered, not escaped Markdown
        expect(panel.locator("a[href^='https://']").first).to_be_visible()  # sources are links
        shot(page, shots, "small-defects")
