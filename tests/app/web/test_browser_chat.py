"""The chat's defects from the UI review, each checked in Chromium the way a user meets it.

🗑 starts a new conversation (no follow-up context, nothing back on reload); Stop shows only while an
answer streams and really stops it; an over-long question is refused with the text kept, a live count
and no 👍/👎; the comment box opens by the rated answer, with unique ids and no "answer 3" wording;
screen readers get plain text; the framing follows the question's language; a relative link in a quote
leads to the source site.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from fake_openai_server import FakeLLMServer
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext, Page, expect

from core.settings import Settings
from ingest.indexer import run_ingest
from tests.app.web.browser_kit import (
    EN_QUESTION,
    JA_QUESTION,
    TIMEOUT_MS,
    VOTE_LABELS,
    ask,
    box,
    duplicate_ids,
    launched,
    open_page,
    shot,
    use_backend,
    vote,
)

pytestmark = pytest.mark.browser
CHUNKS = ["Alpha used GPUs ", "up to 92% ", "of capacity [1]."]


def _use_llm(page: Page) -> None:
    use_backend(page, "OpenAI-compatible")


def test_trash_button_starts_a_new_conversation(indexed: Settings, browser: BrowserContext, shots: Path) -> None:
    with (
        FakeLLMServer(chunks=CHUNKS) as server,
        launched(indexed.with_(openai_base_url=server.openai_url)) as url,
    ):
        page = open_page(browser, url)
        _use_llm(page)
        ask(page, JA_QUESTION)
        page.locator("#chat .top-panel button").click()  # the chat's own 🗑
        expect(page.locator('[data-testid="bot"]')).to_have_count(0, timeout=TIMEOUT_MS)
        ask(page, EN_QUESTION)
        assert len(server.requests) == 2
        prompt = server.requests[-1].content("user")
        assert "earlier turns" not in prompt and JA_QUESTION not in prompt  # not a follow-up of the cleared chat
        page.locator("#chat .top-panel button").click()
        expect(page.locator('[data-testid="bot"]')).to_have_count(0, timeout=TIMEOUT_MS)
        page.reload(wait_until="load")
        page.wait_for_selector("#question textarea", timeout=TIMEOUT_MS)
        expect(page.locator("#chat .example").first).to_be_visible(timeout=TIMEOUT_MS)  # the empty chat
        expect(page.locator('[data-testid="user"]')).to_have_count(0)  # a reload does not bring it back
        shot(page, shots, "after-trash-and-reload")


def test_stop_shows_while_an_answer_streams_and_stops_it(indexed: Settings, browser: BrowserContext) -> None:
    gate = threading.Event()
    with (
        FakeLLMServer(chunks=CHUNKS, gate=gate) as server,
        launched(indexed.with_(openai_base_url=server.openai_url)) as url,
    ):
        page = open_page(browser, url)
        expect(page.locator("#send")).to_be_visible()
        expect(page.locator("#stop")).to_be_hidden()  # nothing runs: no Stop to press
        _use_llm(page)
        page.fill("#question textarea", JA_QUESTION)
        page.click("#send")
        bot = page.locator('[data-testid="bot"]').first
        expect(bot).to_contain_text("Alpha used GPUs", timeout=TIMEOUT_MS)  # streamed, then paused
        expect(page.locator("#stop")).to_be_enabled()
        expect(page.locator("#send")).to_be_hidden()
        page.click("#stop")
        expect(page.locator("#stop")).to_be_hidden(timeout=TIMEOUT_MS)
        expect(page.locator("#send")).to_be_enabled()
        gate.set()  # the server sends the rest of the stream now
        use_backend(page, "Extractive")
        ask(page, EN_QUESTION)  # a later answer arrives, so anything the stopped one still sent has too
        expect(bot).to_contain_text("Alpha used GPUs")
        expect(bot).not_to_contain_text("92%")  # the rest never reached the page: the answer was stopped
        expect(page.locator("#stop")).to_be_hidden()  # an answer that ended by itself leaves no Stop behind
        expect(page.locator("#send")).to_be_visible()


def test_an_overlong_question_is_refused_with_its_text_kept_and_no_rating(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    limit = indexed.answer.max_question_chars
    question = "Which scheduler packs GPUs best? " * (3000 // 33 + 1)
    question = question[:3000]
    with launched(indexed) as url:
        page = open_page(browser, url)
        count = page.locator("#char-count .char-count")
        expect(count).to_have_text(f"0 / {limit:,}")
        page.fill("#question textarea", question)
        expect(count).to_have_text(f"3,000 / {limit:,}")  # a live count, over the limit
        expect(count).to_have_class(re.compile(r"\bover\b"))
        page.click("#send")
        bot = page.locator('[data-testid="bot"]').first
        expect(bot).to_contain_text(f"{limit:,}", timeout=TIMEOUT_MS)
        expect(bot).to_contain_text("too long")
        assert page.input_value("#question textarea") == question  # the text is kept to be shortened
        for rating in VOTE_LABELS.values():  # an error is not an answer: nothing to rate
            expect(page.locator(f'#chat button[aria-label="{rating}"]:visible')).to_have_count(0)
        shot(page, shots, "overlong-question")


def test_the_comment_box_opens_by_the_rated_answer_with_unique_ids(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        ask(page, EN_QUESTION)
        ask(page, JA_QUESTION)
        vote(page, 0, "down")  # the first answer, not the latest one
        buttons = page.locator("#chat .message-buttons-left").nth(0)  # its buttons (a pressed one is re-drawn)
        feedback = page.locator("#feedback-box")
        expect(feedback).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.locator("#feedback-status")).to_contain_text("rating is saved")
        expect(page.locator("#feedback-status")).not_to_contain_text(re.compile(r"answer \d"))
        rated, opened = box(buttons), box(feedback)
        gap = min(abs(opened["y"] - (rated["y"] + rated["height"])), abs(rated["y"] - (opened["y"] + opened["height"])))
        assert gap <= 24, (rated, opened)  # right below (or above) the rated answer's buttons
        question = box(page.locator("#question textarea"))
        assert opened["y"] + opened["height"] <= question["y"] + 1, (opened, question)  # not down by the input
        assert duplicate_ids(page) == []  # never two elements with one id
        shot(page, shots, "feedback-by-the-answer")
        page.click("#feedback-close")
        expect(feedback).to_be_hidden()


def test_the_message_label_for_screen_readers_is_plain_text(indexed: Settings, browser: BrowserContext) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)
        bot = ask(page, EN_QUESTION)
        expect(bot).to_have_attribute("aria-label", re.compile(r"three times a year"))
        label = bot.get_attribute("aria-label") or ""
        assert "<" not in label and "sup class" not in label and "href=" not in label, label


def test_framing_lines_follow_the_questions_language(indexed: Settings, browser: BrowserContext) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url)  # the UI is in English
        ja = ask(page, JA_QUESTION)
        expect(ja).to_contain_text("出典")
        expect(ja).not_to_contain_text("Sources")
        expect(ja.locator(".source summary").first).to_have_text("引用")
        en = ask(page, EN_QUESTION)
        expect(en).to_contain_text("Sources")
        expect(en).not_to_contain_text("出典")


LINKED_DOC = """---
id: "walrus-en"
title: "Walrus Placement Guide"
url: "https://example.test/docs/walrus/placement"
language: "en"
license: "CC0-1.0"
completeness: "full"
---

# Walrus Placement Guide

## Placement

The walrus scheduler places jobs by rack; see [node topology](#node-topology-information) and [the setup guide](../setup/install.md) for the rack labels.
"""


def test_a_relative_link_in_a_quote_leads_to_the_source_site(settings: Settings, browser: BrowserContext) -> None:
    (settings.index.corpus_dir / "walrus-en.md").write_text(LINKED_DOC, encoding="utf-8")
    run_ingest(settings, FakeEmbeddings())
    with launched(settings) as url:
        page = open_page(browser, url)
        bot = ask(page, "How does the walrus scheduler place jobs by rack?")
        source = bot.locator(".source", has_text="Walrus Placement Guide").first
        source.locator("summary").click()
        anchor = source.locator("blockquote a", has_text="node topology")
        expect(anchor).to_have_attribute("href", "https://example.test/docs/walrus/placement#node-topology-information")
        expect(source.locator("blockquote a", has_text="the setup guide")).to_have_attribute(
            "href", "https://example.test/docs/setup/install.md"
        )
        expect(source.locator("blockquote")).not_to_contain_text("](")  # rendered, not raw Markdown
