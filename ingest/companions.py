"""Translation companions: link each one to its original, check they still correspond, align sections.

A companion (``translation_of: <doc id>``, ``source_sha256: <sha256 of the original's body>``) follows
its original's headings, lists and tables one to one, so section N of the translation is section N of
the original. Linking checks the original exists and records which translation section is which
original section.

A *current* companion (its ``source_sha256`` is the original's body hash) must match the original's
structure exactly: a mismatch is a translation bug, reported per file like any bad document. A *stale*
companion (the original changed since it was translated) is expected to differ: sections are aligned
where they still match (``align``: by heading path, then by position), the rest of the companion is
*unaligned* and left out of the index, and everything else is ingested. The original's new sections then
answer in the original's language until ``ingest --translate`` rewrites the companion.

Deliberately left out: translating (``ingest.translator.writer``), anything about chunks or vectors, and
aligning by meaning (no model: a renumbered heading can anchor the wrong section if its shape matches).

    >>> section_paths("# T\\n\\n## 1. A\\n\\n### x\\n\\n## 2. B")
    ['', '1. A', '1. A > x', '2. B']
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from core import markdown as md
from ingest.chunking import headings, parse_blocks
from ingest.documents import Document

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# A heading's number survives translation ("2. 推奨シナリオ" / "2. Recommended scenarios", "①" / "(1)").
_NUMBER = re.compile(r"^[(]?(\d+(?:\.\d+)*)(?:[.):]|\s|$)")
_CIRCLED = {chr(0x2460 + i): str(i + 1) for i in range(20)}  # ① … ⑳


class LinkProblem(BaseModel):
    """Why a companion cannot be used (the document's path and a reason a person can act on)."""

    path: str
    reason: str


class Linked(BaseModel):
    """The corpus after linking: usable documents, the companions that failed, and the stale ones."""

    documents: list[Document]
    problems: list[LinkProblem] = Field(default_factory=list)
    stale: list[str] = Field(default_factory=list, description="Ids of companions whose original changed.")
    unaligned: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Stale companion id → its sections that match no section of the changed original (not indexed).",
    )


@dataclass(frozen=True)
class _Section:
    path: str  # as the chunker writes it
    level: int
    key: tuple[str, ...]  # per heading of the path: its number, else its normalised title
    kinds: tuple[str, ...]  # structural blocks: lists by item count, tables by rows, code
    below: int = 0  # headings nested under this one

    def fits(self, other: _Section) -> bool:
        """Same level, lists, tables, code and sub-headings: the shape a translation keeps."""
        return (self.level, self.kinds, self.below) == (other.level, other.kinds, other.below)


def section_paths(body: str) -> list[str]:
    """The section path of every heading, in order, as the chunker writes them (a single H1 dropped)."""
    return [path for path, _ in _paths_and_keys(body)]


def _label(title: str) -> str:
    """What of a heading survives translation: its number when it has one, else its normalised title.

    >>> _label("2. 推奨シナリオ"), _label("① TCO とリスク"), _label("Building")
    ('2', '1', 'building')
    """
    text = title.strip()
    if text[:1] in _CIRCLED:
        return _CIRCLED[text[0]]
    text = unicodedata.normalize("NFKC", text)  # full-width digits and brackets
    number = _NUMBER.match(text)
    return number.group(1).lower() if number else " ".join(text.casefold().split())


def _paths_and_keys(body: str) -> list[tuple[str, tuple[str, ...]]]:
    found = headings(body)
    skip_h1 = sum(1 for level, _ in found if level == 1) == 1
    path: list[tuple[int, str]] = []
    out: list[tuple[str, tuple[str, ...]]] = []
    for level, title in found:
        while path and path[-1][0] >= level:
            path.pop()
        if not (skip_h1 and level == 1):
            path.append((level, title or "#" * level))
        out.append((" > ".join(t for _, t in path), tuple(_label(t) for _, t in path)))
    return out


def _sections(body: str) -> list[_Section]:
    """Every heading's section: path, level, key and structural blocks.

    Paragraphs are left out of the shape: a translator may join or split sentences, but not lists, rows
    or headings.
    """
    blocks = parse_blocks(body, drop_single_h1=True)
    out: list[_Section] = []
    for (level, _), (path, key) in zip(headings(body), _paths_and_keys(body), strict=True):
        kinds = []
        for b in blocks:
            if b.section != path:
                continue
            if b.kind == "list":
                kinds.append(f"list item ({_items(b.text)} with sub-items)")
            elif b.kind == "table":
                kinds.append(f"table ({sum(1 for ln in b.text.splitlines() if ln.strip())} lines)")
            elif b.kind == "code":
                kinds.append("code block")
        out.append(_Section(path, level, key, tuple(kinds)))
    for i, s in enumerate(out):
        below = next((j for j in range(i + 1, len(out)) if out[j].level <= s.level), len(out)) - i - 1
        out[i] = _Section(s.path, s.level, s.key, s.kinds, below)
    return out


def _items(text: str) -> int:
    """The list items of one top-level item's text, nested items included, as the parser reads them: a
    '- x' line in a code block inside the item is code, not an item."""
    return sum(1 for b in md.walk(md.parse(text)) if b.kind == "item")


