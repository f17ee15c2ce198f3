"""Test doubles shared by the tests: a deterministic fake embedder.

``FakeEmbeddings`` turns text into a hashed bag of words and character bigrams, so texts sharing words get
similar vectors and retrieval tests behave sensibly without a model. tests/conftest.py registers it as the
embedding backend ``"fake"``; a subprocess (which does not load conftest) names it by import path,
``ADVISOR_EMBEDDING_BACKEND=fakes:FakeEmbeddings``, with tests/ on ``PYTHONPATH`` (conftest exports it).

Deliberately left out: any notion of meaning (synonyms, translations) and a token limit (``fits`` is always True).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re

from ingest.embeddings import AdvisorEmbeddings


class FakeEmbeddings(AdvisorEmbeddings):
    """Deterministic hashed bag of words and character bigrams; only for fast tests.

    >>> fake = FakeEmbeddings(dim=8)
    >>> fake.embed_query("gateway") == fake.embed_documents(["Gateway"])[0], fake.calls
    (True, 1)
    """

    def __init__(self, dim: int = 128) -> None:
        self.dim = dim
        self.spec = f"fake:{dim}"
        self.calls = 0  # texts embedded so far, so tests can assert "nothing re-embedded"

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        lowered = text.lower()
        features = re.findall(r"[a-z0-9]+", lowered)
        cjk = [ch for ch in lowered if ord(ch) > 0x3000]
        features += ["".join(pair) for pair in itertools.pairwise(cjk)]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            vec[int.from_bytes(digest[:4], "little") % self.dim] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)
