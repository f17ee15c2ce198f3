"""Shared fixtures: a fresh Settings per test (fake embedder, tmp index) and the tiny fixture corpus.

The fake embedder (tests/support/fakes.py) is registered here as the backend ``"fake"``, so ``embedding_backend="fake"``
works in this process; subprocesses name it ``fakes:FakeEmbeddings`` and find it through ``PYTHONPATH``.

The fixture corpus (tests/fixtures/corpus) is written for these tests: one Japanese and one English
document with tables, lists and code, and facts the tests can look for.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fakes import FakeEmbeddings
from paths import FIXTURE_CORPUS, SUPPORT_DIR, fixture_settings

from core.settings import Settings
from ingest.embeddings import register_backend

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


register_backend("fake", lambda settings: FakeEmbeddings())
# pytest puts tests/support on sys.path for this process only (never tests/ itself: its app/ and ingest/
# test packages would shadow the real ones); commands the tests start (console scripts, child
# scripts) inherit it here, so ADVISOR_EMBEDDING_BACKEND=fakes:FakeEmbeddings imports in them too.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SUPPORT_DIR), os.environ.get("PYTHONPATH")]))


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    """A writable copy of the fixture corpus."""
    target = tmp_path / "corpus"
    shutil.copytree(FIXTURE_CORPUS, target)
    return target


@pytest.fixture
def settings(tmp_path: Path, corpus_dir: Path) -> Settings:
    """Embedded Chroma in tmp_path, fake embedder, fixture corpus. Ignores the developer's .env."""
    return fixture_settings(tmp_path, corpus_dir)
