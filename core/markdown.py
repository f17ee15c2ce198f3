"""Markdown, read once (pure): markdown-it-py's CommonMark token stream, plus GFM tables and strikethrough,
turned into a small tree of blocks that know their source lines.

``parse(text)`` gives the top-level blocks in order (``parse_passage`` for a piece cut from a document). Every block spans source lines ``[start, end)``
(lines end at ``\\n``, ``\\r\\n`` or ``\\r``, as in CommonMark; trailing blank lines are not part of a block):
headings (level, title), paragraphs, lists and their items (nesting depth, marker, the item's own text,
the blocks inside it), tables (header cells and rows), fenced and indented code (info string, lines),
block quotes (the blocks inside), HTML blocks and thematic breaks. Non-blank lines that no block claims
(link reference definitions) come back as ``text`` blocks, so every character has a block.

``inline_text`` is what a reader sees of inline Markdown, ``is_link_only`` spots a bare link, ``split_code``
separates code (blocks and spans) from the rest,
``is_delimiter_row`` is the one test for a table's ``|---|`` line, ``lines`` and ``source`` give the
source lines that the ranges count, and ``code_block`` reads one code block's source on its own.

    >>> [(b.kind, b.start, b.end) for b in parse("# T\\n\\n- a\\n  - b\\n\\n| h |\\n|---|\\n| 1 |")]
    [('heading', 0, 1), ('list', 2, 4), ('table', 5, 8)]
    >>> inline_text("Set **`__init__`** [here](https://x.test)", links=False)
    'Set __init__ here'

Deliberately left out: rendering to HTML, and any judgement about what a block means to the product
(sections, chunk sizes, evidence): that is for ``ingest.chunking`` and ``core.units``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

BlockKind = Literal["heading", "paragraph", "list", "item", "table", "code", "quote", "html", "rule", "text"]

_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# Blocks only: the inline content of each block is kept as text, and parsed on demand by ``inline_text``.
_BLOCKS = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("inline")
# Characters that can start inline markup (CommonMark); a text without them is plain already.
_MARKUP_CHARS = re.compile(r"[\\`*_\[\]<>&!~\n]")
_LINE_END = re.compile(r"\r\n|\r|\n")
# Left over when a sentence is cut inside emphasis or a code span: markup, not words.
_STRAY_MARKUP = re.compile(r"\*\*|`+")
_DELIMITER_CELL = re.compile(r":?-+:?")
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class Block:
    """One block of a Markdown text and the source lines ``[start, end)`` it spans."""

    kind: BlockKind
    start: int
    end: int
    # heading: its title; paragraph and html: its text (container markers removed, lines joined by "\n");
    # item: the text of its opening paragraph; code: the code without fences, every line ending in "\n"
    text: str = ""
    level: int = 0  # heading: 1-6; list and item: nesting depth (0 = a top-level list)
    markup: str = ""  # heading: "#"… or "="/"-" (setext); item: "-", "1."…; fenced code: "```" or "~~~"
    info: str = ""  # fenced code: the info string ("yaml", "console"…)
    cells: tuple[tuple[str, ...], ...] = ()  # table: the header row, then each body row (inline Markdown)
    children: tuple[Block, ...] = ()  # list: its items; item and quote: the blocks inside them

    @property
    def language(self) -> str:
        """A code block's language: the first word of its info string, lower-cased."""
        return self.info.split()[0].lower() if self.info.split() else ""

    @property
    def code_lines(self) -> list[str]:
        """A code block's lines; line ``i`` sits on source line ``first_code_line + i``."""
        return self.text.split("\n")[:-1] if self.kind == "code" else []

    @property
    def first_code_line(self) -> int:
        return self.start + 1 if self.markup else self.start  # a fence's opening line holds no code

    def moved(self, lines: int) -> Block:
        """The same block ``lines`` further down (a piece of a text read on its own, put back in place)."""
        children = tuple(child.moved(lines) for child in self.children)
        return replace(self, start=self.start + lines, end=self.end + lines, children=children)

    @property
    def is_setext(self) -> bool:
        return self.kind == "heading" and self.markup in ("=", "-")


