"""When to refuse (pure): the knowledge base must support an answer, or we say so plainly.

Two signals, calibrated on the golden set's unanswerable cases:
- *support*: how well the best retrieved passages match the question — lexical coverage of its
  content words plus the embedder-calibrated dense similarity — ignoring retrieval rank, since
  something always ranks first;
- *unknown names*: product or model names the question is about that the corpus never mentions
  (``LSF``, ``HTCondor``, ``H100``, ``1.40``). Typos of known words are not unknown names.

    >>> unknown_names("Is LSF faster than Slurm?", {"slurm", "fast"})
    ['lsf']
"""

from __future__ import annotations

import re
from collections.abc import Collection

from app.text import tokenize

# Below this support nothing is answered; between it and SUPPORT_WITH_UNKNOWN a question that names
# something the corpus never mentions is refused too. Values from `evals` calibration (README).
MIN_SUPPORT = 0.38
SUPPORT_WITH_UNKNOWN = 0.59

# Names as people write them: ALLCAPS (LSF), CamelCase (HTCondor), or letters with digits (H100, v1.40).
_NAME = re.compile(r"\b(?:[A-Z]{2,}[A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*|[A-Za-z]*\d+(?:\.\d+)*[A-Za-z]*)\b")


def _close(word: str, vocabulary: Collection[str]) -> bool:
    """True when ``word`` is one or two edits from a vocabulary word (a typo, not a new name)."""
    if len(word) < 5:
        return False
    budget = 1 if len(word) < 8 else 2
    for known in vocabulary:
        if abs(len(known) - len(word)) <= budget and known[:1] == word[:1] and _edits(word, known, budget) <= budget:
            return True
    return False


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, stopping early once it exceeds ``limit``."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def unknown_names(question: str, vocabulary: Collection[str]) -> list[str]:
    """Names in ``question`` that no indexed chunk contains (lower-cased, in order)."""
    out: list[str] = []
    for match in _NAME.finditer(question):
        tokens = [t for t in tokenize(match.group()) if not t.isdigit()]
        if not tokens or any(t in vocabulary for t in tokens) or tokens[0] in out:
            continue
        if not _close(tokens[0], vocabulary):
            out.append(tokens[0])
    return out


def should_refuse(support: float, unknown: list[str]) -> bool:
    return support < MIN_SUPPORT or (bool(unknown) and support < SUPPORT_WITH_UNKNOWN)
