"""Pure rendering: escaping, citation markers, sources, passages and index status → the HTML the web UI shows.

Everything that came from a user or a document is escaped here, before Gradio sees it, so the page
never depends on Gradio's sanitizer alone. Answer Markdown (quotes, an LLM's text) is rendered to HTML
by ``app.web.doc_html`` (raw HTML escaped, links only to http(s), tables as tables); a user's question
stays Markdown with ``&``, ``<`` and ``>`` escaped outside code. Citation markers ``[n]`` become
``<sup>`` links to an anchor on the matching source entry; each source shows its title (a deep link that
scrolls the source page to the quote; the page opens it in the source panel instead), section path,
badges for translations and paraphrased notes, and its quoted passage, rendered, in a ``<details>``. The
framing lines (sources, badges) are in the question's language (``frame_lang``). The status line names
stale translation companions and the sections they leave out of the index until re-translated. Messages
that cannot be rated (errors, unfinished answers) carry a marker the page uses to hide 👍/👎.

Example: ``cited_html("GPUs at 92% [1]", [c1], key="a2")`` →
``GPUs at 92% <sup class="cite"><a href="#src-a2-1" ...>[1]</a></sup>``.

Deliberately left out: the answer's shape (``app.web.answer_view``, ``app.web.verdict_view``), Gradio
objects and any I/O (``app.web.handlers``), the library, rules and recommendation panels
(``app.web.panels``) and the source panel (``app.web.source_panel``).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable, Sequence

from app.answer.links import deep_link
from app.models import Answer, Citation, Passage
from app.web.doc_html import to_html
from app.web.i18n import as_lang, t
from core.contract import IndexInfo

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)

_SAFE_URL = re.compile(r"^https?://[^\s<>\"']+$", re.IGNORECASE)
_MARKER_RUN = re.compile(r"\[\d{1,3}\](?:[ \t]*\[\d{1,3}\](?![(:]))+(?![(:])")
_NUMBERED_BULLET = re.compile(r"^([ \t]*[-*+][ \t]+)(\d{1,3})([.)][ \t])", re.MULTILINE)
_EMPTY_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]*$\n?", re.MULTILINE)
_COPY_TAG = "<!--plain:{}-->"
# An empty marker element: the page hides 👍/👎 under a message that holds it (an error, an unfinished answer).
NO_RATE = '<span class="no-rate"></span>'


def esc(text: str) -> str:
    """HTML-escape text (quotes too) for use inside tags or attributes: ``'<b>'`` → ``'&lt;b&gt;'``."""
    return html.escape(text, quote=True)


# A Markdown link whose target is not http(s) (an anchor or path of the source site, javascript:, data:)
# goes nowhere in the app: it keeps its text only. Images are defused by escaping their bracket.
_LOCAL_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\((?!\s*https?://)[^)\n]*\)", re.I)
_UNSAFE_LINK = re.compile(r"\]\((?!\s*https?://)", re.I)


def _escape_prose(text: str) -> str:
    # Escape HTML and defuse Markdown images (a document must not make the browser fetch anything).
    escaped = _LOCAL_LINK.sub(r"\1", html.escape(text, quote=False))
    return _UNSAFE_LINK.sub(r"]\\(", escaped.replace("![", "!\\["))


def _map_outside_code(markdown: str, fn_prose: Callable[[str], str]) -> str:
    """Apply ``fn_prose`` to every part of ``markdown`` that is not inside a code fence or code span."""
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if prose:
            text = "".join(prose)
            pos = 0
            for m in _CODE_SPAN.finditer(text):
                if "\n\n" in m.group(0):  # a code span never crosses a paragraph break
                    continue
                out.append(fn_prose(text[pos : m.start()]))
                out.append(m.group(0))
                pos = m.end()
            out.append(fn_prose(text[pos:]))
            prose.clear()

    for line in markdown.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None and m:
            flush()
            fence = m.group(1)[0] * len(m.group(1))
            out.append(line)
        elif fence is not None:
            out.append(line)
            if line.strip().startswith(fence) and set(line.strip()) <= {fence[0]}:
                fence = None
        else:
            prose.append(line)
    flush()
    return "".join(out)


def escape_markdown(markdown: str) -> str:
    """Markdown with no live HTML outside code.

    ``'a <script>x</script> `<b>`'`` → ``'a &lt;script&gt;x&lt;/script&gt; `<b>`'``
    """
    return _map_outside_code(markdown, _escape_prose)


def safe_url(url: str) -> str | None:
    """The URL if it is plain http(s), else None (no ``javascript:`` or relative paths into the app)."""
    url = url.strip()
    return url if _SAFE_URL.match(url) else None


def anchor_id(key: str, n: int) -> str:
    return f"src-{re.sub(r'[^A-Za-z0-9_-]', '', key)}-{n}"


def _marker_html(n: int, citation: Citation | None, key: str) -> str:
    """``[n]`` as a link to source ``n`` of message ``key``; plain ``[n]`` when there is no such source."""
    if citation is None:
        return f"[{n}]"  # a marker without a citation stays plain text: nothing to link to
    tip = citation.title + (f" — {citation.section}" if citation.section else "")
    return f'<sup class="cite"><a href="#{anchor_id(key, n)}" title="{esc(tip)}">[{n}]</a></sup>'


def order_markers(text: str) -> str:
    """Adjacent markers in ascending order, each once: ``"x [3] [1][3]"`` → ``"x [1] [3]"``."""

    def fix(m: re.Match[str]) -> str:
        numbers = sorted({int(n) for n in re.findall(r"\d+", m.group(0))})
        return " ".join(f"[{n}]" for n in numbers)

    return _MARKER_RUN.sub(fix, text)


def tidy(markdown: str) -> str:
    """Drop empty list items (a stray bullet before a heading) and order marker runs."""
    return order_markers(_EMPTY_BULLET.sub("", markdown))


# In rendered HTML: code and tags are left alone, a marker in text becomes a link.
_CODE_OR_TAG = re.compile(r"(<pre\b.*?</pre>|<code\b.*?</code>|<[^>]*>)", re.DOTALL)
_HTML_MARKER = re.compile(r"\[(\d{1,3})\]")


def markers_html(html_text: str, citations: Sequence[Citation], key: str) -> str:
    """Rendered HTML with each ``[n]`` in its text (not in code) linked to source ``n``."""
    by_n = {c.n: c for c in citations}
    parts = _CODE_OR_TAG.split(html_text)
    return "".join(
        part
        if i % 2
        else _HTML_MARKER.sub(lambda m: _marker_html(int(m.group(1)), by_n.get(int(m.group(1))), key), part)
        for i, part in enumerate(parts)
    )


def cited_html(text: str, citations: Sequence[Citation], key: str) -> str:
    """Plain text (a rule's words, a sentence with ``[n]`` markers) escaped, its markers linked."""
    return markers_html(esc(order_markers(text)), citations, key)


def document_html(markdown: str, citations: Sequence[Citation], key: str) -> str:
    """Answer Markdown (quotes, an LLM's text) rendered on one line, tables as tables, markers linked.

    A quoted numbered heading ("- 7. Recommended scenarios") stays a bullet's text, not a nested list."""
    return markers_html(to_html(_NUMBERED_BULLET.sub(r"\1\2\\\3", tidy(markdown))), citations, key)


def html_link(url: str, text: str, cls: str = "") -> str:
    safe = safe_url(url)
    attr = f' class="{cls}"' if cls else ""
    return f'<a{attr} href="{esc(safe)}" target="_blank" rel="noopener noreferrer">{text}</a>' if safe else text


def citation_link(citation: Citation) -> str:
    """The deep link to the quoted passage: the pipeline's, else computed here for verbatim quotes."""
    if citation.link and safe_url(citation.link):
        return citation.link
    quote = citation.quote if citation.verbatim and not citation.translation_of else ""
    return deep_link(citation.url, quote, citation.section) or citation.url


def _badges(citation: Citation, lang: str) -> str:
    badges = []
    if citation.translation_of:
        badges.append(f'<span class="badge">{esc(t("translation", lang))}</span>')
        if citation.stale:
            badges.append(f'<span class="badge stale">{esc(t("stale", lang))}</span>')
    elif not citation.verbatim:
        badges.append(f'<span class="badge">{esc(t("paraphrased", lang))}</span>')
    return " " + " ".join(badges) if badges else ""


def _original_html(citation: Citation, lang: str) -> str:
    original = citation.original
    if original is None:
        return ""
    label = esc(t("original", lang))
    where = html_link(original.link or original.url, esc(original.doc_id)) if original.doc_id else ""
    section = f" · <em>{esc(original.section)}</em>" if original.section else ""
    quote = to_html(original.quote, original.url)
    return f'<div class="original"><b>{label}</b> {where}{section}<blockquote class="quote">{quote}</blockquote></div>'


def source_entry(citation: Citation, key: str, lang: str = "en") -> str:
    """One source as a single line of HTML: number, deep-linked title, section, badges, expandable quote."""
    title = esc(citation.title or citation.doc_id)
    linked = html_link(citation_link(citation), title, "src-title")
    section = f" · <em>{esc(citation.section)}</em>" if citation.section else ""
    doc = f" <code>{esc(citation.doc_id)}</code>" if citation.doc_id else ""
    return (
        f'<div class="source" id="{anchor_id(key, citation.n)}"><b>[{citation.n}]</b> {linked}{section}{doc}'
        f'{_badges(citation, lang)}<details><summary>{esc(t("quoted", lang))}</summary><blockquote class="quote">'
        f"{to_html(citation.quote, citation.url)}</blockquote>{_original_html(citation, lang)}</details></div>"
    )


def sources_markdown(citations: Sequence[Citation], key: str, lang: str = "en") -> str:
    if not citations:
        return ""
    entries = "\n".join(source_entry(c, key, lang) for c in sorted(citations, key=lambda c: c.n))
    return f"**{t('sources', lang)}**\n\n{entries}\n"


def question_markdown(question: str) -> str:
    """A user's question as shown in the chat: inert text, Markdown allowed."""
    return escape_markdown(question)


def frame_lang(answer: Answer, ui_lang: str) -> str:
    """The language of an answer's framing lines: the question's, when the UI has it, else the UI's."""
    return as_lang(answer.language) if answer.language in ("en", "ja") else as_lang(ui_lang)


def with_copy_text(markdown: str, plain: str) -> str:
    """Append the plain text as an invisible comment; the page's copy hook copies it instead of the HTML."""
    encoded = base64.b64encode(plain.encode("utf-8")).decode("ascii")
    return f"{markdown}\n\n{_COPY_TAG.format(encoded)}"


def duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _score(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def passage_entry(i: int, p: Passage, lang: str = "en") -> str:
    """One retrieved passage: linked title, section, the three scores, and its text as Markdown."""
    quote = p.text if p.verbatim else ""
    title = html_link(deep_link(p.url, quote, p.section) or p.url, esc(p.title or p.doc_id))
    section = f" · <em>{esc(p.section)}</em>" if p.section else ""
    scores = (
        f"{t('relevance', lang)} <b>{_score(p.score, 4)}</b> · {t('meaning', lang)} {_score(p.dense)} · "
        f"{t('keywords', lang)} {_score(p.lexical, 2)}"
    )
    # A translation is a translation (it is not the source's wording, but it is no paraphrase either).
    label = t("translation", lang) if p.translation_of else "" if p.verbatim else t("paraphrased", lang)
    badge = f' <span class="badge">{esc(label)}</span>' if label else ""
    head = f'<div class="passage-head"><b>{i}.</b> {title}{section}{badge}<br><small>{scores}</small></div>'
    return f'{head}\n\n<div class="passage-body">{to_html(p.text, p.url)}</div>'


def passages_markdown(passages: Sequence[Passage], lang: str = "en") -> str:
    """The retrieved passages with their scores explained, best first; each passage's Markdown rendered."""
    if not passages:
        return f"_{t('no_passages', lang)}_"
    entries = [passage_entry(i, p, lang) for i, p in enumerate(passages, 1)]
    return t("score_help", lang) + "\n\n" + "\n\n---\n\n".join(entries)


def status_line(info: IndexInfo | None, *, loading: bool = False, lang: str = "en") -> str:
    """The index status line: documents, chunks, embedder, last ingest, and stale translations."""
    if loading:
        return t("loading", lang)
    if info is None:
        return t("no_index", lang)
    when = info.updated_at.replace("T", " ").replace("Z", " UTC") if info.updated_at else "–"
    line = t("status", lang, docs=info.documents, chunks=info.chunks, embedder=esc(info.meta.embedder), when=esc(when))
    return line + stale_note(info, lang)


def stale_note(info: IndexInfo, lang: str = "en") -> str:
    """Stale translation companions, and how many of their sections wait for a re-translation (named)."""
    stale = info.translations_stale
    if not stale:
        return ""
    ids = esc(", ".join(stale))
    note = t("stale_one", lang, ids=ids) if len(stale) == 1 else t("stale_many", lang, n=len(stale), ids=ids)
    sections = [s for companion in stale for s in info.translations_unaligned.get(companion, [])]
    if sections:
        n = len(sections)
        key = "unaligned_their" if len(stale) > 1 else "unaligned_one" if n == 1 else "unaligned_many"
        note += t("clause_sep", lang) + t(key, lang, n=n) + t("sections_named", lang, names=esc(", ".join(sections)))
    return " · ⚠️ " + note


def status_error(message: str, lang: str = "en") -> str:
    return t("index_unavailable", lang, msg=esc(message))


def question_error(message: str, limit: int, lang: str = "en") -> str:
    """An over-long or empty question: the pipeline's message, and the limit if it does not say it."""
    text = esc(message)
    if str(limit) not in message and f"{limit:,}" not in message:
        text += " " + t("limit", lang, n=limit)
    return f"⚠️ {text}"


def unrated(message: str) -> str:
    """A chat message that is not an answer (an error): shown without 👍/👎."""
    return f"{message}\n\n{NO_RATE}"


def index_error(message: str, lang: str = "en") -> str:
    return t("kb_unavailable", lang, msg=esc(message))


def llm_error(lang: str = "en") -> str:
    """An unreachable LLM server, in plain words: what to choose instead (the URL and how to start a server
    are for the operator: the server log has them)."""
    return t("llm_unavailable", lang)


def internal_error(lang: str = "en") -> str:
    """An unexpected failure: nothing of the exception (its name and message are internals; the log has them)."""
    return t("internal", lang)
