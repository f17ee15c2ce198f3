"""Unit vectors: every evidence unit of the index (``core.units``) embedded once, at ingest.

The answer step compares a question, and each of its parts, with the units of the passages it retrieved
(``app.answer.features``: ``udense``, ``p_udense``); a unit's own vector says what a chunk's vector cannot,
which of its sentences, rows or code lines is about the question, in either language. Units are embedded
through the embedding cache, so an unchanged unit is never embedded twice, and stored beside their generation
(``<generation>-units``, keyed by ``unit_key``), written before the generation is published.

Deliberately left out: searching units (retrieval stays on chunks) and embedding units at question time
(``app.retrieval.unit_vectors`` does that only for a text the index does not hold).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from core.contract import StoredChunk
from core.units import unit_embedding_texts, unit_key
from ingest.keyed_vectors import KeyedVectors

__all__ = ["UNITS_VERSION", "store_units", "unit_key", "unit_texts"]

# What the unit vectors were built with (``core.units.unit_embedding_text``): a change rebuilds the index.
UNITS_VERSION = "4"


def unit_texts(chunks: Iterable[StoredChunk]) -> list[str]:
    """Every distinct unit text of ``chunks``, as embedded."""
    return list(dict.fromkeys(t for c in chunks for t in unit_embedding_texts(c.text, c.kind, c.section)))


def store_units(table: KeyedVectors, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
    """Write the units' vectors under their keys (the length of each text as its one metadata field)."""
    table.put(
        [unit_key(t) for t in texts],
        [np.asarray(v, dtype=np.float32) for v in vectors],
        [{"chars": len(t)} for t in texts],
    )
