"""Structure-aware Markdown chunking (pure functions, no models).

A body is parsed into blocks (paragraph, list item, table, code fence, quote) under a heading path,
then blocks of one section are packed into chunks of at most ``max_chars`` characters that also pass
an optional ``fits`` check (the embedder's token limit). Blocks are never cut unless a single block is
too big on its own; then a table is cut between rows with its header repeated, a list item between
its lines (sub-items), a paragraph between sentences (Japanese 。！？ and English .!?), a code block
between lines with its fence repeated, and only as a last resort a line mid-way.

Deliberately left out: overlap between chunks (sections and contextual headers already give context),
and headings inside the chunk text (they travel as ``section``).

    >>> [c.section for c in chunk_markdown("# A\\n\\ntext\\n\\n## B\\n\\n| h |\\n|---|\\n| 1 |", 500)]
    ['', 'B']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.text import split_sentences

CHUNKER_VERSION = "md-structure-5"  # bump whenever the same body can chunk differently

# A closing run of #s only counts when a space precedes it (CommonMark), so "## Using C#" keeps its "#".
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])\s+")
_TABLE_ROW = re.compile(r"^\s*\|")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")

Fits = Callable[[str], bool]
# A splitter cuts text into (separator, piece) pairs that concatenate back to it; a separator is
# whitespace that may be dropped where a chunk boundary falls (the line break between two lines).
Splitter = Callable[[str], list[tuple[str, str]]]


@dataclass(frozen=True)
class Block:
    """A structural unit of Markdown: never split when it fits in a chunk."""

    kind: str  # "text", "list", "table", "code", "quote"
    text: str
    section: str


@dataclass(frozen=True)
class RawChunk:
    section: str
    text: str
    kind: str


def headings(body: str) -> list[tuple[int, str]]:
    """(level, title) of every heading outside code fences, in order.

    >>> headings("# T\\n\\n```sh\\n# not a heading\\n```\\n## Using C#\\n### Done ###")
    [(1, 'T'), (2, 'Using C#'), (3, 'Done')]
    """
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for line in body.splitlines():
        if fence is not None:
            if line.strip().startswith(fence):  # same closing rule as parse_blocks
                fence = None
        elif opening := _FENCE.match(line):
            fence = opening.group(1)
        elif m := _HEADING.match(line):
            found.append((len(m.group(1)), m.group(2).strip()))
    return found


def parse_blocks(body: str, drop_single_h1: bool = False) -> list[Block]:
    """Split a Markdown body into blocks, each tagged with its heading path (e.g. 'A > B').

    With ``drop_single_h1``, a document's only H1 (its title, already shown as the document) is
    left out of the paths, so sections read '4. 運用 > 構築' rather than 'Title > 4. 運用 > 構築'.

    >>> [(b.kind, b.section) for b in parse_blocks("# T\\n\\n## A\\n\\n- x\\n- y\\n\\n> q\\n\\ntext", True)]
    [('list', 'A'), ('list', 'A'), ('quote', 'A'), ('text', 'A')]
    """
    lines = body.splitlines()
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    skip_h1 = drop_single_h1 and sum(1 for level, _ in headings(body) if level == 1) == 1
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        heading = None if _FENCE.match(line) else _HEADING.match(line)
        if heading:
            _enter_heading(path, len(heading.group(1)), heading.group(2).strip(), skip_h1)
            i += 1
            continue
        kind, end = _next_block(lines, i)
        text = "\n".join(lines[i:end]).strip("\n")
        if text.strip():
            blocks.append(Block(kind, text, " > ".join(title for _, title in path)))
        i = end
    return blocks


def _enter_heading(path: list[tuple[int, str]], level: int, title: str, skip_h1: bool) -> None:
    """Update the heading path in place: a heading closes every open section of its level or deeper."""
    while path and path[-1][0] >= level:
        path.pop()
    if not (skip_h1 and level == 1):
        path.append((level, title or "#" * level))


def _next_block(lines: list[str], i: int) -> tuple[str, int]:
    """(kind, end) of the block starting at non-blank, non-heading line ``i``; it spans ``lines[i:end]``."""
    line = lines[i]
    if fence := _FENCE.match(line):
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence.group(1)):
            j += 1
        return "code", j + 1  # the closing fence belongs to the block
    if _TABLE_ROW.match(line):
        return "table", _run_end(lines, i, _TABLE_ROW.match)
    if item := _LIST_ITEM.match(line):
        return "list", _list_item_end(lines, i, len(item.group(1)))
    if _is_quote(line):
        return "quote", _run_end(lines, i, _is_quote)
    j = i + 1
    while j < len(lines) and not _ends_paragraph(lines[j]):
        j += 1
    return "text", j


def _is_quote(line: str) -> bool:
    return line.lstrip().startswith(">")


def _ends_paragraph(line: str) -> bool:
    return (
        not line.strip()
        or bool(_HEADING.match(line) or _FENCE.match(line) or _TABLE_ROW.match(line) or _LIST_ITEM.match(line))
        or _is_quote(line)
    )


def _run_end(lines: list[str], i: int, member: Callable[[str], object]) -> int:
    """End of the run of consecutive lines from ``i`` that ``member`` accepts."""
    j = i
    while j < len(lines) and member(lines[j]):
        j += 1
    return j


def _list_item_end(lines: list[str], i: int, indent: int) -> int:
    """End of the list item at line ``i``: one item with its continuation lines and nested sub-items."""
    j = i + 1
    while j < len(lines):
        nxt = lines[j]
        if not nxt.strip():
            # A blank line ends the item unless an indented continuation follows.
            if j + 1 < len(lines) and lines[j + 1].startswith(" " * (indent + 2)) and lines[j + 1].strip():
                j += 1
                continue
            break
        sub = _LIST_ITEM.match(nxt)
        if sub and len(sub.group(1)) <= indent:
            break
        if _HEADING.match(nxt) or _FENCE.match(nxt) or (_TABLE_ROW.match(nxt) and not nxt.startswith(" ")):
            break
        j += 1
    return j


def _ok(text: str, max_chars: int, fits: Fits | None) -> bool:
    return len(text) <= max_chars and (fits is None or fits(text))


def _hard_split(text: str, max_chars: int, fits: Fits | None) -> Iterator[str]:
    """Last resort for one over-long sentence: cut at the longest prefix that fits."""
    while text:
        # No prefix longer than max_chars can fit: bounding the search keeps huge lines linear.
        lo, hi = 1, min(len(text), max_chars)
        while lo < hi:  # binary search for the longest fitting prefix
            mid = (lo + hi + 1) // 2
            if _ok(text[:mid], max_chars, fits):
                lo = mid
            else:
                hi = mid - 1
        yield text[:lo]
        text = text[lo:]


def _split_oversized(block: Block, max_chars: int, fits: Fits | None) -> list[str]:
    """Cut one block that does not fit on its own into fitting pieces of the same kind."""
    if block.kind == "table":
        rows = block.text.split("\n")
        has_sep = len(rows) > 1 and bool(_TABLE_SEP.match(rows[1]))
        header = rows[:2] if has_sep else rows[:1]
        body_rows = rows[len(header) :]
        if body_rows and not _ok("\n".join([*header, body_rows[0]]), max_chars, fits):
            # A wide table padded for alignment: the padding is layout, not text. Without it the header
            # and a row fit together, instead of a chunk of bare header and rows cut loose from it.
            header = [_compact_row(r) for r in header]
            body_rows = [_compact_row(r) for r in body_rows]
        return _pack_lines(body_rows, header, max_chars, fits)
    if block.kind == "code":
        rows = block.text.split("\n")
        opening = rows[:1]
        closing = rows[-1:] if len(rows) > 1 and _FENCE.match(rows[-1]) else []
        inner = rows[1 : len(rows) - len(closing)]
        return _pack_lines(inner, opening, max_chars, fits, closing)
    # A list is cut between its lines (sub-items) first, prose between sentences first; each falls
    # back to the other boundary, and only then to a cut inside a line.
    splitters: list[Splitter] = [_lines, _sentences] if block.kind == "list" else [_sentences, _lines]
    return _pack_pieces(_cut(block.text, splitters, max_chars, fits), max_chars, fits)


_PADDING = re.compile(r" {2,}")
_DASHES = re.compile(r"-{3,}")


def _compact_row(row: str) -> str:
    """A table row without its alignment padding ("| a     |" → "| a |", "|------|" → "|---|")."""
    return _DASHES.sub("---", _PADDING.sub(" ", row))


def _lines(text: str) -> list[tuple[str, str]]:
    # Block text is lines joined by "\n" (see parse_blocks), so this split is exact.
    return [("\n" if i else "", line) for i, line in enumerate(text.split("\n"))]


def _sentences(text: str) -> list[tuple[str, str]]:
    return [("", sentence) for sentence in split_sentences(text)]


def _cut(text: str, splitters: list[Splitter], max_chars: int, fits: Fits | None) -> list[tuple[str, str]]:
    """(separator, piece) pairs whose pieces each fit, cut at the coarsest boundary that works."""
    if _ok(text, max_chars, fits):
        return [("", text)]
    if not splitters:
        return [("", piece) for piece in _hard_split(text, max_chars, fits)]
    pieces: list[tuple[str, str]] = []
    for sep, part in splitters[0](text):
        cut = _cut(part, splitters[1:], max_chars, fits)
        if cut:
            cut[0] = (sep + cut[0][0], cut[0][1])
        pieces.extend(cut)
    return pieces


def _pack_lines(
    rows: list[str], header: list[str], max_chars: int, fits: Fits | None, footer: list[str] | None = None
) -> list[str]:
    """Pack lines into pieces that each start with ``header`` (a table header or a code fence)."""
    footer = footer or []
    out: list[str] = []
    current: list[str] = []
    for row in rows:
        candidate = "\n".join([*header, *current, row, *footer])
        if current and not _ok(candidate, max_chars, fits):
            out.append("\n".join([*header, *current, *footer]))
            current = []
        current.append(row)
    if current or not out:
        out.append("\n".join([*header, *current, *footer]))
    # A single row longer than the limit is cut as text: rare, but nothing may be truncated.
    result: list[str] = []
    for piece in out:
        if _ok(piece, max_chars, fits):
            result.append(piece)
        else:
            result.extend(_hard_split(piece, max_chars, fits))
    return result


def _pack_pieces(pieces: list[tuple[str, str]], max_chars: int, fits: Fits | None) -> list[str]:
    """Greedily join pieces (with their separators) into the fewest fitting texts."""
    out: list[str] = []
    current = ""
    for sep, piece in pieces:
        candidate = current + sep + piece if current else piece
        if current and not _ok(candidate, max_chars, fits):
            out.append(current)
            current = piece
        else:
            current = candidate
    if current:
        out.append(current)
    return out


def _kind_of(kinds: list[str]) -> str:
    for preferred in ("table", "code", "list"):
        if preferred in kinds:
            return preferred
    return kinds[0] if kinds else "text"


def chunk_markdown(
    body: str,
    max_chars: int = 600,
    min_chars: int = 120,
    fits: Fits | None = None,
    drop_single_h1: bool = True,
    prefix: Callable[[str], str] | None = None,
) -> list[RawChunk]:
    """Chunk a Markdown body into section-scoped pieces that each satisfy the size limits.

    ``prefix(section)`` is the text embedded in front of every chunk of that section (a contextual
    header); ``fits`` then judges prefix + chunk, since the model sees both. ``max_chars`` counts the
    chunk alone.
    """
    chunks: list[RawChunk] = []
    blocks = parse_blocks(body, drop_single_h1)
    i = 0
    while i < len(blocks):
        section = blocks[i].section
        group: list[Block] = []
        while i < len(blocks) and blocks[i].section == section:
            group.append(blocks[i])
            i += 1
        section_fits = _prefixed(fits, prefix(section)) if fits is not None and prefix is not None else fits
        chunks.extend(_pack_section(group, section, max_chars, min_chars, section_fits))
    return chunks


def _prefixed(fits: Fits, head: str) -> Fits:
    return lambda text: fits(head + text)


def _pack_section(
    blocks: list[Block], section: str, max_chars: int, min_chars: int, fits: Fits | None
) -> list[RawChunk]:
    units: list[tuple[str, str]] = []  # (kind, text) pieces that each fit on their own
    for block in blocks:
        if _ok(block.text, max_chars, fits):
            units.append((block.kind, block.text))
        else:
            # A cut can leave a piece of pure whitespace (e.g. the tail of an indented line): never a chunk.
            pieces = _split_oversized(block, max_chars, fits)
            units.extend((block.kind, piece) for piece in pieces if piece.strip())
    out: list[RawChunk] = []
    texts: list[str] = []
    kinds: list[str] = []
    for kind, text in units:
        candidate = "\n\n".join([*texts, text])
        # Start a new chunk when the limit is hit, or when a table/code block would join a chunk that
        # is already big enough: keeping them separate makes each one quotable on its own.
        separate = kind in ("table", "code") and len("\n\n".join(texts)) >= min_chars
        if texts and (not _ok(candidate, max_chars, fits) or separate):
            out.append(RawChunk(section, "\n\n".join(texts), _kind_of(kinds)))
            texts, kinds = [], []
        texts.append(text)
        kinds.append(kind)
    if texts:
        tail = "\n\n".join(texts)
        merged = out[-1].text + "\n\n" + tail if out else ""
        if out and len(tail) < min_chars and _ok(merged, max_chars, fits):
            out[-1] = RawChunk(section, merged, _kind_of([out[-1].kind, *kinds]))
        else:
            out.append(RawChunk(section, tail, _kind_of(kinds)))
    return out
