"""Translation companions: link each one to its original, check they still correspond, align sections.

A companion (``translation_of: <doc id>``, ``source_sha256: <sha256 of the original's body>``) follows
its original's headings, lists and tables one to one, so section N of the translation is section N of
the original. Linking checks the original exists and the structure matches (a mismatch is a per-file
error, like any bad document), records which translation section is which original section, and
reports a companion as *stale* when its original's body no longer has the hash it was translated from.
A stale companion still answers; it is flagged.

Deliberately left out: translating (``ingest.translator.writer``) and anything about chunks or vectors.

    >>> section_paths("# T\\n\\n## 1. A\\n\\n### x\\n\\n## 2. B")
    ['', '1. A', '1. A > x', '2. B']
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from ingest.chunking import headings, parse_blocks
from ingest.documents import Document

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")


class LinkProblem(BaseModel):
    """Why a companion cannot be used (the document's path and a reason a person can act on)."""

    path: str
    reason: str


class Linked(BaseModel):
    """The corpus after linking: usable documents, the companions that failed, and the stale ones."""

    documents: list[Document]
    problems: list[LinkProblem] = Field(default_factory=list)
    stale: list[str] = Field(default_factory=list, description="Ids of companions whose original changed.")


def section_paths(body: str) -> list[str]:
    """The section path of every heading, in order, as the chunker writes them (a single H1 dropped)."""
    found = headings(body)
    skip_h1 = sum(1 for level, _ in found if level == 1) == 1
    path: list[tuple[int, str]] = []
    out: list[str] = []
    for level, title in found:
        while path and path[-1][0] >= level:
            path.pop()
        if not (skip_h1 and level == 1):
            path.append((level, title or "#" * level))
        out.append(" > ".join(t for _, t in path))
    return out


def _shape(body: str) -> list[tuple[int, list[str]]]:
    """Per heading (level, [structural blocks]): lists by their item count, tables by their rows, code.

    Paragraphs are left out: a translator may join or split sentences, but not lists, rows or headings.
    """
    levels = [level for level, _ in headings(body)]
    paths = section_paths(body)
    blocks = parse_blocks(body, drop_single_h1=True)
    shape: list[tuple[int, list[str]]] = []
    for level, path in zip(levels, paths, strict=True):
        kinds = []
        for b in blocks:
            if b.section != path:
                continue
            if b.kind == "list":
                kinds.append(f"list item ({sum(1 for ln in b.text.splitlines() if _ITEM.match(ln))} with sub-items)")
            elif b.kind == "table":
                kinds.append(f"table ({sum(1 for ln in b.text.splitlines() if ln.strip())} lines)")
            elif b.kind == "code":
                kinds.append("code block")
        shape.append((level, kinds))
    return shape


def structure_problem(translation: str, original: str) -> str | None:
    """What differs between the two bodies' section structure, or None when they correspond."""
    mine, theirs = _shape(translation), _shape(original)
    if len(mine) != len(theirs):
        return f"it has {len(mine)} headings, the original {len(theirs)}"
    names = section_paths(translation)
    for i, ((level, kinds), (o_level, o_kinds)) in enumerate(zip(mine, theirs, strict=True), start=1):
        where = f"section {i} ('{names[i - 1] or '(top)'}')"
        if level != o_level:
            return f"{where} is a level-{level} heading here, level {o_level} in the original"
        if kinds != o_kinds:
            return (
                f"{where} holds {', '.join(kinds) or 'no list or table'}; the original {', '.join(o_kinds) or 'none'}"
            )
    return None


def link(documents: Sequence[Document]) -> Linked:
    """Validate every companion against its original and give it its section map (pure)."""
    by_id = {d.id: d for d in documents}
    usable: list[Document] = []
    problems: list[LinkProblem] = []
    stale: list[str] = []
    for doc in documents:
        if not doc.translation_of:
            usable.append(doc)
            continue
        original = by_id.get(doc.translation_of)
        reason = None
        if original is None:
            reason = f"translation_of '{doc.translation_of}' names no document in the corpus"
        elif original.translation_of:
            reason = f"translation_of '{doc.translation_of}' is itself a translation; name the original"
        elif not _SHA256.match(doc.source_sha256):
            reason = "source_sha256 must be the 64-hex-digit SHA-256 of the original's body"
        else:
            mismatch = structure_problem(doc.body, original.body)
            if mismatch:
                reason = f"section structure does not match '{original.id}': {mismatch}"
        if reason is not None or original is None:
            problems.append(LinkProblem(path=doc.path or doc.id, reason=reason or "unlinked"))
            continue
        sections = dict(zip(section_paths(doc.body), section_paths(original.body), strict=True))
        sections[""] = ""
        usable.append(doc.model_copy(update={"section_map": sections}))
        if doc.source_sha256 != original.body_sha256:
            stale.append(doc.id)
    return Linked(documents=usable, problems=problems, stale=sorted(stale))
