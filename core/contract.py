"""The contract between ingest and the app: index types and the text helpers both sides share.

Nothing here loads chromadb or a model, so the app's pure modules (rendering, evidence, answers) can
import it without pulling in the store. ``ingest.store`` converts Chroma records to these types.

    >>> contextual_text("Slurm Overview", "Architecture", "slurmctld ...")
    'Slurm Overview — Architecture\\nslurmctld ...'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "DenseHit",
    "DocumentInfo",
    "Fact",
    "IndexInfo",
    "IndexMeta",
    "IndexUnavailable",
    "Rule",
    "StoredChunk",
    "contextual_text",
    "dump_facts",
    "embed_text",
    "load_facts",
]

VerdictValue = Literal["slurm", "kubernetes", "hybrid", "depends"]


class IndexUnavailable(RuntimeError):
    """The index cannot be used as it is; the message says what to do."""


class IndexMeta(BaseModel):
    """What a generation was built with; a mismatch means the vectors are not comparable."""

    embedder: str
    chunker: str
    chunk_size: int
    chunk_min: int
    # what read facts out of the chunks (ingest.facts.FACTS_VERSION): a change rebuilds the chunk metadata,
    # not the vectors (the embedding cache holds them); an index built before facts existed reads as ""
    facts: str = ""
    # what the unit vectors were built with (ingest.unit_vectors.UNITS_VERSION); "" before they existed, so
    # the next ingest adds them (chunk vectors come from the embedding cache)
    units: str = ""

    def to_metadata(self) -> dict[str, Any]:
        return self.model_dump()


class IndexInfo(BaseModel):
    """Status of the live generation, for the UI's status line and `ingest --json`."""

    generation: str
    meta: IndexMeta
    documents: int
    chunks: int
    updated_at: str
    translations_stale: list[str] = Field(
        default_factory=list, description="Translations whose original changed since they were written."
    )
    translations_unaligned: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Stale translation id → its sections that match no section of the changed original "
        "(not indexed; the original's own sections answer in its language).",
    )


class StoredChunk(BaseModel):
    """A chunk as stored: verbatim text plus its metadata."""

    id: str
    doc_id: str
    doc_hash: str
    title: str
    url: str
    section: str
    kind: str
    language: str
    index: int
    text: str
    verbatim: bool = True  # False: the document is paraphrased notes, not the source's wording
    translation_of: str = ""  # the original's doc id when this document is a translation companion
    original_section: str = ""  # a translation's section path in the original (headings follow one to one)
    license: str = ""
    completeness: str = ""
    rules: str = ""  # JSON list of the decision rules this chunk states (ingest.rules)
    facts: str = ""  # JSON list of the facts read from this chunk's code, config, flags and tables (ingest.facts)


class DocumentInfo(BaseModel):
    """One document of the index, for the UI's library view."""

    doc_id: str
    title: str
    url: str = ""
    language: str = ""
    license: str = ""
    kind: Literal["full", "notes", "translation"] = "full"
    translation_of: str = ""
    stale: bool = False
    chunks: int = 0


class DenseHit(BaseModel):
    chunk_id: str
    similarity: float


class Rule(BaseModel):
    """A decision rule the corpus states: in this situation, this platform, for this reason.

    Extracted at ingest from recommendation tables, conditional statements and strengths lists
    (``ingest.rules``); ``quote`` is the verbatim row or sentence it came from.
    """

    id: str
    doc_id: str
    chunk_id: str
    section: str
    language: str
    condition: str = Field(description="The situation, in the document's words.")
    verdict: Literal["slurm", "kubernetes", "hybrid"]
    reason: str = ""
    quote: str = Field(description="The verbatim Markdown row or sentence the rule comes from.")
    source: Literal["table", "statement", "strengths"] = "statement"
    facets: dict[str, str] = Field(
        default_factory=dict,
        description="The condition read as situation facets (core.situation): what the rule votes through.",
    )


FactKind = Literal["manifest", "config", "flag", "param", "cell", "env"]


class Fact(BaseModel):
    """One value a chunk states in code, config, a flag list, a parameter definition or a table, with its span.

    Read at ingest (``ingest.facts``) so the answer path never parses Markdown again:
    ``chunk.text[start:end] == value`` always holds.
    """

    kind: FactKind
    subject: str = Field(
        description="What the value belongs to: a manifest's kind and name, a config file, a command, a table's row label."
    )
    key: str = Field(description="YAML key path ('spec > queue'), config key, flag, parameter name or column header.")
    value: str = Field(
        description="Verbatim; a flag without an argument is its own value, a parameter's is its "
        "default when stated, else its description."
    )
    start: int = Field(description="Character offset of the value in the chunk's text.")
    end: int
    line: int = Field(description="The chunk text's line (0-based) where the value starts.")
    api_version: str = ""  # manifest: its YAML document's apiVersion
    object_kind: str = ""  # manifest: its YAML document's kind
    description: str = ""  # flag or parameter: what it does, as written
    default: str = ""  # when the text states one
    gloss: str = Field("", description="A short English phrase for matching, from subject, key and description.")


def dump_facts(facts: Sequence[Fact]) -> str:
    """The stored form of a chunk's facts (``StoredChunk.facts``): a JSON list, "" when there are none."""
    return json.dumps([f.model_dump(exclude_defaults=True) for f in facts], ensure_ascii=False) if facts else ""


def load_facts(chunk: StoredChunk) -> list[Fact]:
    """The facts stored with a chunk (none for an index built before facts existed)."""
    return [Fact.model_validate(f) for f in json.loads(chunk.facts)] if chunk.facts else []


def _header(title: str, section: str) -> str:
    return f"{title} — {section}" if section else title


def contextual_text(title: str, section: str, text: str) -> str:
    """The embedded/indexed form of any passage: ``title — section`` header, newline, verbatim text."""
    return f"{_header(title, section)}\n{text}"


def embed_text(chunk: StoredChunk) -> str:
    """Contextual header (title + section path) + verbatim passage: what is embedded and indexed."""
    return contextual_text(chunk.title, chunk.section, chunk.text)