def lines(text: str) -> list[str]:
    """The source lines that block ranges count (CommonMark line endings; Python's ``splitlines`` also
    breaks at form feeds and other separators that Markdown treats as text)."""
    return _LINE_END.split(text)


def line_offsets(text: str) -> list[int]:
    """Character offset where each source line starts, plus ``len(text)`` + 1 as a sentinel, so that
    ``text[offsets[a] : offsets[b] - 1]`` is lines ``a..b-1`` verbatim (their inner line endings kept)."""
    offsets = [0, *(m.end() for m in _LINE_END.finditer(text))]
    return [*offsets, len(text) + 1]


def source(text: str, start: int, end: int, offsets: Sequence[int] | None = None) -> str:
    """Source lines ``[start, end)`` of ``text`` verbatim (line endings inside kept, the last one not);
    pass ``line_offsets(text)`` when slicing one text many times."""
    offsets = offsets or line_offsets(text)
    if end >= len(offsets) - 1:
        return text[offsets[start] :]
    return text[offsets[start] : offsets[end] - 1].removesuffix("\r")


@lru_cache(maxsize=512)
def parse(text: str) -> tuple[Block, ...]:
    """The top-level blocks of ``text`` in order (cached: a passage is read by several callers)."""
    src = lines(text)
    found, _ = _read(_BLOCKS.parse(text), 0, 0, src)
    return tuple(_fill_gaps(found, src))


@lru_cache(maxsize=512)
def parse_passage(text: str) -> tuple[Block, ...]:
    """``parse`` for a passage cut from a document. A passage cut from a long nested list starts with items
    indented four spaces or more, which on their own read as an indented code block: such a block whose first
    line is a list item is read again, dedented, as that list. Real code is fenced in the documents, and a
    fenced block is never touched.

    >>> [(b.kind, b.start) for b in parse_passage("        * deep item\\n\\n    * shallower item\\n\\n```\\nx\\n```")]
    [('list', 0), ('list', 2), ('code', 4)]
    """
    src = lines(text)
    blocks: list[Block] = []
    for block in parse(text):
        piece = src[block.start : block.end]
        opens = parse(piece[0].strip()) if block.kind == "code" and not block.markup else ()
        if not (opens and opens[0].kind == "list"):
            blocks.append(block)
            continue
        # every line of an indented block is indented four or more: each round moves it left, and ends
        blocks.extend(b.moved(block.start) for b in parse_passage(textwrap.dedent("\n".join(piece))))
    return tuple(blocks)


def code_block(text: str) -> Block | None:
    """The code block that ``text``, one code block's source, holds (a fence nested in a list item is
    indented, so the text is read dedented first, then as it stands); None if it holds something else."""
    for candidate in (textwrap.dedent(text), text):
        found = parse(candidate)
        if len(found) == 1 and found[0].kind == "code":
            return found[0]
    return None


def walk(blocks: Sequence[Block]) -> Iterator[Block]:
    """Every block, depth first, in document order."""
    for block in blocks:
        yield block
        yield from walk(block.children)


def _trimmed_end(src: list[str], start: int, end: int) -> int:
    while end > start + 1 and not src[end - 1].strip():
        end -= 1
    return end


