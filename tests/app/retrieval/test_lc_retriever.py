"""HybridRetriever: the project's retriever behind LangChain's interface, over a real tmp index (fake embedder).

Besides the project's own tests, LangChain's standard retriever suite (``langchain-tests``) runs against it.
"""

from __future__ import annotations

import shutil
from typing import Any, ClassVar

import pytest
from fakes import FakeEmbeddings
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from langchain_tests.integration_tests import RetrieversIntegrationTests
from paths import FIXTURE_CORPUS, fixture_settings

from app.retrieval.lc_retriever import HybridRetriever
from app.retrieval.retriever import Retriever
from core.settings import Settings
from ingest.indexer import run_ingest
from ingest.store import IndexUnavailable

EN_QUESTION = "How much memory does the gateway control plane need?"
JA_QUESTION = "Alphaの管理ノードは何台必要？"
METADATA = {"doc_id", "chunk_id", "title", "url", "section", "score", "dense", "lexical"}


@pytest.fixture
def indexed(settings: Settings) -> Settings:
    run_ingest(settings, FakeEmbeddings())
    return settings


def test_documents_carry_the_passage_and_where_it_comes_from(indexed: Settings) -> None:
    docs = HybridRetriever.from_settings(indexed, k=3).invoke(EN_QUESTION)
    assert 1 <= len(docs) <= 3
    assert all(isinstance(d, Document) and set(d.metadata) == METADATA for d in docs)
    top = docs[0]
    assert "512 MB" in top.page_content
    assert top.metadata["doc_id"] == "gateway-en"
    assert top.metadata["title"] == "Gateway Operations Guide"
    assert top.metadata["url"] == "https://example.test/gateway-en"
    assert top.id == top.metadata["chunk_id"]
    assert top.metadata["dense"] is not None and top.metadata["lexical"] is not None
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)


def test_same_ranking_as_the_project_retriever(indexed: Settings) -> None:
    embeddings = FakeEmbeddings()
    wrapped = HybridRetriever.from_settings(indexed, k=4, embeddings=embeddings)
    direct = Retriever(indexed, embeddings).retrieve(JA_QUESTION, 4)
    docs = wrapped.invoke(JA_QUESTION)
    assert [d.metadata["chunk_id"] for d in docs] == [p.chunk_id for p in direct]
    assert "scheduler-ja" in [d.metadata["doc_id"] for d in docs[:2]]


def test_k_defaults_to_the_configured_top_k_and_mode_passes_through(indexed: Settings) -> None:
    retriever = HybridRetriever.from_settings(indexed.with_(top_k=2), mode="bm25")
    docs = retriever.invoke("memory restart")  # two sections, one word each
    assert retriever.k == 2 and len(docs) == 2
    assert all(d.metadata["dense"] is None and d.metadata["lexical"] is not None for d in docs)


def test_inside_an_lcel_chain(indexed: Settings) -> None:
    def numbered_context(docs: list[Document]) -> str:
        return "\n".join(f"[{i}] {d.metadata['title']}: {d.page_content}" for i, d in enumerate(docs, 1))

    chain = HybridRetriever.from_settings(indexed, k=2) | RunnableLambda(numbered_context)
    en, ja = chain.batch([EN_QUESTION, JA_QUESTION])
    assert en.startswith("[1] Gateway Operations Guide:") and "512 MB" in en
    assert "[2] " in en
    assert "ジョブスケジューラ比較メモ:" in ja.split("\n[3]")[0]


def test_a_missing_index_says_run_ingest(settings: Settings) -> None:
    with pytest.raises(IndexUnavailable, match="ingest"):
        HybridRetriever.from_settings(settings).invoke(EN_QUESTION)


def test_k_must_be_positive(indexed: Settings) -> None:
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        HybridRetriever.from_settings(indexed, k=0)


def test_k_per_call_overrides_the_retrievers_own(indexed: Settings) -> None:
    retriever = HybridRetriever.from_settings(indexed, k=4)
    assert len(retriever.invoke(EN_QUESTION, k=1)) == 1
    assert [d.id for d in retriever.invoke(EN_QUESTION, k=2)] == [d.id for d in retriever.invoke(EN_QUESTION)][:2]
    with pytest.raises(ValueError, match="at least 1"):
        retriever.invoke(EN_QUESTION, k=0)


async def test_ainvoke_honours_k_and_ranks_as_invoke(indexed: Settings) -> None:
    retriever = HybridRetriever.from_settings(indexed, k=4)
    docs = await retriever.ainvoke(JA_QUESTION, k=2)
    assert [d.id for d in docs] == [d.id for d in retriever.invoke(JA_QUESTION, k=2)]
    assert len(docs) == 2


class TestLangChainStandardRetrieverSuite(RetrieversIntegrationTests):
    """LangChain's own retriever tests (k in the constructor and per call, invoke and ainvoke) on a tmp index."""

    project_retriever: ClassVar[Retriever | None] = None

    @pytest.fixture(autouse=True, scope="class")
    def _index(self, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
        root = tmp_path_factory.mktemp("standard-suite")
        shutil.copytree(FIXTURE_CORPUS, root / "corpus")
        settings = fixture_settings(root)
        run_ingest(settings, FakeEmbeddings())
        request.cls.project_retriever = Retriever(settings, FakeEmbeddings())

    @property
    def retriever_constructor(self) -> type[HybridRetriever]:
        return HybridRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        assert self.project_retriever is not None, "the class fixture builds the index first"
        return {"retriever": self.project_retriever, "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return EN_QUESTION
