"""One index state, read once per question and passed down (``Retriever.snapshot`` builds it).

A request answers from one snapshot from start to end, so a re-ingest that publishes a new generation
mid-answer cannot mix two states. Pure data: importing it does not load Chroma (the generation's type is
only named for the type checker).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.retrieval.lexical import LexicalIndex
from app.retrieval.unit_vectors import UnitTable
from core.contract import Rule, StoredChunk

if TYPE_CHECKING:
    from ingest.store import Generation


@dataclass
class Snapshot:
    generation: Generation
    chunks: dict[str, StoredChunk]
    lexical: LexicalIndex
    # Every word the knowledge base knows, including its sources' URLs ("NTTPC", "Nebius"): a question
    # naming something outside this set asks about something the documents never mention.
    known_words: frozenset[str] = frozenset()
    frequency: dict[str, int] = field(default_factory=dict)  # Latin words of the chunks, for typo repair
    by_position: dict[tuple[str, int], StoredChunk] = field(default_factory=dict)  # (doc id, index) → chunk
    rules: list[Rule] = field(default_factory=list)  # decision rules stated by the chunks (ingest.rules)
    stale: frozenset[str] = frozenset()  # translation companions whose original changed
    names: frozenset[str] = frozenset()  # the products the documents are about (their titles' names)
    units: UnitTable = field(default_factory=UnitTable)  # every unit's vector, embedded at ingest
    checked_at: float = 0.0

    def section_chunks(self, doc_id: str, section: str) -> list[StoredChunk]:
        """The chunks of one section of one document, in document order."""
        return sorted(
            (c for c in self.chunks.values() if c.doc_id == doc_id and c.section == section), key=lambda c: c.index
        )
