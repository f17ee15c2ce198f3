"""Fixtures for the web UI tests: an indexed fixture corpus, Chromium at desktop and phone size, a screenshot folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import FakeEmbeddings
from playwright.sync_api import BrowserContext
from postgres import PostgresServer, available

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


@pytest.fixture
def postgres() -> Iterator[PostgresServer]:
    """A private PostgreSQL server (tests/support/postgres.py); skipped when not installed, failed in CI."""
    if not available():
        if os.environ.get("CI") == "true":
            pytest.fail("PostgreSQL is not installed: CI installs it (make postgres, run by .ci/run)")
        pytest.skip("PostgreSQL is not installed (make postgres)")
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()
