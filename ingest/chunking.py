"""Structure-aware Markdown chunking (pure functions, no models).

A body is read by ``core.markdown`` into blocks (paragraph, list item with everything inside it, table,
code block, quote) under a heading path, then blocks of one section are packed into chunks of at most
``max_chars`` characters that also pass an optional ``fits`` check (the embedder's token limit). Every
block is a verbatim slice of the body. Blocks are never cut unless a single block is too big on its
own; then a list item or quote holding code or a table is first cut around them, a table is cut
between rows with its header repeated, a list item between its lines (sub-items), a paragraph between
sentences (Japanese 。！？ and English .!?), a code block between lines with its fences repeated, and
only as a last resort a line mid-way. A paragraph that ends by announcing what follows ("…with the following
flags:") goes into the chunk of the code block, table or list it announces.

Deliberately left out: overlap between chunks (sections and contextual headers already give context),
and headings inside the chunk text (they travel as ``section``).

    >>> [c.section for c in chunk_markdown("# A\\n\\ntext\\n\\n## B\\n\\n| h |\\n|---|\\n| 1 |", 500)]
    ['', 'B']
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core import markdown as md
from core.text import split_sentences
from core.units import announces

CHUNKER_VERSION = "md-structure-7"  # bump whenever the same body can chunk differently

Fits = Callable[[str], bool]
# A splitter cuts text into (separator, piece) pairs that concatenate back to it; a separator is
# whitespace that may be dropped where a chunk boundary falls (the line break between two lines).
Splitter = Callable[[str], list[tuple[str, str]]]

# The chunk kind of each top-level Markdown block; anything else (HTML, a rule, a link definition) is text.
_KINDS = {"list": "list", "table": "table", "code": "code", "quote": "quote"}


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


def _is_section(block: md.Block) -> bool:
    """A heading that opens a section: an ATX heading with a title. An empty heading names nothing, and a
    setext underline is kept as text (in converted pages a "---" under a line is far more often a rule)."""
    return block.kind == "heading" and not block.is_setext and bool(block.text)


def headings(body: str) -> list[tuple[int, str]]:
    """(level, title) of every section heading (top-level ATX headings; '# x' in code is code), in order.

    >>> headings("# T\\n\\n```sh\\n# not a heading\\n```\\n## Using C#\\n### Done ###")
    [(1, 'T'), (2, 'Using C#'), (3, 'Done')]
    """
    return [(b.level, b.text) for b in md.parse(body) if _is_section(b)]


def parse_blocks(body: str, drop_single_h1: bool = False) -> list[Block]:
    """Split a Markdown body into blocks, each tagged with its heading path (e.g. 'A > B').

    A list gives one block per top-level item (with its continuation lines and nested items); every
    block's text is a verbatim slice of ``body``. With ``drop_single_h1``, a document's only H1 (its
    title, already shown as the document) is left out of the paths, so sections read '4. 運用 > 構築'
    rather than 'Title > 4. 運用 > 構築'.

    >>> [(b.kind, b.section) for b in parse_blocks("# T\\n\\n## A\\n\\n- x\\n- y\\n\\n> q\\n\\ntext", True)]
    [('list', 'A'), ('list', 'A'), ('quote', 'A'), ('text', 'A')]
    """
    top = md.parse(body)
    offsets = md.line_offsets(body)
    skip_h1 = drop_single_h1 and sum(1 for b in top if _is_section(b) and b.level == 1) == 1
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    for block in top:
        if _is_section(block):
            _enter_heading(path, block.level, block.text, skip_h1)
            continue
        section = " > ".join(title for _, title in path)
        for part in block.children if block.kind == "list" else (block,):
            text = md.source(body, part.start, part.end, offsets)
            if text.strip():
                blocks.append(Block(_KINDS.get(block.kind, "text"), text, section))
    return blocks


def _enter_heading(path: list[tuple[int, str]], level: int, title: str, skip_h1: bool) -> None:
    """Update the heading path in place: a heading closes every open section of its level or deeper."""
    while path and path[-1][0] >= level:
        path.pop()
    if not (skip_h1 and level == 1):
        path.append((level, title))


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


def _split_oversized(block: Block, max_chars: int, fits: Fits | None) -> list[tuple[str, str]]:
    """Cut one block that does not fit on its own into fitting (kind, piece) pairs."""
    if block.kind in ("list", "quote") and len(parts := _structural_parts(block)) > 1:
        # A list item (or quote) holding code or a table is cut around them first, so that each keeps its
        # own rules: a code block repeats its fences, a table its header.
        return [piece for part in parts for piece in _whole_or_split(part, max_chars, fits)]
    return [(block.kind, piece) for piece in _split_pieces(block, max_chars, fits)]


def _whole_or_split(block: Block, max_chars: int, fits: Fits | None) -> list[tuple[str, str]]:
    return [(block.kind, block.text)] if _ok(block.text, max_chars, fits) else _split_oversized(block, max_chars, fits)


def _split_pieces(block: Block, max_chars: int, fits: Fits | None) -> list[str]:
    if block.kind == "table":
        rows = block.text.split("\n")
        header, body_rows = rows[:2], rows[2:]  # a table always has its header and delimiter row
        if body_rows and not _ok("\n".join([*header, body_rows[0]]), max_chars, fits):
            # A wide table padded for alignment: the padding is layout, not text. Without it the header
            # and a row fit together, instead of a chunk of bare header and rows cut loose from it.
            header = [_compact_row(r) for r in header]
            body_rows = [_compact_row(r) for r in body_rows]
        return _pack_lines(body_rows, header, max_chars, fits)
    if block.kind == "code":
        opening, inner, closing = _fence_parts(block.text)
        return _pack_lines(inner, opening, max_chars, fits, closing)
    # A list is cut between its lines (sub-items) first, prose between sentences first; each falls
    # back to the other boundary, and only then to a cut inside a line.
    splitters: list[Splitter] = [_lines, _sentences] if block.kind == "list" else [_sentences, _lines]
    return _pack_pieces(_cut(block.text, splitters, max_chars, fits), max_chars, fits)


def _fence_parts(text: str) -> tuple[list[str], list[str], list[str]]:
    """A code block's lines as (opening fence, code, closing fence); an indented block has no fences."""
    rows = text.split("\n")
    code = md.code_block(text)
    if code is None:
        return [], rows, []
    first, n = code.first_code_line, len(code.code_lines)
    return rows[:first], rows[first : first + n], rows[first + n :]


