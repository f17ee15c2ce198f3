"""Fixtures for the web UI tests: an indexed fixture corpus, Chromium at desktop and phone size, a screenshot folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext

from core.settings import Settings
from ingest.indexer import run_ingest
from tests.app.web.browser_kit import DESKTOP, PHONE, chromium


@pytest.fixture
def indexed(settings: Settings) -> Settings:
    run_ingest(settings, FakeEmbeddings())
    return settings


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    yield from chromium(tmp_path, DESKTOP)


@pytest.fixture
def phone(tmp_path: Path) -> Iterator[BrowserContext]:
    yield from chromium(tmp_path, PHONE)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = tmp_path / "screenshots"
    folder.mkdir()
    return folder


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The shared fixture settings, answering in the test's process: the fake embedder is registered only here
    (the answer workers have their own tests, with an embedder a fresh process can import)."""
    return settings.with_(answer_workers=0)
