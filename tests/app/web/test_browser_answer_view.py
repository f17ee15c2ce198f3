"""Issue 27, the answer view in Chromium at desktop (1366×900) and phone (390×844) size.

A question whose answer worker dies in flight is answered by another worker, with no internal name shown;
Stop keeps the partial answer, marked stopped, puts the question back in the box and leaves no error state.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from fake_openai_server import FakeLLMServer
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext, Locator, Page, expect

from core.settings import Settings
from ingest.indexer import run_ingest
from tests.app.web.browser_kit import (
    DESKTOP,
    EN_QUESTION,
    JA_QUESTION,
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
    use_backend,
    vote,
)

pytestmark = pytest.mark.browser
TYPED_QUESTION = "How much memory does the gateway control plane need?"
CHUNKS = ["Alpha used GPUs ", "up to 92% ", "of capacity [1]."]


def _worker_pids(old: Sequence[int] = ()) -> list[int]:
    """This process's answer workers (``python -m app.web.workers`` children), but ``old``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"app.web.workers" in cmdline and int(entry.name) not in old:
            pids.append(int(entry.name))
    return pids


def test_a_question_whose_worker_dies_is_answered_by_another(
    indexed: Settings, browser: BrowserContext, shots: Path
) -> None:
    pooled = indexed.with_(embedding_backend="fakes:FakeEmbeddings", answer_workers=1)
    old = _worker_pids()  # an earlier test's
    with launched(pooled) as url:
        page = open_page(browser, url)
        deadline = time.monotonic() + 120
        while not (pids := _worker_pids(old)) and time.monotonic() < deadline:
            time.sleep(0.2)
        (pid,) = pids
        ask(page, EN_QUESTION)  # the worker is warm and answering
        os.kill(pid, signal.SIGSTOP)  # it stalls with the next question in flight...
        page.fill("#question textarea", TYPED_QUESTION)
        page.click("#send")
        bot = page.locator('[data-testid="bot"]').nth(1)
        expect(bot).to_be_visible(timeout=TIMEOUT_MS)
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL)  # ...and dies
        expect(bot.locator("sub")).to_be_visible(timeout=120_000)  # answered by its replacement
        expect(bot).to_contain_text("512 MB")
        expect(page.locator("#chat")).not_to_contain_text("WorkerGone")
        expect(page.locator("#chat")).not_to_contain_text("went wrong")
        shot(page, shots, "answered-after-a-worker-died")


SIZES = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(params=list(SIZES))
def sized(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BrowserContext]:
    """Chromium at desktop size, then at phone size."""
    yield from chromium(tmp_path, SIZES[request.param])


def _blocked(page: Page, selector: str) -> bool:
    """Whether something else lies over the middle of the element (a click there would not reach it)."""
    return bool(
        page.locator(selector).evaluate(
            """el => { const r = el.getBoundingClientRect();
                 const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                 return !(top === el || el.contains(top)); }"""
        )
    )


