"""The app's own small types. LangChain and Chroma objects are converted to these at one boundary
(``app.retrieve``), so answer logic, rendering and evals never see framework types."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Passage(BaseModel):
    """A retrieved chunk with the scores that ranked it."""

    chunk_id: str
    doc_id: str
    title: str
    url: str = ""
    section: str = ""
    text: str
    language: str = ""
    kind: str = "text"
    score: float = Field(0.0, description="Fused score used for ranking (higher is better).")
    dense: float | None = Field(None, description="Cosine similarity from the dense retriever.")
    lexical: float | None = Field(None, description="BM25 score from the lexical retriever.")
    verbatim: bool = Field(True, description="False when the stored document is paraphrased notes.")


# Shown with a citation whose document is paraphrased notes: the user will not find the quote at the URL.
PARAPHRASED_NOTE = "paraphrased notes, not the source's wording · 要約メモ（原文の引用ではありません）"


class CitedSource(BaseModel):
    """Where an inline marker [n] points: one document section (what feedback records keep)."""

    n: int
    doc_id: str
    chunk_id: str
    title: str
    url: str = ""
    section: str = ""


class Citation(CitedSource):
    """A cited source with the checkable quote from it."""

    quote: str
    verbatim: bool = Field(
        True, description="False when the quote comes from paraphrased notes, not the source's own wording."
    )


class Turn(BaseModel):
    """One message of a conversation, used to resolve follow-up questions."""

    role: Literal["user", "assistant"]
    content: str


class Answer(BaseModel):
    question: str
    answer: str = Field(description="Markdown text with inline [n] markers.")
    refused: bool = False
    verdict: str | None = Field(None, description="One-line platform verdict, when the question asks for one.")
    language: str = "en"
    citations: list[Citation] = Field(default_factory=list)
    passages: list[Passage] = Field(default_factory=list, description="Ranked retrieved passages (contexts).")
    backend: str = "extractive"
    flagged: list[str] = Field(default_factory=list, description="LLM sentences without a valid citation.")
    latency_ms: float = 0.0
    timings_ms: dict[str, float] = Field(default_factory=dict, description="Per-stage latency.")
    resolved_question: str = Field("", description="The question after follow-up resolution.")
