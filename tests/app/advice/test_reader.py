"""app.advice.reader: the embedder reads a clause no cue phrase reads only when one facet value stands out
*and* the clause is as near it as the value descriptions are to one another (so an off-topic request whose
scores are uniformly low never gets a facet)."""

from __future__ import annotations

import numpy as np

from app.advice.reader import SituationReader, description_floor
from core.situation import facets

IN_DOMAIN = "our GPU nodes come and go with demand in the cloud"
OFF_TOPIC = "please recommend a good ramen shop near the station"


class ClusteredEmbeddings:
    """Value descriptions share one direction and differ a little; queries are set per clause."""

    def __init__(self) -> None:
        defs = facets()
        self.keys = [(f, v) for f in defs.order for v in defs.values[f]]
        self.dim = len(self.keys) + 2
        self.target = self.keys.index(("fleet", "elastic")) + 1

    def _unit(self, i: int, scale: float = 1.0) -> np.ndarray:
        v = np.zeros(self.dim)
        v[i] = scale
        return v

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        assert len(texts) == len(self.keys)
        return [(self._unit(0) + self._unit(i + 1, 0.5)).tolist() for i in range(len(texts))]

    def embed_query(self, text: str) -> list[float]:
        if text == IN_DOMAIN:  # near the shared direction, nearest to one value
            return (self._unit(0) + self._unit(self.target, 0.6)).tolist()
        # elsewhere, leaning a little towards the same value: it stands out, but everything is far
        return (self._unit(self.dim - 1) + self._unit(self.target, 0.3)).tolist()


def test_a_clause_near_one_description_is_read_and_an_off_topic_one_is_not() -> None:
    reader = SituationReader(ClusteredEmbeddings())  # type: ignore[arg-type]
    assert list(reader.similarity(IN_DOMAIN)) == [("fleet", "elastic")]
    assert reader.similarity(OFF_TOPIC) == {}  # stands out by z-score, but below the descriptions' floor
    assert reader.similarity("GPU nodes") == {}  # too short to read by similarity


def test_the_floor_is_a_low_percentile_of_the_descriptions_pairwise_cosines() -> None:
    vectors = np.array([[1.0, 0.0], [1.0, 0.1], [1.0, -0.1], [0.0, 1.0]])
    assert description_floor(vectors[:3]) > 0.97  # a tight cluster: a high floor
    assert description_floor(vectors) < 0.1  # one unrelated description pulls the low percentile down
    assert description_floor(vectors[:1]) == 0.0


def test_query_texts_are_the_texts_asks_platform_embeds() -> None:
    from fakes import FakeEmbeddings

    from app.advice import model

    fitted = model.load()
    assert fitted is not None, "the situation model ships with the app"

    class Recording(FakeEmbeddings):
        def __init__(self) -> None:
            super().__init__()
            self.spec = str(fitted.meta["embedder"])  # the fitted model's embedder: its similarity features count
            self.queried: list[str] = []

        def embed_query(self, text: str) -> list[float]:
            self.queried.append(text)
            return super().embed_query(text)

    embeddings = Recording()
    reader = SituationReader(embeddings)
    earlier = ["We train a 70B model on 512 GPUs; Slurm or Kubernetes?"]
    question = "and if the nodes are spot instances?"
    prepared = reader.query_texts(question, earlier)
    reader.asks_platform(question, earlier)
    assert embeddings.queried, "the fitted decision reads the embedder's choice similarity"
    assert set(embeddings.queried) <= set(prepared)
    assert set(reader.query_texts(question, earlier)) == {question, *earlier}  # clauses read once are not again
    assert SituationReader(FakeEmbeddings()).query_texts(question, earlier) == []  # another embedder: none
