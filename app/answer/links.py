"""Deep links to a quoted passage: the source URL plus a section anchor and a URL text fragment.

``deep_link(url, quote, section)`` returns ``url#anchor:~:text=start,end``: browsers that support Text
Fragments (Chromium, Safari, Firefox) scroll to the passage and highlight it. The quote's plain text is
used — Markdown markup, table pipes and separator rows, list bullets and ``[n]`` markers are removed,
reading the quote with ``core.markdown`` — because the page shows rendered text. A fragment term must lie inside one block of the page, so
``textStart`` is taken from the quote's first block (line or table cell) and ``textEnd`` from its last.

Section anchors are added only for sites whose heading ids we can predict: GitHub READMEs and blob
Markdown pages (github-slugger rules) and the Hugo sites kubernetes.io and kueue.sigs.k8s.io (Hugo's
GitHub-style ids, the same rules). slurm.schedmd.com pages have no reliable anchors, so none.

    >>> deep_link("https://example.test/a", "Slurm uses **partitions**.")
    'https://example.test/a#:~:text=Slurm%20uses%20partitions.'
    >>> deep_link("https://github.com/o/r", "", "Intro > Quick start")
    'https://github.com/o/r#quick-start'
    >>> deep_link("javascript:alert(1)", "x")
    ''

Deliberately left out: fetching pages (links are computed offline, so an anchor can miss a page whose
heading ids differ from the rules, e.g. duplicates suffixed ``-1``), and ``prefix-``/``-suffix`` terms.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote as _percent
from urllib.parse import urlsplit

from app.models import MARKER
from core import markdown as md

WORDS = 4  # words per textStart/textEnd term for a long quote
SHORT_WORDS = 10  # a block of at most this many words is matched whole
CJK_RUN = 16  # characters of a Japanese term (no spaces to cut at); a block up to twice this is used whole

_MARKER = re.compile(r"\s*" + MARKER.pattern)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff01-\uff60]")
_CJK_BREAK = re.compile(r"[、。，．！？：；（）「」『』]")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")
_SLUG_DROP = re.compile(r"[^\w\- ]")  # github-slugger drops punctuation and symbols, keeps letters/digits/-/_

_ANCHOR_HOSTS = ("kubernetes.io", "kueue.sigs.k8s.io")


def plain_blocks(markdown: str) -> list[str]:
    """The rendered text of ``markdown`` as blocks: one per line, one per table cell, read by ``core.markdown``.

    A table's header row is left out: it repeats across tables, so it would match the wrong one. Code keeps
    its characters as they are.

    >>> plain_blocks("| Head | Er |\\n|---|---|\\n| **A** | `b` |\\n| c [1] | d |")
    ['A', 'b', 'c', 'd']
    >>> plain_blocks("- one [2]\\n- [two](https://x.test)")
    ['one', 'two']
    """
    texts: list[str] = []
    for block in md.walk(md.parse_passage(markdown)):
        if block.kind == "heading":
            texts.append(_inline_text(block.text))
        elif block.kind in ("paragraph", "html"):
            # a delimiter row on its own is a piece of a table cut from its header: no text either; a row cut
            # from its header is still a row: its cells are what the page shows
            for line in block.text.split("\n"):
                if md.is_delimiter_row(line):
                    continue
                cells = _row_cells(line)
                if cells:
                    texts.extend(_inline_text(cell) for cell in cells)
                else:
                    texts.append(_inline_text(line))
        elif block.kind == "table":
            texts.extend(_inline_text(cell) for row in block.cells[1:] for cell in row)
        elif block.kind == "code":
            texts.extend(line.strip() for line in block.code_lines)
    return [text for text in texts if text]


def _row_cells(line: str) -> list[str]:
    """The cells of a lone table row ("| a | b |"), or [] for any other line."""
    stripped = line.strip()
    if len(stripped) < 3 or not (stripped.startswith("|") and stripped.endswith("|")):
        return []
    return [cell.strip() for cell in stripped[1:-1].split("|")]


def _inline_text(text: str) -> str:
    """What the page shows of one line of inline Markdown: no markup, link targets or ``[n]`` markers."""
    return " ".join(md.inline_text(_MARKER.sub("", text), links=False).split())


def encode_term(term: str) -> str:
    """Percent-encode a text-fragment term: everything but unreserved characters, and ``-`` too.

    >>> encode_term("a-b, c & d")
    'a%2Db%2C%20c%20%26%20d'
    """
    return _percent(term, safe="").replace("-", "%2D")


def _is_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def _cjk_head(block: str) -> str:
    """A leading run of a Japanese block; only its start must sit on a word boundary (the block's start)."""
    return block if len(block) <= 2 * CJK_RUN else block[:CJK_RUN]


def _cjk_tail(block: str) -> str:
    """A trailing run that starts on a likely word boundary: after punctuation, else where kana ends.

    Browsers check that ``textEnd`` starts at a word boundary, and Japanese has no spaces to cut at.

    >>> _cjk_tail("Slurmは、HPC分野で広く使われているオープンソースのジョブスケジューラです。大規模なGPUクラスタでの分散学習に向いています。")
    '分散学習に向いています。'
    """
    if len(block) <= 2 * CJK_RUN:
        return block
    start = len(block) - CJK_RUN
    window = range(start, len(block) - 4)
    for i in window:
        if _CJK_BREAK.match(block, i - 1):
            return block[i:]
    for i in window:
        if _HIRAGANA.match(block, i - 1) and not _HIRAGANA.match(block, i) and not _CJK_BREAK.match(block, i):
            return block[i:]
    return block[start:]


def _head(block: str) -> str:
    if _is_cjk(block):
        return _cjk_head(block)
    words = block.split()
    return block if len(words) <= SHORT_WORDS else " ".join(words[:WORDS])


def _tail(block: str) -> str:
    if _is_cjk(block):
        return _cjk_tail(block)
    words = block.split()
    return block if len(words) <= SHORT_WORDS else " ".join(words[-WORDS:])


def text_directive(quote: str) -> str:
    """``text=start[,end]`` for the quote, or ``""`` when it has no text.

    >>> text_directive("One two three four five six seven eight nine ten eleven twelve.")
    'text=One%20two%20three%20four,nine%20ten%20eleven%20twelve.'
    >>> text_directive("")
    ''
    """
    blocks = plain_blocks(quote)
    if not blocks:
        return ""
    first, last = blocks[0], blocks[-1]
    if len(blocks) == 1 and (_head(first) == first):
        return "text=" + encode_term(first)
    start, end = _head(first), _tail(last)
    if start == end:
        return "text=" + encode_term(start)
    return f"text={encode_term(start)},{encode_term(end)}"


def slug(heading: str) -> str:
    """A heading's id by github-slugger's rules (also Hugo's GitHub-style heading ids).

    >>> slug("3. Gang Scheduling (v1.35+)"), slug("`kubectl` & Pods"), slug("日本語の見出し、テスト")
    ('3-gang-scheduling-v135', 'kubectl--pods', '日本語の見出しテスト')
    """
    text = unicodedata.normalize("NFC", _inline_text(heading)).lower()
    return _SLUG_DROP.sub("", text).replace(" ", "-")


def _anchors_headings(url: str) -> bool:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path.rstrip("/")
    if host == "github.com":
        segments = [s for s in path.split("/") if s]
        readme_root = len(segments) == 2
        markdown_blob = len(segments) > 3 and segments[2] == "blob" and path.lower().endswith((".md", ".markdown"))
        return readme_root or markdown_blob
    return host in _ANCHOR_HOSTS or host.endswith(tuple("." + h for h in _ANCHOR_HOSTS))


def section_anchor(url: str, section: str) -> str:
    """The id of the section's deepest heading when the site's ids are predictable, else ``""``.

    >>> section_anchor("https://kubernetes.io/docs/x/", "Scheduling GPUs > Using device plugins")
    'using-device-plugins'
    >>> section_anchor("https://slurm.schedmd.com/gres.html", "Overview")
    ''
    """
    heading = section.split(" > ")[-1].strip() if section else ""
    if not heading or not _anchors_headings(url):
        return ""
    return slug(heading)


def deep_link(url: str, quote: str, section: str = "") -> str:
    """The URL with a section anchor (where reliable) and a text fragment for the quote.

    A non-http(s) URL gives ``""``; an empty quote gives the URL (plus anchor) only.

    >>> deep_link("https://kueue.sigs.k8s.io/docs/overview/", "Kueue is a set of APIs.", "Overview > Why use Kueue")
    'https://kueue.sigs.k8s.io/docs/overview/#why-use-kueue:~:text=Kueue%20is%20a%20set%20of%20APIs.'
    """
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or any(c.isspace() for c in url):
        return ""
    base, _, fragment = url.partition("#")
    fragment = fragment.split(":~:", 1)[0]  # an old directive is replaced, never stacked
    fragment = section_anchor(url, section) or fragment
    directive = text_directive(quote)
    if directive:
        return f"{base}#{fragment}:~:{directive}"
    return f"{base}#{fragment}" if fragment else base