def _read(tokens: list[Token], i: int, depth: int, src: list[str]) -> tuple[list[Block], int]:
    """Blocks from token ``i`` up to the closing token of the enclosing container (or the end)."""
    blocks: list[Block] = []
    while i < len(tokens) and tokens[i].nesting != -1:
        tok = tokens[i]
        start, end = tok.map or (0, 0)
        end = _trimmed_end(src, start, end)
        kind = tok.type
        if kind in ("heading_open", "paragraph_open"):
            text = tokens[i + 1].content
            if kind == "heading_open":
                blocks.append(Block("heading", start, end, text.strip(), int(tok.tag[1]), tok.markup))
            else:
                blocks.append(Block("paragraph", start, end, text))
            i += 3
        elif kind in ("fence", "code_block"):
            blocks.append(Block("code", start, end, tok.content, markup=tok.markup, info=tok.info.strip()))
            i += 1
        elif kind in ("html_block", "hr"):
            blocks.append(Block("html" if kind == "html_block" else "rule", start, end, tok.content.rstrip("\n")))
            i += 1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            items, i = _read(tokens, i + 1, depth, src)
            blocks.append(Block("list", start, end, level=depth, markup=tok.markup, children=tuple(items)))
            i += 1
        elif kind == "list_item_open":
            inner, i = _read(tokens, i + 1, depth + 1, src)
            own = inner[0].text if inner and inner[0].kind == "paragraph" else ""
            marker = tok.info + tok.markup
            blocks.append(Block("item", start, end, own, level=depth, markup=marker, children=tuple(inner)))
            i += 1
        elif kind == "blockquote_open":
            inner, i = _read(tokens, i + 1, depth, src)
            blocks.append(Block("quote", start, end, children=tuple(inner)))
            i += 1
        elif kind == "table_open":
            cells, i = _table_cells(tokens, i + 1)
            blocks.append(Block("table", start, end, cells=cells))
        else:  # a token type the presets above never emit at block level
            i += 1
    return blocks, i


def _table_cells(tokens: list[Token], i: int) -> tuple[tuple[tuple[str, ...], ...], int]:
    """The rows of the table whose tokens start at ``i`` (after ``table_open``), and the index after it."""
    rows: list[tuple[str, ...]] = []
    row: list[str] = []
    while tokens[i].type != "table_close":
        tok = tokens[i]
        if tok.type == "tr_open":
            row = []
        elif tok.type == "inline":
            row.append(tok.content.strip())
        elif tok.type == "tr_close":
            rows.append(tuple(row))
        i += 1
    return tuple(rows), i + 1


def _fill_gaps(blocks: list[Block], src: list[str]) -> list[Block]:
    """Non-blank lines no block claims (link reference definitions) as ``text`` blocks, in place."""
    out: list[Block] = []
    line = 0
    for block in [*blocks, Block("text", len(src), len(src))]:
        run = line
        while run < block.start:
            if not src[run].strip():
                run += 1
                continue
            end = run
            while end < block.start and src[end].strip():
                end += 1
            out.append(Block("text", run, end, "\n".join(src[run:end])))
            run = end
        if block.start < len(src):
            out.append(block)
        line = max(line, block.end)
    return out


