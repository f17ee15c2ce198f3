"""Typo repair for questions (pure): a Latin word that is neither in the knowledge base nor an English
word, and is one edit (two for long words) from a word the knowledge base uses, is replaced by that
word ("Kuberentes" → "kubernetes", "framworks" → "frameworks").

Only words of five letters or more are touched, so short names (LSF, PBS) stay unknown and can still
be refused; real English words ("nothing", "Spectrum") are never "corrected" into corpus words; the
English word list comes with pyspellchecker (bundled, nothing downloaded). Japanese text is left
alone: Sudachi already normalises its spelling variants.

    >>> correct("Kuberentes nodes", {"kubernetes": 40, "nodes": 90})
    'kubernetes nodes'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from functools import lru_cache

_WORD = re.compile(r"(?<![A-Za-z0-9_.-])[A-Za-z]{5,}(?![A-Za-z0-9_.-])")
_LOWER_WORD = re.compile(r"[a-z]{5,}")


def edits(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a swap of two neighbours is one edit), stopping early once
    it exceeds ``limit``."""
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1]


def budget(word: str) -> int:
    """Edits allowed for a word of this length (none under five letters: too many real short words)."""
    return 0 if len(word) < 5 else 1 if len(word) < 10 else 2


def closest(word: str, vocabulary: Collection[str], frequency: Mapping[str, int] | None = None) -> str | None:
    """The vocabulary word within ``budget(word)`` edits, most frequent first; None when there is none."""
    limit = budget(word)
    if not limit:
        return None
    best: tuple[int, int, str] | None = None
    for known in vocabulary:
        if abs(len(known) - len(word)) > limit or known[:1] != word[:1] or not known.isascii():
            continue
        distance = edits(word, known, limit)
        if distance <= limit:
            rank = (distance, -(frequency or {}).get(known, 0), known)
            best = rank if best is None or rank < best else best
    return best[2] if best else None


def word_counts(texts: Iterable[str]) -> dict[str, int]:
    """Lower-cased Latin words of five letters or more, with how often the texts use them."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_LOWER_WORD.findall(text.lower()))
    return dict(counts)


@lru_cache(maxsize=1)
def _english() -> Callable[[str], bool]:
    from spellchecker import SpellChecker  # imported lazily: 0.1 s, only when a question needs it

    checker = SpellChecker(language="en", distance=1)
    return lambda word: word in checker


def is_english(word: str) -> bool:
    return _english()(word)


def correct(text: str, vocabulary: Mapping[str, int], is_word: Callable[[str], bool] | None = None) -> str:
    """``text`` with misspelt Latin words replaced by the knowledge base's own spelling.

    ``vocabulary`` maps the knowledge base's lower-case words to their counts (``word_counts``);
    ``is_word`` says whether a word is real English (default: pyspellchecker's list)."""
    known = is_word or is_english

    def fix(match: re.Match[str]) -> str:
        word = match.group()
        lower = word.lower()
        if lower in vocabulary or known(lower):
            return word
        return closest(lower, vocabulary.keys(), vocabulary) or word

    return _WORD.sub(fix, text)
