"""HTML page → clean Markdown for the corpus, plus ``tidy`` for whitespace in any Markdown text.

``html_to_markdown`` keeps a page's main content: the CSS ``selector`` when it matches, else
<main>, <article>, [role=main] or <body>. Inside it, headings (ATX), lists, tables and fenced code
(with the language from ``language-*``/``lang-*`` classes) survive. Scripts, styles, forms, navigation,
site headers/footers/asides and images are dropped, and links become absolute so the text still
points somewhere once it is read away from its site.

Deliberately left out: downloading (``ingest.sync.fetch``), front matter and files (``ingest.sync.sources``),
JavaScript rendering, image alt text and captions (the corpus is text only), and per-site rules
beyond the manifest's ``selector``.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag
from markdownify import MarkdownConverter

_DROP_TAGS = ["script", "style", "noscript", "template", "iframe", "svg", "canvas", "form", "button", "nav"]
_CHROME_TAGS = ["header", "footer", "aside"]


def _code_language(el: Tag) -> str:
    for node in (el, el.find("code")):
        if isinstance(node, Tag):
            for cls in node.get("class") or []:
                if cls.startswith(("language-", "lang-")):
                    return str(cls.split("-", 1)[1])
    return ""


def html_to_markdown(html: bytes | str, base_url: str, selector: str | None = None, charset: str | None = None) -> str:
    """Main content of an HTML page as Markdown: headings, lists, tables and code kept; chrome dropped.

    The main content is ``selector`` when it matches, else <main>, <article>, [role=main] or <body>.
    Links become absolute (the text is read away from its site); images are dropped (text-only corpus).
    """
    soup = BeautifulSoup(html, "html.parser", from_encoding=charset if isinstance(html, bytes) else None)
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    candidates = (selector, "main", "article", "[role=main]", "body")
    root = next((hit for css in candidates if css and (hit := soup.select_one(css))), soup)
    for tag in root.find_all(_CHROME_TAGS):
        if tag.find("h1") is None:  # an article's own <header> holding its title stays
            tag.decompose()
    for tag in root.find_all("img"):
        tag.decompose()
    for link in root.find_all("a", href=True):
        link["href"] = urljoin(base_url, str(link["href"]))
    converter = MarkdownConverter(
        heading_style="atx",
        bullets="-",
        escape_underscores=False,  # identifiers like gres_flags stay searchable and quotable
        escape_asterisks=False,
        newline_style="spaces",  # <br> becomes a plain line break once tidy() strips the spaces
        table_infer_header=True,
        code_language_callback=_code_language,
    )
    return tidy(converter.convert_soup(root))


def tidy(text: str) -> str:
    """Trailing spaces off, at most one blank line in a row, one final newline.

    >>> tidy("# A  \\n\\n\\n\\nb\\n")
    '# A\\n\\nb\\n'
    """
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n") + "\n"