def test_stop_keeps_the_partial_answer_marked_stopped_and_the_question(
    indexed: Settings, sized: BrowserContext, shots: Path
) -> None:
    gate = threading.Event()
    with (
        FakeLLMServer(chunks=CHUNKS, gate=gate) as server,
        launched(indexed.with_(openai_base_url=server.openai_url)) as url,
    ):
        page = open_page(sized, url)
        use_backend(page, "OpenAI-compatible")
        page.fill("#question textarea", JA_QUESTION)
        page.click("#send")
        bot = page.locator('[data-testid="bot"]').first
        expect(bot).to_contain_text("Alpha used GPUs", timeout=TIMEOUT_MS)  # streamed, then paused
        page.click("#stop")
        expect(bot.locator(".stopped")).to_be_visible(timeout=TIMEOUT_MS)  # kept, and marked stopped
        expect(bot).to_contain_text("Alpha used GPUs")
        expect(page.locator("#send")).to_be_visible()
        expect(page.locator("#question textarea")).to_have_value(JA_QUESTION)  # back in the box
        page.wait_for_timeout(500)  # any status Gradio would paint after the event has ended
        expect(page.get_by_text("Error", exact=True)).to_have_count(0)  # no error badges
        assert not _blocked(page, "#question textarea") and not _blocked(page, "#send")
        for rating in VOTE_LABELS.values():  # unfinished: nothing to rate
            expect(page.locator(f'#chat button[aria-label="{rating}"]:visible')).to_have_count(0)
        shot(page, shots, "stopped", full_page=False)
        gate.set()  # the rest of the stream never reaches the page
        use_backend(page, "Extractive")
        ask(page, EN_QUESTION)
        expect(bot).not_to_contain_text("92%")
        page.reload(wait_until="load")  # after a reload the stopped answer is still what arrived, marked
        page.wait_for_selector("#question textarea", timeout=TIMEOUT_MS)
        bot = page.locator('[data-testid="bot"]').first
        expect(bot).to_contain_text("Alpha used GPUs", timeout=TIMEOUT_MS)
        expect(bot.locator(".stopped")).to_be_visible()


def test_stop_while_an_extractive_answer_is_computed(indexed: Settings, browser: BrowserContext) -> None:
    """Stop before anything arrived: the bubble says it was stopped (never a bare "…") and Ask is back."""
    pooled = indexed.with_(embedding_backend="fakes:FakeEmbeddings", answer_workers=1)
    old = _worker_pids()  # an earlier test's
    with launched(pooled) as url:
        page = open_page(browser, url)
        deadline = time.monotonic() + 120
        while not (pids := _worker_pids(old)) and time.monotonic() < deadline:
            time.sleep(0.2)
        ask(page, EN_QUESTION)
        (pid,) = pids
        os.kill(pid, signal.SIGSTOP)  # the next answer takes as long as the test wants
        try:
            page.fill("#question textarea", TYPED_QUESTION)
            page.click("#send")
            bot = page.locator('[data-testid="bot"]').nth(1)
            expect(bot).to_be_visible(timeout=TIMEOUT_MS)
            page.click("#stop")
            expect(bot.locator(".stopped")).to_be_visible(timeout=TIMEOUT_MS)
            expect(page.locator("#send")).to_be_visible()
            expect(page.locator("#question textarea")).to_have_value(TYPED_QUESTION)
        finally:
            os.kill(pid, signal.SIGCONT)
        ask(page, TYPED_QUESTION)  # asked again: answered
        expect(page.locator('[data-testid="bot"]').nth(2)).to_contain_text("512 MB")
        expect(page.get_by_text("Error", exact=True)).to_have_count(0)


def _in_view(page: Page, selector: str) -> dict[str, float]:
    """Where an element sits relative to the window and to the chat's visible area (all in px)."""
    return dict(
        page.locator(selector).last.evaluate(
            """el => { const r = el.getBoundingClientRect(), w = el.closest('.bubble-wrap').getBoundingClientRect();
                 return {top: r.top, bottom: r.bottom, chatTop: w.top, chatBottom: w.bottom,
                         height: window.innerHeight}; }"""
        )
    )


def test_a_new_answer_opens_at_its_first_line_and_stays_there(
    indexed: Settings, sized: BrowserContext, tmp_path: Path, shots: Path
) -> None:
    # the value line as the rules find it (the fitted selector shows one only when confident)
    art = article_settings(indexed, tmp_path).with_(answer_selector=False)
    with launched(art) as url:
        page = open_page(sized, url)
        ask(page, TYPED_QUESTION)
        for question, line in ((SELECTION_QUESTION, ".verdict-line"), (TYPED_QUESTION, ".direct-answer")):
            bot = ask(page, question)
            page.wait_for_timeout(1200)  # Gradio re-renders the chat a moment after an answer arrives
            first = _in_view(page, '#chat [data-testid="bot"]')
            assert abs(first["top"] - first["chatTop"]) <= 40, first  # the answer's first line at the top
            seen = _in_view(page, f"#chat {line}")
            assert seen["top"] >= max(0, seen["chatTop"]) - 1, seen  # the verdict / value line is visible,
            assert seen["bottom"] <= min(seen["height"], seen["chatBottom"]) + 1, seen  # without scrolling
            expect(bot.locator(line)).to_be_visible()
        shot(page, shots, f"answer-opens-at-its-top-{page.viewport_size['width'] if page.viewport_size else 0}")


