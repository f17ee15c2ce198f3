"""Unit vectors for the answer step: the live generation's, held by the snapshot, and the few it lacks.

Ingest embeds every evidence unit once (``ingest.unit_vectors``); a snapshot holds them in memory as one
normalised matrix (a few MB for this corpus). A unit text the index does not hold (a passage that was joined
to the chunk after it, an index built before unit vectors) is embedded here, once, and remembered.

Deliberately left out: searching units (retrieval is by chunk) and deciding what the cosines mean (the fitted
selector weighs them, ``app.answer.features``).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from core.numeric import normalise_rows
from core.units import unit_key

if TYPE_CHECKING:
    from ingest.embeddings import AdvisorEmbeddings
    from ingest.store import Store

log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class UnitTable:
    """A generation's unit vectors: key → row of a normalised matrix."""

    rows: dict[str, int] = field(default_factory=dict)
    matrix: Matrix = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))

    @classmethod
    def load(cls, store: Store, generation: str) -> UnitTable:
        table = store.unit_vectors(generation)
        if table is None:
            log.warning(
                "index generation %s has no unit vectors: answers embed them one by one; run `ingest`", generation
            )
            return cls()
        keys, matrix = table.vectors()
        return cls({k: i for i, k in enumerate(keys)}, normalise_rows(matrix).astype(np.float32))


class UnitVectors:
    """Unit vectors for the answer step: from the snapshot's table, else embedded once and remembered."""

    MEMO = 2048  # unit texts the index did not hold

    def __init__(self, embeddings: AdvisorEmbeddings):
        self.embeddings = embeddings
        self._memo: OrderedDict[str, Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, table: UnitTable, texts: Sequence[str]) -> Matrix:
        """One normalised row per text, in order."""
        keys = [unit_key(t) for t in texts]
        with self._lock:
            todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in table.rows and k not in self._memo}
        # this call's own rows are read from here, so a memo that drops them meanwhile loses nothing
        fresh: dict[str, Matrix] = {}
        if todo:
            embedded = normalise_rows(np.asarray(self.embeddings.embed_documents(list(todo.values()))))
            fresh = dict(zip(todo, embedded.astype(np.float32), strict=True))
            with self._lock:
                self._memo.update(fresh)
                while len(self._memo) > self.MEMO:
                    self._memo.popitem(last=False)
        rows = []
        with self._lock:
            for k in keys:
                row = fresh.get(k)
                if row is None:
                    row = self._memo.get(k)
                rows.append(table.matrix[table.rows[k]] if row is None else row)
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
