"""The source panel (pure): a citation and its section's chunks → the HTML of the cited section, in place.

Clicking a source's title opens this panel beside the chat (a drawer on a phone) instead of leaving the
app: the whole cited section from the local index, rendered (tables as tables), with the quoted blocks
highlighted (class ``hit``, which the page scrolls into view), and a link out to the original page that
scrolls it to the passage (``Citation.link``, a text fragment). A translation companion is shown beside
its original's aligned section; paraphrased notes say they are notes, not the source's wording.

Example: ``panel_html(citation, snapshot.section_chunks(c.doc_id, c.section))`` → ``<div class="source-view">``
with the section's tables and lists rendered and the quoted row, sentence or code lines marked ``class="hit"``.

Deliberately left out: finding the chunks (``Snapshot.section_chunks``, called by ``app.web.handlers``)
and any Gradio object.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.models import Citation
from app.web.doc_html import quote_hit, to_html
from app.web.i18n import t
from app.web.render import citation_link, esc, html_link
from core.contract import StoredChunk
from core.markdown import is_delimiter_row

_ROW = re.compile(r"^\s*\|.*\|\s*$")


def _table_head(lines: Sequence[str]) -> tuple[str, str] | None:
    """The header (row, delimiter) of the table the text ends in, if it ends in one."""
    end = len(lines)
    start = end
    while start > 0 and _ROW.match(lines[start - 1]):
        start -= 1
    if end - start >= 3 and is_delimiter_row(lines[start + 1]):
        return lines[start].strip(), lines[start + 1].strip()
    return None


def section_markdown(chunks: Sequence[StoredChunk]) -> str:
    """A section's text from its chunks, in document order (chunks do not overlap).

    A table cut between chunks repeats its header in each; the pieces are joined back into one table.
    """
    parts: list[str] = []
    for chunk in sorted(chunks, key=lambda c: c.index):
        lines = chunk.text.strip().splitlines()
        if not lines:
            continue
        head = _table_head(parts[-1].splitlines()) if parts else None
        if head and len(lines) > 2 and (lines[0].strip(), lines[1].strip()) == head:
            parts[-1] += "\n" + "\n".join(lines[2:])
        else:
            parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _column(heading: str, body_md: str, quote: str, url: str, lang: str) -> str:
    """One document's section, quote highlighted; the quote alone when the index no longer has the section."""
    if body_md:
        body = to_html(body_md, url, quote_hit(quote))
    else:
        body = (
            f'<p class="sv-missing">{esc(t("section_missing", lang))}</p><div class="hit">{to_html(quote, url)}</div>'
        )
    head = f"<h4>{heading}</h4>" if heading else ""
    return f'<section class="sv-doc">{head}<div class="sv-body">{body}</div></section>'


def _notes(citation: Citation, lang: str) -> str:
    if citation.translation_of:
        stale = f' <span class="badge stale">{esc(t("stale", lang))}</span>' if citation.stale else ""
        return f'<p class="sv-note">{esc(t("panel_translation", lang, of=citation.translation_of))}{stale}</p>'
    if not citation.verbatim:
        return f'<p class="sv-note sv-notes">⚠️ {esc(t("panel_notes", lang))}</p>'
    return ""


def panel_html(
    citation: Citation,
    chunks: Sequence[StoredChunk],
    original_chunks: Sequence[StoredChunk] = (),
    lang: str = "en",
) -> str:
    """The panel for one citation: header, link out, the section (and its original, for a translation)."""
    title = esc(citation.title or citation.doc_id)
    section = f'<div class="sv-section">{esc(citation.section)}</div>' if citation.section else ""
    out = html_link(citation_link(citation), esc(t("open_page", lang)), "sv-out")
    head = f'<div class="sv-head"><div class="sv-title"><b>[{citation.n}]</b> {title}</div>{section}{out}</div>'
    original = citation.original
    own = esc(t("panel_translated", lang)) if original is not None else ""
    columns = [_column(own, section_markdown(chunks), citation.quote, citation.url, lang)]
    if original is not None:
        heading = f"{esc(t('original', lang))} · <code>{esc(original.doc_id)}</code>"
        if original.section:
            heading += f" · <em>{esc(original.section)}</em>"
        columns.append(_column(heading, section_markdown(original_chunks), original.quote, original.url, lang))
    cols = "two" if len(columns) == 2 else "one"
    return (
        f'<div class="source-view" data-n="{citation.n}">{head}{_notes(citation, lang)}'
        f'<div class="sv-cols {cols}">{"".join(columns)}</div></div>'
    )
