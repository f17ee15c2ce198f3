"""The web UI end to end in real headless Chromium (Debian's /usr/bin/chromium) driven by Playwright.

Types a Japanese and an English question, checks answers and citation markers render, opens a
source, votes on an answer and finds the vote in the feedback file, checks that HTML in a question
stays inert, that the page is usable quickly while models load, and one test per defect found in a
browser (phone layout, citation jumps, copy, votes, reload, language toggle, stop, backend health).
Screenshots go to the test's tmp_path, never into the repository.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import FakeLLMServer
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext, Dialog, Page, expect, sync_playwright

from app.pipeline import Advisor
from app.web.ui import build_app, launch_options
from core.settings import Settings
from ingest.indexer import run_ingest

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
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


def _context(tmp_path: Path, width: int, height: int) -> Iterator[BrowserContext]:
    assert Path(CHROMIUM).exists(), "Debian chromium is part of the project set-up (make browser)"
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height},
            locale="ja-JP",
        )
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    yield from _context(tmp_path, 1366, 900)


@pytest.fixture
def phone(tmp_path: Path) -> Iterator[BrowserContext]:
    yield from _context(tmp_path, 390, 844)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = tmp_path / "screenshots"
    folder.mkdir()
    return folder


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


# Gradio labels the thumbs in the browser's locale (the contexts here are ja-JP).
VOTE_LABELS = {"up": "いいね", "down": "よくないね"}


def vote(page: Page, answer: int, rating: str) -> None:
    """Click 👍 (up) or 👎 (down) under the ``answer``-th bot message (0-based)."""
    page.locator(f'#chat button[aria-label="{VOTE_LABELS[rating]}"]').nth(answer).click()


def ask(page: Page, question: str) -> Any:
    """Type and send a question; return the locator of the new (final) bot message."""
    before = page.locator('[data-testid="bot"]').count()
    page.fill("#question textarea", question)
    page.click("#send")
    bot = page.locator('[data-testid="bot"]').nth(before)
    # Final answers carry the backend/latency footer; partial and error messages do not.
    expect(bot.locator("sub, p:has-text('⚠️')").first).to_be_visible(timeout=TIMEOUT_MS)
    return bot


def shot(page: Page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


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

        # Open a source: the quoted passage expands.
        details = en.locator(".source details").first
        assert details.get_attribute("open") is None
        details.locator("summary").click()
        expect(details).to_have_attribute("open", "")
        expect(details.locator("blockquote")).to_contain_text("three times a year")
        link = en.locator(".source a[target=_blank]").first
        assert (link.get_attribute("href") or "").startswith("https://example.test/gateway-en#:~:text=")
        assert "noopener" in (link.get_attribute("rel") or "")

        # The passages panel shows scores for the last answer.
        page.click("#passages button, #passages .label-wrap")
        expect(page.locator("#passages")).to_contain_text("Gateway Operations Guide")
        expect(page.locator("#passages")).to_contain_text("Relevance")
        shot(page, shots, "02-answers-and-open-source")

        # A vote with a comment on this answer lands in the JSONL file.
        vote(page, 1, "up")
        expect(page.locator("#feedback-status")).to_contain_text("answer 2", timeout=TIMEOUT_MS)
        page.fill("#feedback-comment textarea", "正確でした — accurate")
        page.click("#save-comment")
        expect(page.locator("#feedback-status")).to_contain_text("Comment saved", timeout=TIMEOUT_MS)
        shot(page, shots, "03-feedback")
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
        assert page.locator("#chat img[src=x]").count() == 0
        assert page.locator("#chat script").count() == 0
        assert page.locator('#chat a[href^="javascript"]').count() == 0
        page.wait_for_timeout(500)
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
        page = open_page(browser, url, [])
        usable_after = time.monotonic() - started
        expect(page.locator("#index-status")).to_contain_text("Loading")
        shot(page, shots, "06-loading")
        page.click("#refresh-status")  # no need to wait for the timer
        deadline = time.monotonic() + 20
        while "documents" not in page.locator("#index-status").inner_text() and time.monotonic() < deadline:
            page.wait_for_timeout(500)
            page.click("#refresh-status")
        expect(page.locator("#index-status")).to_contain_text("documents")
    assert usable_after < 15, f"page took {usable_after:.1f}s to become usable"


# ------------------------------------------------------------------------------ defects found in a browser


def test_phone_layout_input_tabs_and_passages_fit(indexed: Settings, phone: BrowserContext, shots: Path) -> None:
    with launched(indexed) as url:
        page = open_page(phone, url, [])
        box = page.locator("#question textarea").bounding_box()
        assert box is not None and box["y"] + box["height"] <= 844, box  # input above the fold
        helper_tab = page.get_by_role("tab", name="Which platform?")
        expect(helper_tab).to_be_visible()  # not hidden behind an overflow menu
        ask(page, EN_QUESTION)
        page.click("#passages button, #passages .label-wrap")
        expect(page.locator("#passages")).to_contain_text("Gateway Operations Guide")
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
        page = open_page(browser, url, [])
        bot = ask(page, EN_QUESTION)
        marker = bot.locator("sup.cite a").first
        target = bot.locator(marker.get_attribute("href") or "#missing")
        marker.click()
        expect(target).to_have_class(re.compile(r"\bflash\b"))
        expect(target.locator("details")).to_have_attribute("open", "")
        page.wait_for_timeout(800)  # smooth scrolling
        chat = page.locator("#chat").bounding_box()
        src = target.bounding_box()
        assert chat and src and chat["y"] + 40 <= src["y"] <= chat["y"] + chat["height"], (chat, src)
        shot(page, shots, "citation-jump")


def test_copy_button_copies_plain_text_with_markers_and_sources(indexed: Settings, browser: BrowserContext) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url, [])
        ask(page, EN_QUESTION)
        page.locator('#chat button[aria-label="Copy message"]').last.click()
        page.wait_for_timeout(300)
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert "three times a year" in copied and "[1]" in copied and "Sources:" in copied
        assert "<sup" not in copied and "<div" not in copied and "plain:" not in copied
        assert "https://example.test/gateway-en#:~:text=" in copied


def test_a_second_vote_replaces_the_first(indexed: Settings, browser: BrowserContext) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url, [])
        ask(page, EN_QUESTION)
        vote(page, 0, "down")
        expect(page.locator("#feedback-status")).to_contain_text("answer 1", timeout=TIMEOUT_MS)
        page.wait_for_timeout(300)
        vote(page, 0, "up")
        page.wait_for_timeout(1000)
    records = [json.loads(line) for line in indexed.web.feedback_path.read_text(encoding="utf-8").splitlines()]
    assert [r["rating"] for r in records] == ["up"]


def test_reload_keeps_conversation_and_language_and_export(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url, [])
        ask(page, EN_QUESTION)
        page.get_by_label("日本語").check()
        expect(page.locator("#send")).to_have_text("質問する")  # one language at a time
        expect(page.locator("#index-status")).to_contain_text("文書")
        expect(page.get_by_role("tab", name="どちらの基盤？")).to_be_visible()
        page.wait_for_timeout(500)
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


def test_examples_are_not_cut_off(indexed: Settings, browser: BrowserContext) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url, [])
        example = page.locator("#examples").get_by_text("on-premises GPU cluster", exact=False).first
        expect(example).to_be_visible()
        clipped = example.evaluate(
            "e => e.scrollWidth > e.clientWidth + 1 || getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth"
        )
        assert not clipped


def test_backend_without_server_is_marked_and_its_error_says_what_to_do(
    indexed: Settings, browser: BrowserContext
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with launched(indexed.with_(openai_base_url=dead)) as url:
        page = open_page(browser, url, [])
        option = page.get_by_label("OpenAI-compatible", exact=False)
        expect(page.locator("#settings")).to_contain_text("unavailable", timeout=TIMEOUT_MS)
        option.check()
        bot = ask(page, EN_QUESTION)
        expect(bot).to_contain_text(dead)
        expect(bot).to_contain_text("vllm serve")
        expect(bot).not_to_contain_text("LLMUnavailable")


def test_stop_button_ends_a_streaming_answer(indexed: Settings, browser: BrowserContext) -> None:
    gate = threading.Event()
    chunks = ["Alpha used GPUs ", "up to 92% ", "of capacity [1]."]
    with (
        FakeLLMServer(chunks=chunks, gate=gate) as server,
        launched(indexed.with_(openai_base_url=server.openai_url)) as url,
    ):
        page = open_page(browser, url, [])
        page.get_by_label("OpenAI-compatible", exact=False).check()
        page.fill("#question textarea", JA_QUESTION)
        page.click("#send")
        bot = page.locator('[data-testid="bot"]').first
        expect(bot).to_contain_text("Alpha used GPUs", timeout=TIMEOUT_MS)  # streamed, then paused
        page.click("#stop")
        page.wait_for_timeout(500)
        gate.set()
        page.wait_for_timeout(1500)
        expect(bot).not_to_contain_text("92%")  # the rest never arrived: the answer was stopped
        expect(page.locator("#send")).to_be_enabled()


def test_questionnaire_recommends_from_the_articles_rules_and_cites_them(
    settings: Settings, browser: BrowserContext, shots: Path, tmp_path: Path
) -> None:
    """The article's Kubernetes team (cloud, elastic fleet, training and serving) in the browser form."""
    import shutil

    from core.settings import PROJECT_ROOT

    article = PROJECT_ROOT / "corpus" / "docs" / "slurm-vs-k8s-article-ja.md"
    translation = PROJECT_ROOT / "corpus" / "translations" / "slurm-vs-k8s-article-en.md"
    if not article.is_file() or not translation.is_file():
        pytest.fail("the corpus is not linked: run `make corpus` so corpus/docs and corpus/translations exist")
    (tmp_path / "art" / "docs").mkdir(parents=True)
    (tmp_path / "art" / "translations").mkdir()
    shutil.copy(article, tmp_path / "art" / "docs")
    shutil.copy(translation, tmp_path / "art" / "translations")
    art = settings.with_(corpus_dir=tmp_path / "art" / "docs", translations_dir=tmp_path / "art" / "translations")
    run_ingest(art, FakeEmbeddings())
    with launched(art) as url:
        page = open_page(browser, url, [])
        page.get_by_role("tab", name="Which platform?").click()
        for field, label in (("deployment", "Cloud"), ("workload", "Training and serving"), ("fleet", "Elastic")):
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
        page = open_page(browser, url, [])
        slider = page.locator("#k input[type=number]")
        slider.fill("1")
        slider.press("Enter")
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
        page = open_page(browser, url, [])
        bot = ask(page, "How long does a gateway restart take according to the vendor post?")
        expect(bot).to_contain_text("ninety seconds")
        for note in ("What this file is", "stored variants", "cut off at this point", "citation checking"):
            expect(bot).not_to_contain_text(note)  # neither in the answer nor in its sources' quotes
        shot(page, shots, "no-file-notes")


def test_small_defects_refusal_once_no_empty_bullets_and_a_rendered_passages_panel(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(browser, url, [])
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
