"""Helpers for the browser tests: launch the app, drive Debian's Chromium with Playwright, measure what a user sees.

Everything waits on conditions (an element, a text, a count), never on fixed sleeps. Screenshots go to the
test's ``tmp_path``; they are for a person to look at, never committed.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import axe_playwright_python
import pytest
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext, Dialog, Locator, Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from ports import free_port

from app.pipeline import Advisor
from app.web.ui import build_app, launch_options
from core.settings import PROJECT_ROOT, Settings
from ingest.indexer import run_ingest

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
DESKTOP = (1366, 900)
PHONE = (390, 844)
JA_QUESTION = "AlphaはGPUを何%まで使い切りましたか？"
EN_QUESTION = "How often do minor releases ship?"
SELECTION_QUESTION = (
    "Which should we choose for distributed LLM training on an on-premises GPU cluster: Slurm or Kubernetes?"
)
TIMEOUT_MS = 30_000
# Uncaught errors of the page's script, per page (open_page records them; ask checks there are none).
PAGE_ERRORS: dict[int, list[str]] = {}
# Gradio labels the thumbs in the browser's locale (the contexts here are ja-JP).
VOTE_LABELS = {"up": "いいね", "down": "よくないね"}


@contextlib.contextmanager
def launched(settings: Settings, advisor: Advisor | None = None) -> Iterator[str]:
    demo = build_app(settings, advisor)
    options = {**launch_options(settings), "server_port": free_port(), "prevent_thread_lock": True, "quiet": True}
    _, url, _ = demo.launch(**options)
    try:
        yield url
    finally:
        demo.close()


def chromium(tmp_path: Path, size: tuple[int, int]) -> Iterator[BrowserContext]:
    assert Path(CHROMIUM).exists(), "Debian chromium is part of the project set-up (make browser)"
    width, height = size
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / f"chromium-{width}"),
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


def open_page(context: BrowserContext, url: str, dialogs: list[str] | None = None) -> Page:
    page = context.pages[0] if context.pages else context.new_page()
    seen = dialogs if dialogs is not None else []

    def on_dialog(dialog: Dialog) -> None:  # an alert() would mean injected script ran
        seen.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    errors = PAGE_ERRORS.setdefault(id(page), [])
    errors.clear()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url, wait_until="load")
    page.wait_for_selector("#question textarea", timeout=TIMEOUT_MS)
    return page


def set_slider(page: Page, elem_id: str, value: str, attempts: int = 5) -> None:
    """Type ``value`` into a slider's number box until its range handle shows it.

    The number box and the handle share one value, and the question is sent with it. On a loaded machine the
    first typing can land before the folded panel has mounted its inputs and be lost, so this types again
    until the handle agrees (and fails if it never does).
    """
    box = page.locator(f"{elem_id} input[type=number]")
    handle = page.locator(f"{elem_id} input[type=range]")
    for _ in range(attempts):
        expect(box).to_be_editable(timeout=TIMEOUT_MS)
        box.fill(value)
        box.press("Enter")
        try:
            expect(handle).to_have_value(value, timeout=3_000)
            return
        except AssertionError:
            continue
    expect(handle).to_have_value(value)


def ask(page: Page, question: str) -> Locator:
    """Type and send a question; return the locator of the new (final) bot message."""
    before = page.locator('[data-testid="bot"]').count()
    page.fill("#question textarea", question)
    page.click("#send")
    bot = page.locator('[data-testid="bot"]').nth(before)
    # Final answers carry the backend/latency footer; error messages start with ⚠️.
    expect(bot.locator("sub, p:has-text('⚠️')").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("#send")).to_be_visible(timeout=TIMEOUT_MS)  # the answer is over: Ask is back
    assert PAGE_ERRORS.get(id(page), []) == [], PAGE_ERRORS[id(page)]  # the page's script never failed
    return bot


def use_backend(page: Page, label: str) -> None:
    """Choose an answer backend under Settings (folded on the first screen: unfold it first)."""
    option = page.locator("#backend").get_by_label(label, exact=False)
    if not option.is_visible():
        page.locator("#settings .label-wrap").first.click()
    expect(option).to_be_visible(timeout=TIMEOUT_MS)
    option.check()


def vote(page: Page, answer: int, rating: str) -> Locator:
    """Click 👍 (up) or 👎 (down) under the ``answer``-th bot message (0-based); return the button."""
    button = page.locator(f'#chat button[aria-label="{VOTE_LABELS[rating]}"]').nth(answer)
    button.click()
    return button


def reveal(page: Page, locator: Locator, tries: int = 10) -> None:
    """Scroll the chat until ``locator`` is at the top of its visible area, and stays there. Gradio pins the chat
    to its latest message once more a moment after an answer arrives, which undoes an early scroll: scroll
    again until the element has held its place for half a second."""
    held = """el => { const r = el.getBoundingClientRect(), w = el.closest('.bubble-wrap').getBoundingClientRect();
                     const now = performance.now();
                     if (r.top < w.top - 2 || r.top > w.top + 40) { el.__since = 0; return false; }
                     el.__since = el.__since || now;
                     return now - el.__since >= 500; }"""
    for _ in range(tries):
        locator.evaluate("el => { el.__since = 0; el.scrollIntoView({block: 'start'}); }")
        try:
            page.wait_for_function(held, arg=locator.element_handle(), timeout=2000)
            return
        except PlaywrightTimeoutError:
            continue
    raise AssertionError(f"{locator} could not be scrolled into the chat's view")


def shot(page: Page, folder: Path, name: str, *, full_page: bool = True) -> None:
    """A screenshot; ``full_page=False`` keeps the viewport (resizing it for a full page would re-pin the chat
    to its latest message, undoing ``reveal``)."""
    page.screenshot(path=str(folder / f"{name}.png"), full_page=full_page)


def box(locator: Locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return {"x": found["x"], "y": found["y"], "width": found["width"], "height": found["height"]}


def text_lines(locator: Locator) -> int:
    """How many lines the element's text takes on screen (1 = it does not wrap)."""
    return int(
        locator.evaluate(
            """el => { const r = document.createRange(); r.selectNodeContents(el);
                 const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
                 return tops.size; }"""
        )
    )


