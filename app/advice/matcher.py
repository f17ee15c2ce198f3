"""Match situations to the index's decision rules with the embedder (cached per index generation).

``app.advice.verdict`` is pure; this module supplies it with what needs the model and the index: each rule
condition's vector (computed once per generation), the question's vector, and the rules in the
question's language (a translated document contributes one version of each rule).

Deliberately left out: the matching maths and the verdict itself (``app.advice.verdict``).
"""

from __future__ import annotations

import re
import threading

import numpy as np

from app.advice.verdict import MATCH_FLOOR, decide, match, one_version, situation_parts
from app.models import MatchedRule, Verdict
from app.retrieval.glossary import Glossary
from app.retrieval.snapshot import Snapshot
from core.contract import Rule
from ingest.embeddings import AdvisorEmbeddings

# "we ALSO need…", "…も", "さらに": the new turn adds to the earlier situation instead of replacing it.
ADDS = re.compile(
    r"\b(also|as well|too|in addition|additionally|on top of|later|at that point|afterwards|even so|still)\b"
    r"|さらに|加えて|併せて|あわせて|も同じ|もまとめて|それでも|その後|あとで|後で"
    r"|も(?:運用|やり|し|動かし|扱い)たい",
    re.I,
)


class RuleMatcher:
    def __init__(self, embeddings: AdvisorEmbeddings, glossary: Glossary) -> None:
        self.embeddings = embeddings
        self.glossary = glossary
        self._vectors: dict[str, np.ndarray] = {}
        self._generation = ""
        self._lock = threading.Lock()

    def _rule_vectors(self, snap: Snapshot) -> dict[str, np.ndarray]:
        with self._lock:
            if self._generation != snap.generation.name:
                conditions = [r.condition for r in snap.rules]
                vectors = np.asarray(self.embeddings.embed_documents(conditions)) if conditions else np.zeros((0, 1))
                norms = np.linalg.norm(vectors, axis=1, keepdims=True) if len(conditions) else 1.0
                unit = vectors / np.where(norms == 0, 1.0, norms)
                self._vectors = {r.id: unit[i] for i, r in enumerate(snap.rules)}
                self._generation = snap.generation.name
            return self._vectors

    def rules_for(self, language: str, snap: Snapshot) -> list[Rule]:
        translated = {c.doc_id: c.translation_of for c in snap.chunks.values() if c.translation_of}
        return one_version(snap.rules, language, translated)

    def scored(self, situation: str, language: str, snap: Snapshot) -> list[MatchedRule]:
        """Every rule (one version each) scored against ``situation``, best first."""
        rules = self.rules_for(language, snap)
        if not rules or not situation.strip():
            return []
        vectors = self._rule_vectors(snap)
        q = np.asarray(self.embeddings.embed_query(self.glossary.expand(situation)))
        q = q / (np.linalg.norm(q) or 1.0)
        sims = {r.id: float(vectors[r.id] @ q) for r in rules if r.id in vectors}
        return match(situation, rules, self.glossary.expand, snap.lexical.idf, sims)

    def verdict(self, focus: str, context: str, language: str, snap: Snapshot) -> Verdict:
        """The verdict for a selection question; a follow-up's own words decide when they match a rule,
        the earlier question fills in only when they do not."""
        scored = self.scored(focus, language, snap)
        situation, clauses = focus, situation_parts(focus)
        if context and (not scored or scored[0].score < MATCH_FLOOR or ADDS.search(focus)):
            # the earlier question's situation still holds: its clauses find their rules too
            situation, clauses = f"{focus} {context}", [*clauses, *situation_parts(context)]
            scored = self.scored(situation, language, snap)
        parts = [self.scored(c, language, snap) for c in clauses] if len(clauses) > 1 else []
        return decide(scored, situation, parts)
