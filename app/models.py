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


class FacetReading(BaseModel):
    """One facet of the user's situation as read, with the words that set it (``core.situation``)."""

    value: str
    span: str = Field("", description="The user's words that set it.")
    negated: bool = Field(False, description="Set by a negation ('no inference' → training only).")
    label: str = Field("", description="The value's human label in the answer's language.")


class Vote(BaseModel):
    """A stated facet voting for a platform through a rule the documents state, cited by number."""

    facet: str
    value: str
    label: str = Field("", description="The facet value's human label in the answer's language.")
    platform: Literal["slurm", "kubernetes", "hybrid"]
    rule: Rule
    n: int | None = Field(None, description="Citation number of the rule's quote in the answer.")


class Change(BaseModel):
    """A facet value that would change the verdict, said as a condition in the answer's language."""

    facet: str
    value: str
    condition: str = Field(description="'if you also served the trained models', in the answer's language.")
    verdict: VerdictValue


class Verdict(BaseModel):
    """The platform verdict of a selection question, as data: every renderer works from this."""

    value: VerdictValue
    situation: dict[str, FacetReading] = Field(default_factory=dict, description="The situation as read, by facet.")
    read_as: list[str] = Field(default_factory=list, description="The situation's labels: 'on-prem', 'training only'.")
    votes: list[Vote] = Field(default_factory=list, description="Each stated facet's vote with its rule.")
    deciding: str | None = Field(None, description="'depends': the facet that decides it.")
    deciding_label: str = Field("", description="That facet's human label in the answer's language.")
    change_detail: list[Change] = Field(default_factory=list)
    changes: list[str] = Field(default_factory=list, description="What would change it, as human sentences.")
    summary: str = Field("", description="One line in the question's language, with [n] markers.")


# What kind of answer a question asks for (``app.answer.question``). The first nine are values a unit of a
# document can hold (VALUE_TYPES): those get a direct answer, or "not stated" when no unit holds one.
AnswerType = Literal[
    "api_version",
    "flag",
    "key",
    "default",
    "version",
    "date",
    "command",
    "quantity",
    "name",
    "procedure",
    "reason",
    "comparison",
    "list",
    "yes_no",
    "selection",
    "fact",
]
VALUE_TYPES: frozenset[str] = frozenset(
    ["api_version", "flag", "key", "default", "version", "date", "command", "quantity", "name"]
)
Qualifier = Literal["limit", "default", "percent", "money", "time"]


class QuestionPart(BaseModel):
    """One thing a question asks for ("…which apiVersion, and which field…" has two parts)."""

    text: str = Field(description="The part's words, as the user wrote them.")
    answer_type: AnswerType
    attribute: str = Field("", description="The part's own content words: what is asked about the focus.")
    qualifiers: list[Qualifier] = Field(default_factory=list, description="A bound, a default, a percentage… asked.")
    plural: bool = Field(False, description="Asks for several values of its type ('which flags', 'what lines').")
    counted: str = Field("", description="What a quantity counts or measures ('rings' in 'how many rings', 'GB').")


class TypedQuestion(BaseModel):
    """The question analysed: what it is about (focus) and what kind of answer each part wants."""

    focus: str = Field("", description="The entities the question is about (products, objects, files).")
    answer_type: AnswerType = Field("fact", description="The main part's answer type.")
    parts: list[QuestionPart] = Field(default_factory=list)


class Finding(BaseModel):
    """A value found for one part of a typed question: the span, and the citation whose quote holds it."""

    part: int = Field(description="Index into TypedQuestion.parts.")
    value: str = Field(description="The value as written in the document (shown in bold).")
    answer_type: AnswerType
    n: int = Field(0, description="Citation number of the quote that holds the value.")


class ValueSpan(BaseModel):
    """A value inside a quote's shown text: what the value line states, and where the quote states it."""

    part: int = Field(description="Index into TypedQuestion.parts.")
    value: str
    answer_type: AnswerType
    start: int = Field(description="Offset of the value in Quote.text.")
    end: int


QuoteRole = Literal["value", "support", "against", "related"]


class Quote(BaseModel):
    """One quoted unit of a document as an answer shows it: a sentence, list item, table row or code window.

    ``text`` is what the answer shows (table cells labelled by their header, markup dropped); ``markdown`` is
    the verbatim source (a table row with its header, a code window), what a renderer draws as a table or a
    code block; ``start``/``end`` locate the unit in its chunk's text (-1 when it is not there verbatim)."""

    n: int = Field(description="Citation number (Citation.n).")
    doc_id: str
    chunk_id: str
    title: str = ""
    section: str = ""
    kind: str = Field("sentence", description="sentence, item, row, code, code_line or heading.")
    text: str
    markdown: str = ""
    code_language: str = ""
    start: int = -1
    end: int = -1
    language: str = ""
    values: list[ValueSpan] = Field(default_factory=list, description="Values of the value line inside ``text``.")
    followers: list[str] = Field(
        default_factory=list,
        description="What the quote brings along, as shown text: a lead-in's list, table or code; a sentence's next.",
    )
    follower_kinds: list[str] = Field(default_factory=list, description="Each follower's unit kind.")
    follower_markdown: list[str] = Field(
        default_factory=list, description="Each follower's verbatim Markdown (a table row under its header)."
    )
    about: str = Field(
        "",
        description="For a sentence of a definition list that does not name its term, the term it belongs to "
        '("PriorityCalcPeriod" for "The default value is 5 (minutes)."): every renderer shows it before the text.',
    )
    intro: str = Field(
        "",
        description='For a code block or code window, the sentence right before it that announces it ("Install the '
        'slurm-operator and its CRDs:"): every renderer shows it above the code, where a generic label would be.',
    )
    role: QuoteRole = Field("support", description="value, support, against (the verdict), related (not stated).")
    score: float | None = Field(None, description="The answer selector's probability that the unit answers.")
    translation_of: str | None = None
    original: str = Field("", description="A translation: the original's words for this quote.")


