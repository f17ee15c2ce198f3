"""Finish citations (pure given the index snapshot): deep links, and a translation's original passage.

Every citation gets a ``link`` that scrolls to the quoted passage (``app.answer.links.deep_link``: section
anchor + text fragment). A quote from paraphrased notes links to the page only: its wording is not on
the page. A quote from a translation companion carries the original's aligned section and passage
(``app.retrieval.companions.original_quote``) and links to the original's wording; a stale companion says so.

Deliberately left out: choosing and numbering quotes (``app.answer.compose``).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.answer.links import deep_link
from app.models import Citation, OriginalQuote, Passage, to_passage
from app.retrieval.companions import original_quote
from app.retrieval.snapshot import Snapshot


def enrich(citations: Sequence[Citation], passages: Sequence[Passage], snap: Snapshot) -> list[Citation]:
    by_chunk = {p.chunk_id: p for p in passages}
    out = []
    for c in citations:
        chunk = snap.chunks.get(c.chunk_id)
        p = by_chunk.get(c.chunk_id)
        translation_of = (p.translation_of if p else None) or (chunk.translation_of if chunk else "") or None
        update: dict[str, object] = {}
        if translation_of:
            source = p or _passage_of(c, snap)
            aligned = original_quote(source, c.quote.split("\n"), snap) if source is not None else None
            original = None
            if aligned is not None:
                section, quote = aligned
                link = deep_link(c.url, quote, section)
                original = OriginalQuote(doc_id=translation_of, section=section, quote=quote, url=c.url, link=link)
            # the page holds the original's wording, so the link scrolls to the original passage
            update.update(
                original=original,
                translation_of=translation_of,
                stale=c.doc_id in snap.stale,
                verbatim=False,
                link=original.link if original else deep_link(c.url, "", ""),
            )
        else:
            update["link"] = deep_link(c.url, c.quote if c.verbatim else "", c.section if c.verbatim else "")
        out.append(c.model_copy(update=update))
    return out


def _passage_of(c: Citation, snap: Snapshot) -> Passage | None:
    chunk = snap.chunks.get(c.chunk_id)
    return to_passage(chunk, 0.0, None, None) if chunk is not None else None
