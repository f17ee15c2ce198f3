"""Issue 27, the answer view in Chromium at desktop (1366×900) and phone (390×844) size.

A question whose answer worker dies in flight is answered by another worker, with no internal name shown.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, expect

from core.settings import Settings
from tests.app.web.browser_kit import (
    EN_QUESTION,
    TIMEOUT_MS,
    ask,
    launched,
    open_page,
    shot,
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