def split_code(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_code) pairs that join back to it: code blocks (fences included) and
    inline code spans, by CommonMark's rules, against everything else.

    >>> split_code("Run `a[1]` [2].\\n\\n```\\nb[3]\\n```")
    [('Run ', False), ('`a[1]`', True), (' [2].\\n\\n', False), ('```\\nb[3]\\n```', True)]
    """
    offsets = line_offsets(text)
    ranges: list[tuple[int, int]] = []
    for block in walk(parse(text)):
        head, tail = offsets[block.start], min(offsets[block.end] - 1, len(text))
        if block.kind == "code":
            ranges.append((head, tail))
        elif block.kind in ("paragraph", "heading", "table"):
            ranges.extend(_code_spans(text, head, tail))
    pieces: list[tuple[str, bool]] = []
    at = 0
    for head, tail in sorted(set(ranges)):
        if head < at:  # a span inside a quote's or item's paragraph, already inside a block of code
            continue
        pieces.extend(p for p in ((text[at:head], False), (text[head:tail], True)) if p[0])
        at = tail
    if text[at:]:
        pieces.append((text[at:], False))
    return pieces


def _code_spans(text: str, head: int, tail: int) -> list[tuple[int, int]]:
    """Inline code spans in ``text[head:tail]``: a run of n backticks opens one, the next run of exactly n
    closes it; with no such run the backticks are literal (a backslash makes the first one literal)."""
    runs = [
        (m.start() + 1, m.end()) if m.start() and text[m.start() - 1] == "\\" else (m.start(), m.end())
        for m in _BACKTICKS.finditer(text, head, tail)
    ]
    runs = [(a, b) for a, b in runs if b > a]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        width = runs[i][1] - runs[i][0]
        close = next((j for j in range(i + 1, len(runs)) if runs[j][1] - runs[j][0] == width), None)
        if close is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[close][1]))
        i = close + 1
    return spans


def is_delimiter_row(line: str) -> bool:
    """The ``|---|:---:|`` line under a table's header, by the parser's own rule (GFM): cells of dashes
    with optional colons, separated by pipes; a single-column row needs a pipe.

    >>> is_delimiter_row("| --- | :-: |"), is_delimiter_row("---"), is_delimiter_row("|-|"), is_delimiter_row("a|-")
    (True, False, True, False)
    """
    row = line.strip()
    if not row or "-" not in row or row[0] not in "|-:" or (row[0] == "-" and row[1:2].isspace()):
        return False
    cells = [c.strip() for c in row.split("|")]
    inner = cells[1:] if not cells[0] else cells
    inner = inner[:-1] if inner and not inner[-1] else inner
    if not inner or (len(inner) == 1 and "|" not in row):
        return False
    return all(_DELIMITER_CELL.fullmatch(c) for c in inner)


def inline_text(markup: str, *, links: bool = True) -> str:
    """What a reader sees of inline Markdown: emphasis markers and code-span backticks go, a code span's
    content stays verbatim, escapes and entities are resolved, line breaks become spaces. With ``links``
    a link stays Markdown (``[text](url)``, images and inline HTML too); without, only its text remains.

    >>> inline_text("**Gang** `a__b` [Kueue](https://k.test) &amp; <br>"), inline_text("[Kueue](https://k.test)", links=False)
    ('Gang a__b [Kueue](https://k.test) & <br>', 'Kueue')
    """
    if not _MARKUP_CHARS.search(markup):
        return markup.strip()
    out: list[str] = []
    hrefs: list[str] = []
    for tok in _inline_tokens(markup):
        out.append(_token_text(tok, hrefs, links))
    return "".join(out).strip()


def is_link_only(markup: str) -> bool:
    """True when inline Markdown is one link and nothing else (a contents entry, a bare URL).

    >>> is_link_only("[Install](https://x.test/install)"), is_link_only("See [Install](https://x.test).")
    (True, False)
    """
    if "[" not in markup and "<" not in markup:
        return False
    tokens = [t for t in _inline_tokens(markup) if t.type != "text" or t.content.strip()]
    if not tokens or tokens[0].type != "link_open":
        return False
    closing = next(i for i, t in enumerate(tokens) if t.type == "link_close")
    return closing == len(tokens) - 1


@lru_cache(maxsize=16384)
def _inline_tokens(markup: str) -> tuple[Token, ...]:
    parsed = _MD.parseInline(markup)
    return tuple(parsed[0].children or []) if parsed else ()


def _token_text(tok: Token, hrefs: list[str], links: bool) -> str:
    """One inline token as text; ``hrefs`` holds the targets of the links open around it."""
    kind = tok.type
    if kind == "text":
        return _STRAY_MARKUP.sub("", tok.content)
    if kind == "code_inline":
        return tok.content
    if kind in ("softbreak", "hardbreak"):
        return " "
    if kind == "link_open":
        auto = tok.markup == "autolink"
        hrefs.append("" if auto else str(tok.attrs.get("href", "")))
        return ("<" if auto else "[") if links else ""
    if kind == "link_close":
        href = hrefs.pop() if hrefs else ""
        if not links:
            return ""
        return f"]({href})" if tok.markup != "autolink" else ">"
    if kind == "image":
        return f"![{tok.content}]({tok.attrs.get('src', '')})" if links else tok.content
    if kind == "html_inline":
        return tok.content if links else ""
    return ""  # emphasis, strong and strikethrough markers
