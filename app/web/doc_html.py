"""Document Markdown → safe HTML for the UI (pure): quotes, passages and cited sections, rendered.

Documents carry tables, lists, code and links; a quote shown as raw Markdown (``| a | b |``, ``- item``)
is hard to read, so the UI renders it here, before Gradio sees it, with markdown-it (CommonMark plus
tables). Raw HTML in a document is escaped, images are not loaded (``![x](y)`` stays text), and links are
resolved against the source document's URL: ``#anchor`` and ``../x.md`` point into the source site, and
anything that is not http(s) after that is left as plain text. Links open in a new tab.

``to_html`` returns the HTML on one line, with no blank line inside, so it can sit inside a Markdown
HTML block (a chat message), which a blank line would end; line breaks inside code survive as ``&#10;``.
``hit`` marks blocks (paragraphs, list items, table rows, headings, code) whose text belongs to a quote
with the class ``hit``, which the source panel highlights and scrolls to; in a code block only the quoted
lines are marked (one ``<span class="hit">`` around them), not the whole manifest, and in a paragraph or list
item only the quoted sentences (a ``<span class="hit">`` each), not the whole paragraph. A table row is
marked as a row, never the table.

    >>> to_html("| A | B |\\n|---|---|\\n| 1 | 2 |")
    '<div class="table-wrap" tabindex="0"><table><thead><tr><th>A</th><th>B</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table></div>'

Deliberately left out: the chat's own answer text (``app.web.render``), and any fetching of the links.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from functools import cache
from itertools import pairwise
from typing import Any
from urllib.parse import urljoin, urlsplit

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token

from core.markdown import is_delimiter_row

Hit = Callable[[str], bool]
_FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})")

# A wrapper scrolls a wide table sideways on a narrow screen, so the table itself keeps its layout; it takes the
# keyboard's focus, so that the arrow keys scroll it too (a scrollable region must be reachable). Every table the
# UI draws opens with it.
TABLE_WRAP = '<div class="table-wrap" tabindex="0">'
_PRE = re.compile(r"(<pre\b.*?</pre>)", re.DOTALL)
_MARKUP = re.compile(r"[|*_`#>~\\]+|^\s*(?:[-+]|\d{1,3}[.)])\s+|!?\[([^\]]*)\]\([^)]*\)", re.MULTILINE)
_MARKED_BLOCKS = ("paragraph_open", "heading_open", "list_item_open", "tr_open", "fence", "code_block")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")


@cache
def _parser() -> MarkdownIt:
    # breaks: a single line break in a document is a line break on screen (quotes keep their lines).
    md = (
        MarkdownIt("commonmark", {"html": False, "breaks": True, "xhtmlOut": False})
        .enable(["table", "strikethrough"])
        .disable("image")
    )
    md.add_render_rule("fence", _render_code)
    md.add_render_rule("code_block", _render_code)
    return md


def resolve_link(href: str, base_url: str) -> str | None:
    """``href`` made absolute against ``base_url``; None unless the result is plain http(s).

    ``resolve_link("#topology", "https://x.test/a/b.md")`` → ``"https://x.test/a/b.md#topology"``
    """
    href = href.strip()
    base = base_url.strip() if urlsplit(base_url.strip()).scheme in ("http", "https") else ""
    target = urljoin(base, href) if base else href
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c in target for c in " <>\"'"):
        return None
    return target


def _fix_links(tokens: Sequence[Token], base_url: str) -> None:
    for token in tokens:
        for child in token.children or []:
            if child.type != "link_open":
                continue
            url = resolve_link(str(child.attrGet("href") or ""), base_url)
            if url is None:  # not a place a reader can go: the link text stays, the link goes
                child.attrs.pop("href", None)
                continue
            child.attrSet("href", url)
            child.attrSet("target", "_blank")
            child.attrSet("rel", "noopener noreferrer")


def _block_text(tokens: Sequence[Token], i: int) -> str:
    """The Markdown text of the block that starts at ``tokens[i]`` (a table row: all its cells)."""
    token = tokens[i]
    if token.type in ("fence", "code_block"):
        return token.content
    if token.type == "tr_open":
        cells: list[str] = []
        for later in tokens[i + 1 :]:
            if later.type == "tr_close":
                break
            if later.type == "inline":
                cells.append(later.content)
        return " ".join(cells)
    # A paragraph, heading or list item: its first inline text (a list item's own line, not its sub-list).
    for later in tokens[i + 1 :]:
        if later.type == "inline":
            return later.content
        if later.type not in ("paragraph_open", "heading_open"):
            break
    return ""


def _mark_hits(tokens: Sequence[Token], hit: Hit) -> None:
    in_head = False
    lines_of = getattr(hit, "code_lines", None)
    for i, token in enumerate(tokens):
        in_head = (in_head or token.type == "thead_open") and token.type != "thead_close"
        if token.type not in _MARKED_BLOCKS or in_head:
            continue
        span = lines_of(token.content) if lines_of and token.type in ("fence", "code_block") else None
        whole = (0, len(token.content.rstrip("\n").split("\n")))
        if span is not None and span != whole:
            token.meta = {**(token.meta or {}), "hit_lines": span}  # only these lines (_render_code)
        elif span is not None or (hit(text := _block_text(tokens, i)) and not _mark_sentences(tokens, i, text, hit)):
            token.attrJoin("class", "hit")


def _inline_of(tokens: Sequence[Token], i: int) -> Token | None:
    """The inline token of the prose block at ``tokens[i]`` (a paragraph, heading or list item's own line)."""
    for later in tokens[i + 1 :]:
        if later.type == "inline":
            return later
        if later.type not in ("paragraph_open", "heading_open"):
            return None
    return None


def _span_pattern(piece: str) -> re.Pattern[str]:
    """A piece of a quote (``plain`` text) as a pattern over rendered text: any spacing, any case."""
    return re.compile(r"\s+".join(re.escape(word) for word in piece.split()), re.IGNORECASE)


def _mark_sentences(tokens: Sequence[Token], i: int, text: str, hit: Hit) -> bool:
    """Mark only the quoted sentences of a prose block (``<span class="hit">`` around each); False: the block
    is not a sentence-level hit (it is all quoted, or a quote crosses its links or emphasis), mark it whole."""
    pieces = getattr(hit, "pieces_in", None)
    inline = _inline_of(tokens, i) if pieces and tokens[i].type in ("paragraph_open", "list_item_open") else None
    if inline is None or pieces is None:
        return False
    if (inline.meta or {}).get("hit_spans"):  # a list item's paragraph: its item marked the spans already
        return True
    found = pieces(text)
    children = list(inline.children or [])
    # the block's rendered text, from its text and line-break children only; anything else ends a run
    flat, where = "", []  # where[k]: (child index, offset in it) of flat[k]
    for c, child in enumerate(children):
        piece = child.content if child.type == "text" else "\n" if child.type in ("softbreak", "hardbreak") else "\0"
        flat += piece
        where += [(c, k) for k in range(len(piece))]
    spans: list[tuple[int, int]] = []
    for piece in found:
        m = _span_pattern(piece).search(flat)
        if m is None or "\0" in m.group(0) or (m.start() == 0 and m.end() == len(flat.rstrip())):
            return False
        spans.append((m.start(), m.end()))
    spans.sort()
    if not spans or any(a[1] > b[0] for a, b in pairwise(spans)):
        return False  # overlapping quotes: the block as a whole
    cuts: dict[int, list[tuple[int, str]]] = {}  # child index → [(offset, tag)]
    for start, end in spans:
        (c0, k0), (c1, k1) = where[start], where[end - 1]
        cuts.setdefault(c0, []).append((k0, '<span class="hit">'))
        cuts.setdefault(c1, []).append((k1 + 1, "</span>"))
    out: list[Token] = []
    for c, child in enumerate(children):
        if c not in cuts:
            out.append(child)
            continue
        done = 0
        for offset, tag in sorted(cuts[c], key=lambda x: (x[0], x[1] != "</span>")):
            if offset > done:
                out.append(Token("text", "", 0, content=child.content[done:offset]))
            out.append(Token("html_inline", "", 0, content=tag))
            done = offset
        if done < len(child.content):
            out.append(Token("text", "", 0, content=child.content[done:]))
    inline.children = out
    inline.meta = {**(inline.meta or {}), "hit_spans": True}
    return True


def _render_code(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """A code block; the quoted lines (``meta["hit_lines"]``, from ``_mark_hits``) in one highlighted span."""
    token = tokens[idx]
    span = (token.meta or {}).get("hit_lines")
    if span is None:
        default = RendererHTML.fence if token.type == "fence" else RendererHTML.code_block
        return str(default(self, tokens, idx, options, env))
    lines = [html.escape(line, quote=False) for line in token.content.rstrip("\n").split("\n")]
    start, end = span
    lines[start:end] = ['<span class="hit">' + "\n".join(lines[start:end]) + "</span>"]
    body = "\n".join(lines)
    lang = token.info.strip().split(" ")[0] if token.type == "fence" else ""
    cls = f' class="language-{html.escape(lang)}"' if lang else ""
    return f"<pre><code{cls}>{body}\n</code></pre>\n"


def _one_line(html_text: str) -> str:
    html_text = html_text.replace("<table>", f"{TABLE_WRAP}<table>").replace("</table>", "</table></div>")
    parts = _PRE.split(html_text)
    # Odd parts are <pre> blocks: their line breaks are content. Elsewhere a newline only separates tags
    # (soft breaks are <br> here), so it can go.
    return "".join(p.replace("\n", "&#10;") if i % 2 else p.replace("\n", "") for i, p in enumerate(parts))


def complete_table(markdown: str) -> str:
    """Table rows quoted without their header get an empty header row, so they still render as a table."""
    lines = [line for line in markdown.strip().splitlines() if line.strip()]
    if not lines or not all(_TABLE_ROW.match(line) for line in lines) or any(is_delimiter_row(x) for x in lines):
        return markdown
    cells = lines[0].strip().strip("|").count("|") + 1
    return "\n".join(["|" + " |" * cells, "|" + "---|" * cells, *lines])


def to_html(markdown: str, base_url: str = "", hit: Hit | None = None) -> str:
    """Render document Markdown as safe, one-line HTML; links resolved against ``base_url``."""
    md = _parser()
    tokens = md.parse(complete_table(markdown))
    _fix_links(tokens, base_url)
    if hit is not None:
        _mark_hits(tokens, hit)
    return _one_line(md.renderer.render(tokens, md.options, {}))


def plain(markdown: str) -> str:
    """Markdown reduced to comparable text: no markup, no list markers, one space, lower case."""
    return " ".join(_MARKUP.sub(lambda m: m.group(1) or " ", markdown).split()).lower()


class QuoteHit:
    """A ``hit`` test: a block is part of a quote when one holds the other (markup and spacing ignored).

    Each line of a quote counts on its own, so a quote that joins sentences of several blocks marks each.
    ``code_lines`` finds the quoted lines inside a code block.
    """

    def __init__(self, quotes: Sequence[str], min_chars: int) -> None:
        self.min_chars = min_chars
        self.whole = [plain(q) for q in quotes if plain(q)]
        self.pieces = [p for q in quotes for line in q.splitlines() if len(p := plain(line)) >= min_chars]
        # each quote's lines, without its fence lines: the run to find in a code block
        self.runs = [
            [x for line in q.splitlines() if not _FENCE_LINE.match(line) and (x := plain(line))] for q in quotes
        ]

    def __call__(self, block: str) -> bool:
        text = plain(block)
        if not text:
            return False
        held = any(text == q or (len(text) >= self.min_chars and text in q) for q in self.whole)
        return held or any(p in text for p in self.pieces)

    def pieces_in(self, block: str) -> list[str]:
        """The quote's lines inside ``block`` that are only part of it (each to mark as a span); [] when the
        block is held by a quote as a whole (then the block itself is the hit)."""
        text = plain(block)
        if any(text == q or (len(text) >= self.min_chars and text in q) for q in self.whole):
            return []
        return [p for p in self.pieces if p in text]

    def code_lines(self, code: str) -> tuple[int, int] | None:
        """(first, end) of the lines of ``code`` that a quote's lines match in a row; None: no such run.

        ``QuoteHit(["kind: Job\\nspec:"], 12).code_lines("apiVersion: v1\\nkind: Job\\nspec:\\n  x: 1")`` → ``(1, 3)``
        """
        lines = [plain(line) for line in code.rstrip("\n").split("\n")]
        for run in (r for r in self.runs if sum(map(len, r)) >= self.min_chars):
            for start in range(len(lines)):
                matched, i = 0, start
                while i < len(lines) and matched < len(run):
                    if not lines[i] and i > start:  # a blank line inside the run is part of it
                        i += 1
                        continue
                    if lines[i] != run[matched]:
                        break
                    matched, i = matched + 1, i + 1
                if matched == len(run):
                    return start, i
        return None


def quote_hit(*quotes: str, min_chars: int = 12) -> QuoteHit:
    """A ``hit`` test for these quotes (``QuoteHit``)."""
    return QuoteHit(quotes, min_chars)