def _structural_parts(block: Block) -> list[Block]:
    """The block cut before and after every code block and table inside it, each a part of its own kind.
    Between them, a part that opens with a list item is a list, anything else (an item's further
    paragraphs) text; in a quote, everything is quote."""
    rows = block.text.split("\n")
    inner = [b for b in md.walk(md.parse(block.text)) if b.kind in ("code", "table")]
    parts: list[Block] = []
    line = 0
    for b in [*inner, md.Block("text", len(rows), len(rows))]:
        for start, end, kind in ((line, b.start, ""), (b.start, b.end, b.kind)):
            text = "\n".join(rows[start:end]).strip("\n")
            if text.strip():
                parts.append(Block(kind or _kind_between(text, block.kind), text, block.section))
        line = b.end
    return parts


def _kind_between(text: str, outer: str) -> str:
    if outer != "list":
        return outer
    found = md.parse(textwrap.dedent(text))
    return "list" if found and found[0].kind == "list" else "text"


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


# What an announcing paragraph goes with: the code block, table or list right after it.
_ANNOUNCED = ("code", "table", "list")


def _announces(paragraph: str) -> bool:
    """Whether a paragraph's last sentence announces the block after it ("…with the following flags:",
    "Some examples are shown below.", "設定例は次のとおり。"), as the answer step reads a lead-in.

    >>> _announces("Enroot imports images. Usage example:"), _announces("Usage example: see the README. It is fast.")
    (True, False)
    """
    sentences = [s for s in split_sentences(paragraph.strip()) if s.strip()]
    return bool(sentences) and announces(sentences[-1])


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
            units.extend((kind, piece) for kind, piece in _split_oversized(block, max_chars, fits) if piece.strip())
    out: list[RawChunk] = []
    texts: list[str] = []
    kinds: list[str] = []
    for kind, text in units:
        candidate = "\n\n".join([*texts, text])
        # Start a new chunk when the limit is hit, or when a table/code block would join a chunk that
        # is already big enough: keeping them separate makes each one quotable on its own.
        separate = kind in ("table", "code") and len("\n\n".join(texts)) >= min_chars
        if texts and (not _ok(candidate, max_chars, fits) or separate):
            # "To disable, start the kubelet with the following flags:" goes with the flags it announces: a
            # chunk that ends in an announcement shows nothing of what it announces
            announced = kind in _ANNOUNCED and kinds[-1] == "text" and _announces(texts[-1])
            cut = len(texts) - 1 if announced and _ok(f"{texts[-1]}\n\n{text}", max_chars, fits) else len(texts)
            if cut:
                out.append(RawChunk(section, "\n\n".join(texts[:cut]), _kind_of(kinds[:cut])))
            texts, kinds = texts[cut:], kinds[cut:]
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