def structure_problem(translation: str, original: str) -> str | None:
    """What differs between the two bodies' section structure, or None when they correspond."""
    mine, theirs = _sections(translation), _sections(original)
    if len(mine) != len(theirs):
        return f"it has {len(mine)} headings, the original {len(theirs)}"
    for i, (s, o) in enumerate(zip(mine, theirs, strict=True), start=1):
        where = f"section {i} ('{s.path or '(top)'}')"
        if s.level != o.level:
            return f"{where} is a level-{s.level} heading here, level {o.level} in the original"
        if s.kinds != o.kinds:
            return (
                f"{where} holds {', '.join(s.kinds) or 'no list or table'}; the original {', '.join(o.kinds) or 'none'}"
            )
    return None


def align(translation: str, original: str) -> tuple[dict[str, str], list[str]]:
    """(translation section → original section for the sections that still match, the translation's other
    sections), for a companion whose original changed. Pure.

    Anchors first: sections whose heading key (its numbers, or the very same title) and level are the same
    on both sides and unique on each, in the same order on both. An anchor is aligned when its shape (lists,
    tables, code, sub-headings) matches too. Between two anchors, the sections pair by position where that
    is unambiguous: counted from the front and from the back, the same pairs come out.

    >>> align("## 1. A\\n\\n## 2. B\\n\\n## 3. C", "## 1. あ\\n\\n## 3. う\\n\\n## 4. え")
    ({'': '', '1. A': '1. あ', '3. C': '3. う'}, ['2. B'])
    """
    mine, theirs = _sections(translation), _sections(original)
    anchors = _anchors(mine, theirs)
    pairs = [(i, j) for i, j in anchors if mine[i].fits(theirs[j])]
    bounds = [(-1, -1), *anchors, (len(mine), len(theirs))]
    for (i0, j0), (i1, j1) in itertools.pairwise(bounds):
        pairs += _by_position(mine, theirs, list(range(i0 + 1, i1)), list(range(j0 + 1, j1)))
    mapping = {"": ""}
    for i, j in sorted(pairs):
        mapping.setdefault(mine[i].path, theirs[j].path)
    unaligned = [s.path for s in mine if s.path not in mapping]
    return mapping, list(dict.fromkeys(unaligned))


def _anchors(mine: Sequence[_Section], theirs: Sequence[_Section]) -> list[tuple[int, int]]:
    """Sections with the same unique key and level on both sides, the longest run in document order."""

    def unique(sections: Sequence[_Section]) -> dict[tuple[str, ...], int]:
        seen: dict[tuple[str, ...], int] = {}
        for i, s in enumerate(sections):
            seen[s.key] = -1 if s.key in seen else i
        return {k: i for k, i in seen.items() if i >= 0}

    ours, others = unique(mine), unique(theirs)
    candidates = sorted(
        (i, others[k]) for k, i in ours.items() if k in others and mine[i].level == theirs[others[k]].level
    )
    # longest subsequence increasing on the original's side too (candidates are few: O(n²) is fine)
    best: list[list[tuple[int, int]]] = []
    for n, (i, j) in enumerate(candidates):
        before = [best[m] for m in range(n) if candidates[m][1] < j]
        best.append([*max(before, key=len, default=[]), (i, j)])
    return max(best, key=len, default=[])


def _by_position(
    mine: Sequence[_Section], theirs: Sequence[_Section], ours: list[int], others: list[int]
) -> list[tuple[int, int]]:
    """Pairs of one gap between anchors that come out the same counted from the front and from the back."""

    def greedy(a: list[int], b: list[int]) -> set[tuple[int, int]]:
        n = min(len(a), len(b))
        head = 0
        while head < n and mine[a[head]].fits(theirs[b[head]]):
            head += 1
        tail = 0
        while tail < n - head and mine[a[-1 - tail]].fits(theirs[b[-1 - tail]]):
            tail += 1
        return {(a[k], b[k]) for k in range(head)} | {(a[-1 - k], b[-1 - k]) for k in range(tail)}

    return sorted(greedy(ours, others) & greedy(ours[::-1], others[::-1]))


def link(documents: Sequence[Document]) -> Linked:
    """Validate every companion against its original and give it its section map (pure)."""
    by_id = {d.id: d for d in documents}
    linked = Linked(documents=[])
    for doc in documents:
        if not doc.translation_of:
            linked.documents.append(doc)
            continue
        original = by_id.get(doc.translation_of)
        reason = None
        if original is None:
            reason = f"translation_of '{doc.translation_of}' names no document in the corpus"
        elif original.translation_of:
            reason = f"translation_of '{doc.translation_of}' is itself a translation; name the original"
        elif not _SHA256.match(doc.source_sha256):
            reason = "source_sha256 must be the 64-hex-digit SHA-256 of the original's body"
        elif doc.source_sha256 == original.body_sha256 and (mismatch := structure_problem(doc.body, original.body)):
            reason = f"section structure does not match '{original.id}': {mismatch}"
        if reason is not None or original is None:
            linked.problems.append(LinkProblem(path=doc.path or doc.id, reason=reason or "unlinked"))
            continue
        sections, unaligned = align(doc.body, original.body)
        linked.documents.append(doc.model_copy(update={"section_map": sections}))
        if doc.source_sha256 != original.body_sha256:
            linked.stale.append(doc.id)
        if unaligned:
            linked.unaligned[doc.id] = unaligned
    linked.stale.sort()
    return linked
