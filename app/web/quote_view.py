"""An answer's quotes, drawn from its typed fields (pure): the lead first, the rest folded.

``Answer.lead`` (at most three ``Quote``) is shown under the direct answer, each quote by its kind: a
table row as a table (its verbatim Markdown carries the header), code as a code block, a heading with what
it brings along as one table (the rows under it, header once) and a short list for the rest, a sentence or
item as its text with the value line's values in bold (a sentence going on with the next one of its
paragraph, a lead-in with what it announces under it).
A quote that argues against the verdict says so; a translation's original is one click away, never shown
by default. ``Answer.more`` is folded under "More from the documents". Nothing is read back from the
answer's Markdown: the fields are the answer.

Example: ``lead_html(answer, "a2", "en")`` → ``<ul class="lead"><li class="q">The control plane needs
<strong class="value">512 MB</strong> of memory. <sup class="cite">…[1]…</sup></li></ul>``.

Deliberately left out: the direct answer (``app.web.answer_view``), escaping and markers
(``app.web.render``), Gradio and I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.answer.quotes import going_on
from app.models import Citation, Quote
from app.web.doc_html import to_html
from app.web.i18n import t
from app.web.render import cited_html, esc
from core.text import join_sentences
from core.units import is_table_separator

_BLOCK_KINDS = ("row", "code", "code_line")


def _follower_kind(quote: Quote, i: int) -> str:
    return quote.follower_kinds[i] if i < len(quote.follower_kinds) else ""


def _going_on(quote: Quote) -> str:
    """The sentences a sentence quote goes on with, as they follow its text (a space, or none after "。")."""
    going = going_on(quote)
    head = quote.text.strip()
    return join_sentences([head, *going])[len(head) :] if going else ""


def _follower_groups(quote: Quote) -> list[tuple[str, str]]:
    """What a quote brings along under it, in order: ``("table", markdown)`` for each run of table rows under
    one header (the header and delimiter once, then every row, from ``follower_markdown``), ``("code", text)``
    for a code block, ``("item", text)`` for anything else (or a row whose Markdown is not at hand). The
    sentences it goes on with are not here (``_going_on``: they continue its own line)."""
    groups: list[tuple[str, str]] = []
    head: tuple[str, str] | None = None
    for i, text in enumerate(quote.followers):
        kind = _follower_kind(quote, i)
        lines = (quote.follower_markdown[i] if i < len(quote.follower_markdown) else "").strip().splitlines()
        if kind == "sentence":
            continue
        if kind == "code":
            head = None
            groups.append(("code", text))
        elif kind == "row" and len(lines) >= 3 and is_table_separator(lines[1]):
            rows = "\n".join(line.strip() for line in lines[2:])
            if head == (lines[0].strip(), lines[1].strip()):
                groups[-1] = ("table", f"{groups[-1][1]}\n{rows}")
            else:
                head = (lines[0].strip(), lines[1].strip())
                groups.append(("table", f"{head[0]}\n{head[1]}\n{rows}"))
        else:
            head = None
            groups.append(("item", text))
    return groups


def _followers_html(quote: Quote) -> str:
    """What a quote brings under it: table rows as one table, code as a block, the rest as a short list."""
    out: list[str] = []
    items: list[str] = []
    for kind, body in _follower_groups(quote):
        if kind in ("table", "code"):
            if items:
                out.append(f"<ul>{''.join(items)}</ul>")
                items = []
            markdown = body if kind == "table" or body.lstrip().startswith(("```", "~~~")) else f"```\n{body}\n```"
            out.append(f'<div class="quote">{to_html(markdown)}</div>')
        else:
            items.append(f"<li>{esc(body)}</li>")
    if items:
        out.append(f"<ul>{''.join(items)}</ul>")
    return "".join(out)


def _with_values(quote: Quote) -> str:
    """The quote's shown text, escaped, with the value line's values in bold."""
    text, out, pos = quote.text, [], 0
    spans = sorted({(at, at + len(v.value)) for v in quote.values if (at := text.find(v.value)) >= 0})
    for start, end in spans:
        if start < pos:
            continue
        out += [esc(text[pos:start]), f'<strong class="value">{esc(text[start:end])}</strong>']
        pos = end
    out.append(esc(text[pos:]))
    return "".join(out)


def _block(quote: Quote) -> str:
    """A row as a table, code as a code block (the verbatim Markdown)."""
    markdown = quote.markdown or quote.text
    if quote.kind in ("code", "code_line") and not markdown.lstrip().startswith(("```", "~~~")):
        markdown = f"```{quote.code_language}\n{markdown}\n```"
    return f'<div class="quote">{to_html(markdown)}</div>'


def quote_html(quote: Quote, citations: Sequence[Citation], key: str, lang: str) -> str:
    """One quote as a list item: its body, its [n], an "against" label, the original on request."""
    marker = cited_html(f" [{quote.n}]", citations, key)
    label = f'<span class="badge against">{esc(t("against", lang))}</span> ' if quote.role == "against" else ""
    if quote.kind in _BLOCK_KINDS:
        body = f"{label}{esc(quote.intro)}{marker}{_block(quote)}"
    elif quote.kind == "heading" and quote.followers:
        body = f"{label}<b>{esc(quote.text)}</b>{marker}{_followers_html(quote)}"
    else:
        about = f'<span class="about">{esc(quote.about)}</span> — ' if quote.about else ""
        body = f"{label}{about}{_with_values(quote)}{esc(_going_on(quote))}{marker}{_followers_html(quote)}"
    if quote.original and quote.original.strip() != quote.text.strip():
        body += (
            f'<details class="original-of"><summary>{esc(t("original", lang))}</summary>'
            f'<div class="quote">{esc(quote.original)}</div></details>'
        )
    role = " against" if quote.role == "against" else ""
    return f'<li class="q kind-{esc(quote.kind)}{role}">{body}</li>'


def quotes_html(quotes: Sequence[Quote], citations: Sequence[Citation], key: str, lang: str) -> str:
    return '<ul class="lead">' + "".join(quote_html(q, citations, key, lang) for q in quotes) + "</ul>"


def lead_html(lead: Sequence[Quote], more: Sequence[Quote], citations: Sequence[Citation], key: str, lang: str) -> str:
    """The lead's quotes, then the rest folded under "More from the documents" (with how many)."""
    parts = [quotes_html(lead, citations, key, lang)] if lead else []
    if more:
        summary = f"{esc(t('more_docs', lang))} ({len(more)})"
        parts.append(
            f'<details class="more"><summary>{summary}</summary>{quotes_html(more, citations, key, lang)}</details>'
        )
    return "".join(parts)


def quote_text(quote: Quote, lang: str) -> list[str]:
    """One quote as Markdown lines (copy and export): the same body, its [n], the "against" label."""
    label = f"({t('against', lang)}) " if quote.role == "against" else ""
    if quote.kind in _BLOCK_KINDS:
        head = f"{quote.intro} " if quote.intro else ""
        return [f"- {label}{head}[{quote.n}]", *(f"  {line}" for line in (quote.markdown or quote.text).splitlines())]
    about = f"{quote.about} — " if quote.about else ""
    lines = [f"- {label}{about}{quote.text}{_going_on(quote)} [{quote.n}]"]
    for kind, body in _follower_groups(quote):
        lines += [f"  {line}" for line in body.splitlines()] if kind in ("table", "code") else [f"  - {body}"]
    return lines