# Primary controls a phone user taps (WCAG 2.5.5 asks 44 px); every other control at least 24 px (2.5.8).
PRIMARY = [
    "#send",
    "#clear",
    "#lang-toggle label",
    '[role="tab"]',
    "#chat .top-panel button",
    "#chat .source summary",
    "#export-chat",
    "#settings > button, #settings .label-wrap",
]
CONTROLS = "button:visible, [role='tab']:visible, summary:visible, label:has(input[type='radio']):visible"


def _sizes(page: Page, selector: str) -> list[tuple[str, float, float]]:
    return [
        (el.evaluate("e => e.id || e.className || e.tagName"), found["width"], found["height"])
        for el in page.locator(selector).all()
        if (found := el.bounding_box()) is not None and found["width"] > 0
    ]


def test_phone_targets_first_screen_and_one_font(indexed: Settings, phone: BrowserContext, shots: Path) -> None:
    with launched(indexed) as url:
        page = open_page(phone, url)
        expect(page.locator("#chat .example").first).to_be_visible(timeout=TIMEOUT_MS)
        send = page.locator("#send").bounding_box()
        assert send is not None and send["y"] + send["height"] <= PHONE[1], send  # Ask on the first screen
        shot(page, shots, "phone-first-screen", full_page=False)
        ask(page, EN_QUESTION)
        vote(page, 0, "up")
        expect(page.locator("#feedback-box")).to_be_visible(timeout=TIMEOUT_MS)
        small = [s for sel in PRIMARY for s in _sizes(page, sel) if s[1] < 44 or s[2] < 44]
        small += [s for s in _sizes(page, "#feedback-box button") if s[1] < 44 or s[2] < 44]
        assert small == [], small
        tiny = [s for s in _sizes(page, CONTROLS) if s[1] < 24 or s[2] < 24]
        assert tiny == [], tiny
        # one complete font for every weight: the system's, never the web font whose semibold has a few glyphs
        families = page.evaluate(
            """() => [...document.querySelectorAll('body *:not(code):not(pre):not(code *):not(pre *)')]
                 .filter(e => e.getClientRects().length && (e.textContent || '').trim())
                 .map(e => getComputedStyle(e).fontFamily).filter(f => !f.startsWith('system-ui'))"""
        )
        assert families == [], sorted(set(families))


MANIFEST_DOC = """---
id: "walrus-mpi-en"
title: "Walrus MPI Job Guide"
url: "https://example.test/docs/walrus/mpi"
language: "en"
license: "CC0-1.0"
completeness: "full"
---

# Walrus MPI Job Guide

## Manifest

The walrus training job is declared with this manifest:

```yaml
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: walrus-training-job-with-a-rather-long-name-that-makes-the-line-wide-enough-to-scroll-sideways-in-a-panel
  namespace: walrus-team
spec:
  slotsPerWorker: 8
  runPolicy:
    cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: walrus/trainer:1.0
    Worker:
      replicas: 4
      template:
        spec:
          containers:
            - name: worker
              image: walrus/trainer:1.0
```
"""