def duplicate_ids(page: Page) -> list[Any]:
    return list(
        page.evaluate(
            """() => { const seen = {}; document.querySelectorAll('[id]').forEach(e => {
                 if (e.id) seen[e.id] = (seen[e.id] || 0) + 1; });
               return Object.entries(seen).filter(([, n]) => n > 1); }"""
        )
    )


@cache
def _axe_source() -> str:
    """axe-core, as bundled by the axe-playwright-python package (never committed here)."""
    return (files(axe_playwright_python) / "axe.min.js").read_text(encoding="utf-8")


def axe_violations(page: Page, impacts: tuple[str, ...] = ("serious", "critical")) -> list[dict[str, Any]]:
    """axe-core's violations of the page as it is now, of these impacts: ``[{id, impact, help, count, nodes}]``
    (the first five nodes of each, with axe's summary of what to fix)."""
    # Outputs fade while an event runs: audit the page at rest, not the fade.
    page.wait_for_function(
        "() => !document.querySelector('.pending, .generating, .translucent:not(.hide)')", timeout=TIMEOUT_MS
    )
    page.wait_for_timeout(400)
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_axe_source())
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "count": len(v["nodes"]),
            "nodes": [(n["target"], n.get("failureSummary", "")[:300]) for n in v["nodes"][:5]],
        }
        for v in result["violations"]
        if v["impact"] in impacts
    ]


def article_settings(settings: Settings, tmp_path: Path) -> Settings:
    """The fixture corpus plus the project's Slurm/Kubernetes article and its English companion, indexed."""
    article = PROJECT_ROOT / "corpus" / "docs" / "slurm-vs-k8s-article-ja.md"
    translation = PROJECT_ROOT / "corpus" / "translations" / "slurm-vs-k8s-article-en.md"
    if not article.is_file() or not translation.is_file():
        pytest.fail("the corpus is not linked: run `make corpus` so corpus/docs and corpus/translations exist")
    docs, translations = tmp_path / "art" / "docs", tmp_path / "art" / "translations"
    shutil.copytree(settings.index.corpus_dir, docs)
    translations.mkdir(parents=True)
    shutil.copy(article, docs)
    shutil.copy(translation, translations)
    art = settings.with_(corpus_dir=docs, translations_dir=translations)
    run_ingest(art, FakeEmbeddings())
    return art
