"""The app's own small types. LangChain and Chroma objects are converted to these at one boundary
(``app.retrieval.retriever``), so answer logic, rendering and evals never see framework types."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from core.contract import Rule, StoredChunk, VerdictValue

__all__ = ["MARKER", "Rule", "VerdictValue"]

# An inline citation marker "[3]" in answer Markdown (not a Markdown link "[3](…)" or definition "[3]:").
MARKER = re.compile(r"\[(\d{1,3})\](?![(:])")


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
    translation_of: str | None = Field(None, description="This passage is from a translation of that document.")
    original_section: str = Field("", description="A translation's section path in its original.")
    original_text: str = Field("", description="A translation: the text of the original's aligned section.")


def to_passage(chunk: StoredChunk, score: float, dense: float | None, lexical: float | None) -> Passage:
    return Passage(
        chunk_id=chunk.id,
        doc_id=chunk.doc_id,
        title=chunk.title,
        url=chunk.url,
        section=chunk.section,
        text=chunk.text,
        language=chunk.language,
        kind=chunk.kind,
        score=round(score, 6),
        dense=None if dense is None else round(dense, 4),
        lexical=None if lexical is None else round(lexical, 4),
        verbatim=chunk.verbatim,
        translation_of=chunk.translation_of or None,
        original_section=chunk.original_section,
    )


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


class OriginalQuote(BaseModel):
    """Where a translated quote comes from: the original document's aligned section and passage."""

    doc_id: str
    section: str = ""
    quote: str
    url: str = ""
    link: str = Field("", description="The original's URL with a text fragment that scrolls to the passage.")


class Citation(CitedSource):
    """A cited source with the checkable quote from it."""

    quote: str
    verbatim: bool = Field(
        True, description="False when the quote is not the source's own wording (paraphrased notes, translations)."
    )
    link: str = Field("", description="URL with a text fragment (#:~:text=…) that scrolls to the quoted passage.")
    translation_of: str | None = Field(None, description="The quote comes from a translation of this document.")
    original: OriginalQuote | None = Field(None, description="A translation's original section and passage.")
    stale: bool = Field(False, description="A translation whose original changed since it was written.")


class MatchedRule(BaseModel):
    """A decision rule the situation matched, how well, and the citation number that quotes it."""

    rule: Rule
    score: float = Field(description="How well the situation matches the rule's condition (0..1).")
    n: int | None = Field(None, description="Citation number of the rule's quote in the answer.")


class Verdict(BaseModel):
    """The platform verdict of a selection question, as data: every renderer works from this."""

    value: VerdictValue
    rules: list[MatchedRule] = Field(default_factory=list, description="The rules behind it, best match first.")
    changes: list[str] = Field(default_factory=list, description="What in the situation would change the verdict.")
    summary: str = Field("", description="One line in the question's language, with [n] markers.")


class Turn(BaseModel):
    """One message of a conversation, used to resolve follow-up questions."""

    role: Literal["user", "assistant"]
    content: str


class Answer(BaseModel):
    question: str
    answer: str = Field(description="Markdown text with inline [n] markers.")
    refused: bool = False
    verdict: Verdict | None = Field(None, description="The platform verdict; None unless a selection question.")
    language: str = "en"
    citations: list[Citation] = Field(default_factory=list)
    passages: list[Passage] = Field(default_factory=list, description="Ranked retrieved passages (contexts).")
    backend: str = "extractive"
    flagged: list[str] = Field(default_factory=list, description="LLM sentences without a valid citation.")
    latency_ms: float = 0.0
    timings_ms: dict[str, float] = Field(default_factory=dict, description="Per-stage latency.")
    resolved_question: str = Field("", description="The question after follow-up resolution.")


class Profile(BaseModel):
    """The questionnaire: a team's situation. Unset fields are unknown and match no rule."""

    model_config = {"extra": "forbid"}

    deployment: Literal["on_prem", "cloud"] | None = None
    workload: Literal["training", "training_and_serving"] | None = None
    fleet: Literal["fixed", "elastic"] | None = None
    hpc_experience: Literal["experienced", "new"] | None = None
    ops_team: Literal["small", "dedicated"] | None = None
    priority: Literal["training_speed_cost", "integration"] | None = None
    lang: Literal["en", "ja"] = "en"


class Reason(BaseModel):
    """What one questionnaire answer contributes: the rule it matched and where that rule is written."""

    criterion: str
    answer: str
    verdict: VerdictValue | None = None
    rule: Rule | None = None
    citations: list[Citation] = Field(default_factory=list)


class Recommendation(BaseModel):
    """The questionnaire's result: a verdict with a reason per answered criterion."""

    verdict: VerdictValue
    reasons: list[Reason] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    answer: str = Field("", description="Markdown summary with [n] markers, in the profile's language.")
    changes: list[str] = Field(default_factory=list, description="What would change the verdict.")