def test_the_source_panel_opens_at_the_exact_quote_takes_focus_and_closes(
    settings: Settings, sized: BrowserContext, shots: Path
) -> None:
    (settings.index.corpus_dir / "walrus-mpi-en.md").write_text(MANIFEST_DOC, encoding="utf-8")
    run_ingest(settings, FakeEmbeddings())
    with launched(settings) as url:
        page = open_page(sized, url)
        bot = ask(page, "Which apiVersion does the walrus MPIJob manifest use?")
        source = bot.locator(".source", has_text="Walrus MPI Job Guide").first
        source.locator("a.src-title").focus()
        page.keyboard.press("Enter")  # opened from the keyboard
        panel = page.locator("#source-panel")
        expect(panel.locator(".source-view")).to_be_visible(timeout=TIMEOUT_MS)
        page.wait_for_timeout(500)
        hit = panel.locator(".hit").first
        expect(hit).to_be_in_viewport()
        lines = (hit.text_content() or "").strip().splitlines()
        # the quoted lines (a line with its neighbours, or the part of the manifest quoted), never the whole block
        assert 1 <= len(lines) <= 12 and "kubeflow.org/v2beta1" in "".join(lines), lines
        assert panel.evaluate("p => p.scrollWidth <= p.clientWidth + 1 && p.scrollLeft === 0")  # no sideways scroll
        assert panel.evaluate("p => p.contains(document.activeElement)")  # it took focus
        close = box(page.locator("#source-close"))
        assert close["width"] >= 44 and close["height"] >= 44 and close["y"] >= 0, close  # ✕ whole, big enough
        assert not _blocked(page, "#source-view .sv-title")  # nothing floats over the panel
        width = sized.pages[0].viewport_size
        if width is not None and width["width"] < 640:  # a phone: the page behind is dimmed and locked
            assert panel.evaluate("p => getComputedStyle(p).boxShadow.includes('0.55')")
            assert page.evaluate("() => getComputedStyle(document.documentElement).overflow") == "hidden"
            before = page.evaluate("() => window.scrollY")
            page.mouse.move(width["width"] / 2, 20)  # over the dimmed page, above the drawer
            page.mouse.wheel(0, 600)
            page.wait_for_timeout(300)
            assert page.evaluate("() => window.scrollY") == before
        shot(page, shots, f"source-panel-{width['width'] if width else 0}", full_page=False)
        page.keyboard.press("Escape")
        expect(panel).to_be_hidden(timeout=TIMEOUT_MS)
        page.wait_for_timeout(300)
        assert page.evaluate("() => !!document.activeElement.closest('.source')")  # focus back on the title


def test_label_translation_and_example_slips(
    indexed: Settings, browser: BrowserContext, tmp_path: Path, shots: Path
) -> None:
    art = article_settings(indexed, tmp_path)
    with launched(art) as url:
        page = open_page(browser, url)
        page.locator("#chat .example").first.click()  # an example is asked, not only put in the box
        bot = page.locator('[data-testid="bot"]').first
        expect(bot.locator("sub")).to_be_visible(timeout=TIMEOUT_MS)
        expect(bot.locator(".verdict-line")).to_be_visible()
        page.locator("#passages .label-wrap").first.click()
        passages = page.locator("#passages")
        expect(passages.locator(".badge", has_text="translation").first).to_be_visible(timeout=TIMEOUT_MS)
        expect(passages).not_to_contain_text("paraphrased notes")  # the article's translation is a translation
        ja = ask(page, "SlurmとKubernetesの違いは何ですか？")
        expect(ja.locator("sub")).to_contain_text("抽出型")  # the footer in the answer's language
        expect(ja.locator("sub")).not_to_contain_text("extractive")
        ja = ask(page, "クラウドで学習と推論を同じ基盤で運用したい。SlurmとKubernetesのどちらがよいですか？")
        expect(ja.locator(".verdict-line")).to_contain_text("読み取った状況")
        reasons = ja.locator("ul.votes > li").all_inner_texts()
        assert len(reasons) >= 2 and len(set(reasons)) == len(reasons), reasons  # no reason line twice
        said = [r.split("→", 1)[1] for r in reasons]
        assert len(set(said)) == len(said), reasons  # nor the same rule under two labels
        page.get_by_role("tab", name="Which platform?").click()
        expect(page.locator("#recommend")).to_be_visible()
        expect(page.locator("#export-rec")).to_be_hidden()  # nothing to export yet
        page.click("#recommend")
        expect(page.locator("#recommendation")).not_to_be_empty(timeout=TIMEOUT_MS)
        expect(page.locator("#export-rec")).to_be_visible(timeout=TIMEOUT_MS)
        shot(page, shots, "questionnaire-after-recommend", full_page=False)


