"""The project's hybrid retriever (glossary expansion, dense + BM25, fused) as a LangChain ``BaseRetriever``.

For LangChain users who want our ranking inside their own chains::

    retriever = HybridRetriever.from_settings(load_settings(), k=5)
    chain = retriever | RunnableLambda(lambda docs: "\\n\\n".join(d.page_content for d in docs))
    chain.invoke("How much memory does the control plane need?")

``k`` can also be given per call, as LangChain's standard retriever tests expect:
``retriever.invoke(query, k=3)`` (or ``ainvoke``) returns at most 3 documents whatever the retriever's own ``k``.

Each ``Document`` carries the passage text and, in ``metadata``, ``doc_id``, ``chunk_id``, ``title``, ``url``,
``section`` and the scores that ranked it (``score``, ``dense``, ``lexical``; ``None`` for a retriever the
mode did not run). Errors are the app's: ``ingest.store.IndexUnavailable`` when the index is missing, stale or
unreachable.

Deliberately left out: answering (use ``app.pipeline.Advisor``), async retrieval of its own (``ainvoke`` runs the
sync path in an executor), and LangChain callbacks inside the stages.
"""

from __future__ import annotations

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import Field

from app.models import Passage
from app.retrieval.retriever import Mode, Retriever
from core.settings import Settings
from ingest.embeddings import AdvisorEmbeddings, make_embeddings


class HybridRetriever(BaseRetriever):
    """Top ``k`` passages from ``app.retrieval.retriever.Retriever`` as LangChain ``Document`` objects."""

    retriever: Retriever = Field(description="The project's retriever; it follows re-ingests by itself.")
    k: int = Field(5, ge=1, description="Passages returned per query.")
    mode: Mode = Field("hybrid", description="'hybrid' (default), 'dense' or 'bm25'.")

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        k: int | None = None,
        *,
        embeddings: AdvisorEmbeddings | None = None,
        mode: Mode = "hybrid",
    ) -> HybridRetriever:
        """A retriever over the configured index; ``k`` defaults to ``settings.retrieval.top_k``.

        The embedding model loads on the first query, not here.
        """
        backend = embeddings if embeddings is not None else make_embeddings(settings)
        return cls(
            retriever=Retriever(settings, backend),
            k=settings.retrieval.top_k if k is None else k,
            mode=mode,
        )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        # A keyword besides run_manager makes BaseRetriever pass invoke()'s keywords through (k=N here).
        return self._top(query, k)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        # BaseRetriever's own async fallback drops the keywords, so k is passed on here.
        return await run_in_executor(None, self._top, query, k)

    def _top(self, query: str, k: int | None) -> list[Document]:
        if k is not None and k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        return [to_document(p) for p in self.retriever.retrieve(query, self.k if k is None else k, self.mode)]


def to_document(passage: Passage) -> Document:
    """Our ``Passage`` → a LangChain ``Document`` (text plus where it comes from and how it scored)."""
    return Document(
        id=passage.chunk_id,
        page_content=passage.text,
        metadata={
            "doc_id": passage.doc_id,
            "chunk_id": passage.chunk_id,
            "title": passage.title,
            "url": passage.url,
            "section": passage.section,
            "score": passage.score,
            "dense": passage.dense,
            "lexical": passage.lexical,
        },
    )
