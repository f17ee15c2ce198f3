"""Shared fixtures: a fresh Settings per test (fake embedder, tmp index) and the tiny fixture corpus.

The fixture corpus (tests/fixtures/corpus) is written for these tests: one Japanese and one English
document with tables, lists and code, and facts the tests can look for.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ingest.settings import Settings

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

FIXTURE_CORPUS = Path(__file__).parent / "fixtures" / "corpus"
PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DOCS = PROJECT_ROOT.parent / "shared" / "corpus" / "docs"


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    """A writable copy of the fixture corpus."""
    target = tmp_path / "corpus"
    shutil.copytree(FIXTURE_CORPUS, target)
    return target


@pytest.fixture
def settings(tmp_path: Path, corpus_dir: Path) -> Settings:
    """Embedded Chroma in tmp_path, fake embedder, fixture corpus. Ignores the developer's .env."""
    return Settings().with_(
        corpus_dir=corpus_dir,
        index_dir=tmp_path / "index",
        data_dir=tmp_path / "data",
        embedding_backend="fake",
        chunk_size=300,
        chunk_min=60,
    )
