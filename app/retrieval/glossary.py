"""Bilingual query expansion from the domain glossary (app/retrieval/glossary.toml).

    >>> g = Glossary([["コントロールプレーン", "control plane"]])
    >>> g.expansions("How heavy is the control plane?")
    ['コントロールプレーン']

Matching is on NFKC-lower-cased text: Latin terms on word boundaries, Japanese terms as substrings.
Deliberately left out: morphological analysis and machine translation — a curated term list is
predictable, testable and fast.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

from core.text import normalize

GLOSSARY_PATH = Path(__file__).with_name("glossary.toml")


class Glossary:
    def __init__(self, groups: list[list[str]]):
        self.groups = [[normalize(t) for t in group] for group in groups if len(group) > 1]
        self._patterns = [[self._pattern(t) for t in group] for group in self.groups]

    @staticmethod
    def _pattern(term: str) -> re.Pattern[str]:
        if term.isascii():
            return re.compile(r"(?<![a-z0-9])" + re.escape(term) + r"(?![a-z0-9])")
        return re.compile(re.escape(term))

    def expansions(self, text: str) -> list[str]:
        """Terms from the groups that ``text`` mentions, excluding the ones it already contains."""
        norm = normalize(text)
        out: list[str] = []
        for group, patterns in zip(self.groups, self._patterns, strict=True):
            if any(p.search(norm) for p in patterns):
                out.extend(t for t, p in zip(group, patterns, strict=True) if not p.search(norm) and t not in out)
        return out

    def matched_groups(self, text: str) -> list[list[str]]:
        """The groups ``text`` mentions (each as all its terms), longest matching term first."""
        norm = normalize(text)
        found: list[tuple[int, list[str]]] = []
        for group, patterns in zip(self.groups, self._patterns, strict=True):
            lengths = [len(t) for t, p in zip(group, patterns, strict=True) if p.search(norm)]
            if lengths:
                found.append((max(lengths), group))
        return [group for _, group in sorted(found, key=lambda pair: -pair[0])]

    def expand(self, text: str) -> str:
        extra = self.expansions(text)
        return f"{text} {' '.join(extra)}" if extra else text


@lru_cache(maxsize=4)
def load_glossary(path: Path = GLOSSARY_PATH) -> Glossary:
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    return Glossary([[str(t) for t in group] for group in data.get("groups", [])])
