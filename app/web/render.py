"""Pure rendering: ``Answer`` and index status → the Markdown/HTML strings the web UI shows, in one language.

Everything that came from a user or a document is escaped here, before Gradio sees it, so the page
never depends on Gradio's sanitizer alone. Markdown is kept (documents carry tables, lists and code):
``&``, ``<`` and ``>`` are escaped outside code, while code spans and fences are left to the Markdown
renderer, which escapes them itself; a link that is not http(s) keeps only its text. Citation markers
``[n]`` become ``<sup>`` links to an anchor on the matching source entry; each source shows its title
(a deep link that scrolls the source page to the quote; the page opens it in the source panel instead),
section path, badges for translations and paraphrased notes, and its quoted passage — rendered, tables
as tables (``app.web.doc_html``) — in a ``<details>``. A verdict is rendered from the ``Verdict`` object
(badge, summary, what would change it), never parsed from Markdown. The framing lines of an answer
(verdict, sources, badges) are in the question's language. ``answer_plain`` is the same answer as plain
text for the copy button. Messages that cannot be rated (errors, unfinished answers) carry a marker the
page uses to hide 👍/👎.

Example: ``answer_markdown(Answer(answer="GPUs at 92% [1]", citations=[c1]), key="a2")`` →
``GPUs at 92%<sup class="cite"><a href="#src-a2-1" ...>[1]</a></sup>`` followed by a sources block.

Deliberately left out: Gradio objects and any I/O (``app.web.handlers``), the library, rules and
recommendation panels (``app.web.panels``) and the source panel (``app.web.source_panel``).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable, Sequence

from app.answer.links import deep_link
from app.models import MARKER, Answer, Citation, Passage, Verdict
from app.web.doc_html import to_html
from app.web.i18n import as_lang, t, verdict_label
from core.contract import IndexInfo

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)

_SAFE_URL = re.compile(r"^https?://[^\s<>\"']+$", re.IGNORECASE)
_MARKER_RUN = re.compile(r"\[\d{1,3}\](?:[ \t]*\[\d{1,3}\](?![(:]))+(?![(:])")
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


def link_markers(markdown: str, citations: Sequence[Citation], key: str) -> str:
    """Escape ``markdown`` and turn ``[n]`` markers (outside code) into links to source ``n``."""
    by_n = {c.n: c for c in citations}

    def prose(text: str) -> str:
        return MARKER.sub(lambda m: _marker_html(int(m.group(1)), by_n.get(int(m.group(1))), key), _escape_prose(text))

    return _map_outside_code(tidy(markdown), prose)


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


def verdict_markdown(verdict: Verdict, citations: Sequence[Citation], key: str, lang: str = "en") -> str:
    """Verdict badge, its summary with linked markers, and what would change it."""
    badge = f'<span class="verdict verdict-{esc(verdict.value)}">{esc(verdict_label(verdict.value, lang))}</span>'
    parts = [f"**{t('verdict', lang)}:** {badge}"]
    if verdict.summary.strip():
        parts[0] += " " + link_markers(verdict.summary.strip(), citations, key)
    if verdict.changes:
        items = "\n".join(f"- {link_markers(c, citations, key)}" for c in verdict.changes)
        parts.append(f"_{t('changes', lang)}:_\n\n{items}")
    return "\n\n".join(parts)


def _shows_verdict(answer: Answer) -> bool:
    summary = answer.verdict.summary.strip() if answer.verdict else ""
    return answer.verdict is not None and not (summary and summary in answer.answer)


def frame_lang(answer: Answer, ui_lang: str) -> str:
    """The language of an answer's framing lines: the question's, when the UI has it, else the UI's."""
    return as_lang(answer.language) if answer.language in ("en", "ja") else as_lang(ui_lang)


def answer_markdown(answer: Answer, key: str, *, partial: bool = False, lang: str = "en") -> str:
    """The chat message for an answer: verdict, text with linked markers, notes, then sources.

    ``lang`` is the UI's language; the framing follows the question's (``frame_lang``).
    """
    lang = frame_lang(answer, lang)
    parts: list[str] = []
    if answer.verdict is not None and _shows_verdict(answer):
        parts.append(verdict_markdown(answer.verdict, answer.citations, key, lang))
    body = answer.answer.strip() or ("…" if partial else "")
    parts.append(link_markers(body, answer.citations, key))
    # A refusal's own text says it cannot answer; a second note would say it twice.
    if answer.flagged and not partial:
        parts.append(f"_⚠️ {t('flagged', lang, n=len(answer.flagged))}_")
    sources = sources_markdown(answer.citations, key, lang)
    if sources:
        parts.append(sources)
    # An unfinished answer (streaming, or stopped) cannot be rated: it is not stored as an answer.
    parts.append(f"<sub>{esc(answer.backend)} · {_duration(answer.latency_ms)}</sub>" if not partial else NO_RATE)
    return "\n\n".join(p for p in parts if p)


def answer_plain(answer: Answer, lang: str = "en") -> str:
    """The answer as plain text for copying: verdict, text with [n] markers, then the source list."""
    lang = frame_lang(answer, lang)
    lines: list[str] = []
    if answer.verdict is not None and _shows_verdict(answer):
        head = f"{t('verdict', lang)}: {verdict_label(answer.verdict.value, lang)}"
        lines.append(f"{head} — {answer.verdict.summary.strip()}" if answer.verdict.summary.strip() else head)
        lines += [f"- {c}" for c in answer.verdict.changes]
        lines.append("")
    lines.append(tidy(answer.answer.strip()))
    if answer.citations:
        lines += ["", f"{t('sources', lang)}:"]
        for c in sorted(answer.citations, key=lambda c: c.n):
            where = " — ".join(x for x in (c.title or c.doc_id, c.section, citation_link(c)) if x)
            lines.append(f"[{c.n}] {where}")
    return "\n".join(lines).strip() + "\n"


def with_copy_text(markdown: str, plain: str) -> str:
    """Append the plain text as an invisible comment; the page's copy hook copies it instead of the HTML."""
    encoded = base64.b64encode(plain.encode("utf-8")).decode("ascii")
    return f"{markdown}\n\n{_COPY_TAG.format(encoded)}"


def _duration(ms: float) -> str:
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
    badge = "" if p.verbatim else f' <span class="badge">{esc(t("paraphrased", lang))}</span>'
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
    stale = info.translations_stale
    if stale:
        line += " · ⚠️ " + t("stale_status", lang, n=len(stale), ids=esc(", ".join(stale)))
    return line


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


def llm_error(message: str, lang: str = "en") -> str:
    """An unreachable LLM server: its message names the URL and how to start a server."""
    return t("llm_unavailable", lang, msg=escape_markdown(message))


def internal_error(exc: BaseException, lang: str = "en") -> str:
    # Only the exception type: messages of unexpected errors may carry paths or internals.
    return t("internal", lang, name=esc(type(exc).__name__))