def test_the_answer_shows_the_lead_and_folds_the_rest(
    indexed: Settings, sized: BrowserContext, tmp_path: Path, shots: Path
) -> None:
    art = article_settings(indexed, tmp_path)
    with launched(art) as url:
        page = open_page(sized, url)
        heading_rows = 0
        for question in (
            SELECTION_QUESTION,
            "Which is cheaper for a fixed on-premises GPU fleet, Slurm or Kubernetes?",
        ):
            bot = ask(page, question)
            lead = bot.locator(".quotes > ul.lead > li.q")
            assert 1 <= lead.count() <= 3, lead.count()  # at most three quotes first
            more = bot.locator("details.more")
            if more.count():
                expect(more).not_to_have_attribute("open", "")  # the rest folded
                expect(more.locator("> summary")).to_contain_text("More from the documents")
            rows = bot.locator("li.q.kind-row")
            for i in range(rows.count()):  # a quoted table row is a table, not an "Item: …; Slurm: …" line
                expect(rows.nth(i).locator("table")).to_be_visible()
            headed = bot.locator("li.q.kind-heading")
            for i in range(headed.count()):  # the rows a heading brings along: one table, not "Label: value; …"
                listed = headed.nth(i).locator(":scope > ul > li").all_inner_texts()
                assert not [x for x in listed if re.match(r"[^:;\n]+: [^;\n]*; [^:;\n]+: ", x)], listed
            heading_rows += headed.locator(":scope > .quote table").count()
            text = bot.inner_text()
            for original in bot.locator("details.original-of").all():  # a translation's original only on request
                expect(original).not_to_have_attribute("open", "")
            assert "Original:" not in text
            against = bot.locator("li.q.against")
            for i in range(against.count()):
                expect(against.nth(i)).to_contain_text("argues against the verdict")
        assert heading_rows >= 1  # the article's comparison rows come under their heading, as a table
        width = page.viewport_size["width"] if page.viewport_size else 0
        shot(page, shots, f"lead-{width}", full_page=False)
        page.locator("#chat li.q.kind-heading .quote table").last.scroll_into_view_if_needed()
        shot(page, shots, f"heading-rows-{width}", full_page=False)


def test_recommend_is_on_the_first_screen_of_the_questionnaire(
    indexed: Settings, sized: BrowserContext, shots: Path
) -> None:
    with launched(indexed) as url:
        page = open_page(sized, url)
        page.get_by_role("tab", name="Which platform?").click()
        recommend = page.locator("#recommend")
        expect(recommend).to_be_visible(timeout=TIMEOUT_MS)
        page.wait_for_timeout(300)
        assert page.evaluate("() => window.scrollY") == 0
        found = box(recommend)
        height = page.viewport_size["height"] if page.viewport_size else 0
        assert found["y"] >= 0 and found["y"] + found["height"] <= height, (found, height)  # no scrolling to it
        shot(page, shots, f"questionnaire-first-screen-{height}", full_page=False)


WALRUS_PROSE_DOC = """---
id: "walrus-ops-en"
title: "Walrus Operations Handbook"
url: "https://example.test/docs/walrus/ops"
language: "en"
license: "CC0-1.0"
completeness: "full"
---

# Walrus Operations Handbook

## Checkpoints

Storage upgrades happen in a nightly maintenance window. Walrus checkpoints are written to the shared scratch \
volume every forty minutes during training. Stale files are pruned after nine days by a cron job. The login nodes \
are rebooted on Sundays. Badge access to the machine room is granted by facilities. Printer queues are drained \
before each holiday. Visitors sign the logbook at the front desk.

## Quotas

Quotas are reviewed each quarter by the platform group.

| Team | GPU quota | Storage quota |
|---|---|---|
| Vision | 64 GPUs | 200 TB |
| Walrus speech | 48 GPUs on the narwhal partition | 120 TB |
| Robotics | 16 GPUs | 40 TB |
| Search | 8 GPUs | 10 TB |
"""


