"""Our inverted-index BM25 must score exactly like the rank-bm25 reference implementation."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from app.retrieval.lexical import LexicalIndex
from core.text import tokenize

TEXTS = [
    "Slurm schedules GPU jobs on HPC clusters with a single configuration file.",
    "Kubernetes のコントロールプレーンは etcd と API server で構成されます。",
    "GPU 利用率は Slurm で 80～95 % の例が多い。",
    "Kueue adds job queueing to Kubernetes; it works with the kube-scheduler.",
    "Slurm Slurm Slurm repeated term document",
]


@pytest.mark.parametrize(
    "query", ["Slurm GPU", "コントロールプレーン etcd", "GPU 利用率", "queueing kube-scheduler", "nothing matches zzz"]
)
def test_scores_match_rank_bm25(query: str) -> None:
    ours = LexicalIndex([str(i) for i in range(len(TEXTS))], TEXTS)
    reference = BM25Okapi([tokenize(t) for t in TEXTS])
    np.testing.assert_allclose(ours.scores(query), reference.get_scores(tokenize(query)), rtol=1e-9, atol=1e-12)


def test_search_returns_positive_hits_best_first() -> None:
    index = LexicalIndex(["a", "b", "c"], ["gpu scheduling", "cooking pasta", "gpu gpu scheduling topology"])
    hits = index.search("gpu topology", 5)
    assert [cid for cid, _ in hits] == ["c", "a"]
    assert hits[0][1] > hits[1][1] > 0


def test_empty_index_and_empty_query() -> None:
    assert LexicalIndex([], []).search("gpu", 3) == []
    assert LexicalIndex(["a"], ["gpu"]).search("", 3) == []


def test_picked_scores_of_named_chunks_equal_their_full_scores() -> None:
    index = LexicalIndex(["a", "b", "c"], ["gpu scheduling", "cooking pasta", "gpu gpu scheduling topology"])
    full = index.scores("gpu topology")
    assert index.pick(full, ["c", "b", "zz"]) == {"c": full[2], "b": 0.0}
    assert index.top(full, 5) == index.search("gpu topology", 5)