class ValueLine(BaseModel):
    """The bold line that opens a typed answer, shown only when its calibrated confidence clears the bar."""

    findings: list[Finding]
    confidence: float = Field(description="Calibrated probability that the value line is right.")


class NotStated(BaseModel):
    """The focus is in the documents, but no passage states the value asked for."""

    asked: str = Field(description="What was asked, in the user's words.")
    focus: str = Field("", description="What it was asked about (the entities the documents do cover).")


class Turn(BaseModel):
    """One message of a conversation, used to resolve follow-up questions."""

    role: Literal["user", "assistant"]
    content: str


FallbackNotice = Literal["llm_timeout", "llm_unavailable", "llm_unsupported"]


class Answer(BaseModel):
    question: str
    answer: str = Field(description="Markdown text with inline [n] markers: what a user reads first (the lead).")
    more_text: str = Field("", description="Markdown of the quotes after the lead ('More from the documents').")
    refused: bool = False
    value_line: ValueLine | None = Field(None, description="The value line when confident enough to show.")
    lead: list[Quote] = Field(default_factory=list, description="The quotes shown first (at most three).")
    more: list[Quote] = Field(default_factory=list, description="Further quotes, folded under the lead.")
    verdict: Verdict | None = Field(None, description="The platform verdict; None unless a selection question.")
    question_info: TypedQuestion | None = Field(None, description="The question analysed (focus, type, parts).")
    findings: list[Finding] = Field(default_factory=list, description="Values found for a typed question's parts.")
    not_stated: NotStated | None = Field(None, description="Set when the documents do not state the value asked.")
    needs: list[str] = Field(
        default_factory=list, description="A selection question with no deciding fact: the facts to ask for."
    )
    missing: list[str] = Field(default_factory=list, description="Parts of a typed question no passage answers.")
    language: str = "en"
    citations: list[Citation] = Field(default_factory=list)
    passages: list[Passage] = Field(default_factory=list, description="Ranked retrieved passages (contexts).")
    backend: str = "extractive"
    flagged: list[str] = Field(
        default_factory=list, description="LLM sentences without a valid citation (left out of the answer)."
    )
    notice: FallbackNotice | None = Field(
        None,
        description="Why an LLM backend's answer was replaced by the extractive one: the model timed out, its "
        "server was unavailable, or its answer cited none of the passages.",
    )
    latency_ms: float = 0.0
    timings_ms: dict[str, float] = Field(default_factory=dict, description="Per-stage latency.")
    resolved_question: str = Field("", description="The question after follow-up resolution.")


class Profile(BaseModel):
    """The questionnaire: a team's situation as facet values (``core/facets.toml``). Unset fields are unknown."""

    model_config = {"extra": "forbid"}

    deployment: Literal["on_prem", "cloud"] | None = None
    fleet: Literal["fixed", "elastic"] | None = None
    workload: Literal["training", "training_and_serving"] | None = None
    one_platform: Literal["yes", "no"] | None = None
    hpc_experience: Literal["experienced", "new"] | None = None
    ops_team: Literal["small", "dedicated"] | None = None
    priority: Literal["training_speed_cost", "integration"] | None = None
    lang: Literal["en", "ja"] = "en"

    def facets(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump(exclude={"lang"}).items() if v is not None}


class Reason(BaseModel):
    """What one questionnaire answer contributes: its vote and the rule it votes through, cited."""

    criterion: str = Field(description="The facet (deployment, workload, …).")
    criterion_label: str = Field("", description="The facet's human label in the profile's language.")
    value: str = Field("", description="The answer as a facet value (what the form sends back).")
    answer: str = Field("", description="The answer's human label in the profile's language.")
    verdict: VerdictValue | None = None
    rule: Rule | None = None
    citations: list[Citation] = Field(default_factory=list)


class Recommendation(BaseModel):
    """The questionnaire's result: a verdict (None when no answer decides anything) with a reason per answer."""

    verdict: VerdictValue | None
    reasons: list[Reason] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    answer: str = Field("", description="Markdown summary with [n] markers, in the profile's language.")
    changes: list[str] = Field(default_factory=list, description="What would change the verdict, as sentences.")
    detail: Verdict | None = Field(None, description="The verdict as data (read situation, votes, changes).")
    needs: list[str] = Field(default_factory=list, description="The facts still to give (unanswered facets' labels).")