def _open_panel(page: Page, bot: Locator) -> Locator:
    """Open the source panel from the walrus handbook's source under ``bot``, from the keyboard."""
    source = bot.locator(".source", has_text="Walrus Operations Handbook").first
    source.locator("a.src-title").focus()
    page.keyboard.press("Enter")
    panel = page.locator("#source-panel")
    expect(panel.locator(".source-view")).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_timeout(500)
    return panel


@pytest.mark.parametrize(
    ("question", "quoted", "other"),
    [
        (
            "How often are walrus checkpoints written to the scratch volume?",
            "every forty minutes",
            "Visitors sign the logbook",
        ),
        ("What GPU quota does the walrus speech team have?", "48 GPUs on the narwhal partition", "Search"),
    ],
    ids=["sentence", "table-row"],
)
def test_the_source_panel_lights_up_only_the_quoted_sentence_or_row(
    settings: Settings, sized: BrowserContext, shots: Path, question: str, quoted: str, other: str
) -> None:
    (settings.index.corpus_dir / "walrus-ops-en.md").write_text(WALRUS_PROSE_DOC, encoding="utf-8")
    run_ingest(settings, FakeEmbeddings())
    with launched(settings) as url:
        page = open_page(sized, url)
        bot = ask(page, question)
        panel = _open_panel(page, bot)
        hits = panel.locator(".sv-body .hit")
        assert hits.count() >= 1
        lit = " ".join(hits.all_text_contents())
        assert quoted in lit and other not in lit, lit  # the quoted sentence or row, not its paragraph or table
        expect(hits.first).to_be_in_viewport()
        # the block around it is not lit as a whole: not the paragraph, not the table
        assert panel.locator("p.hit", has_text=quoted).count() == 0
        assert panel.locator("table.hit, .table-wrap.hit, tbody.hit").count() == 0
        shot(page, shots, f"source-panel-{quoted.split()[0]}", full_page=False)


def test_tab_and_shift_tab_stay_inside_the_open_source_panel(
    settings: Settings, sized: BrowserContext, shots: Path
) -> None:
    (settings.index.corpus_dir / "walrus-ops-en.md").write_text(WALRUS_PROSE_DOC, encoding="utf-8")
    run_ingest(settings, FakeEmbeddings())
    with launched(settings) as url:
        page = open_page(sized, url)
        bot = ask(page, "How often are walrus checkpoints written to the scratch volume?")
        panel = _open_panel(page, bot)
        inside = "() => !!document.activeElement && !!document.activeElement.closest('#source-panel')"
        stops = panel.evaluate(
            """p => [...p.querySelectorAll('a[href], button, input, select, textarea, summary')]
                 .filter(e => e.getClientRects().length).length"""
        )
        assert stops >= 2, stops  # ✕ Close and the link out, at least
        seen: set[str] = set()
        for key in ["Tab"] * (stops + 3) + ["Shift+Tab"] * (stops + 3):
            page.keyboard.press(key)
            assert page.evaluate(inside), (key, page.evaluate("() => document.activeElement.outerHTML.slice(0, 200)"))
            seen.add(page.evaluate("() => document.activeElement.outerHTML.slice(0, 120)"))
        assert len(seen) >= 2, seen  # it cycles through the panel's controls, not stuck on one
        shot(page, shots, "source-panel-focus", full_page=False)
        page.keyboard.press("Escape")
        expect(panel).to_be_hidden(timeout=TIMEOUT_MS)
        page.keyboard.press("Tab")  # closed: the trap is gone, focus moves on through the page
        assert not page.evaluate(inside)
