"""Unit vectors in the answer step: from the snapshot's table, and a text the index does not hold is embedded
once and remembered (fake embedder, no index)."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import FakeEmbeddings

from app.retrieval.unit_vectors import UnitTable, UnitVectors
from core.numeric import normalise_rows
from core.units import unit_key


def table_of(texts: list[str]) -> UnitTable:
    vectors = normalise_rows(FakeEmbeddings().embed_documents(texts)).astype(np.float32)
    return UnitTable({unit_key(t): i for i, t in enumerate(texts)}, vectors)


def test_indexed_units_come_from_the_table_and_others_are_embedded_once() -> None:
    embeddings = FakeEmbeddings()
    table = table_of(["Jobs\nThe default queue is gpu.", "Jobs\nA job holds four nodes."])
    units = UnitVectors(embeddings)
    texts = ["Jobs\nA job holds four nodes.", "Other\nNot in the index.", "Jobs\nThe default queue is gpu."]
    rows = units.vectors(table, texts)
    assert embeddings.calls == 1  # only the text the index does not hold
    expected = normalise_rows(FakeEmbeddings().embed_documents(texts))
    assert rows.shape == (3, expected.shape[1])
    assert np.allclose(rows, expected, atol=1e-6)
    units.vectors(table, texts)
    assert embeddings.calls == 1  # remembered


def test_the_memo_of_unindexed_units_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(UnitVectors, "MEMO", 2)
    embeddings = FakeEmbeddings()
    units = UnitVectors(embeddings)
    for text in ("a one", "b two", "c three"):
        units.vectors(UnitTable(), [text])
    units.vectors(UnitTable(), ["c three"])  # kept
    units.vectors(UnitTable(), ["a one"])  # dropped: embedded again
    assert embeddings.calls == 4


def test_a_call_keeps_the_rows_it_embedded_when_the_memo_drops_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(UnitVectors, "MEMO", 1)
    texts = ["a one", "b two", "c three"]
    rows = UnitVectors(FakeEmbeddings()).vectors(UnitTable(), texts)
    assert np.allclose(rows, normalise_rows(FakeEmbeddings().embed_documents(texts)), atol=1e-6)
