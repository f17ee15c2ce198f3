"""The document library (pure given a snapshot): every indexed document with its kind and status."""

from __future__ import annotations

import re

from app.retrieve import Snapshot
from ingest.contract import DocumentInfo

_NOTES = re.compile(r"paraphras|summary notes", re.IGNORECASE)


def documents(snap: Snapshot) -> list[DocumentInfo]:
    """One entry per document, in id order: language, licence, full / notes / translation, staleness."""
    out: dict[str, DocumentInfo] = {}
    for c in snap.chunks.values():
        info = out.get(c.doc_id)
        if info is None:
            kind = "translation" if c.translation_of else ("notes" if _NOTES.search(c.completeness) else "full")
            info = out[c.doc_id] = DocumentInfo(
                doc_id=c.doc_id,
                title=c.title,
                url=c.url,
                language=c.language,
                license=c.license,
                kind=kind,
                translation_of=c.translation_of,
                stale=c.doc_id in snap.stale,
            )
        info.chunks += 1
    return [out[k] for k in sorted(out)]
