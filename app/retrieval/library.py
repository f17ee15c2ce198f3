"""The document library (pure given a snapshot): every indexed document with its kind and status."""

from __future__ import annotations

from app.retrieval.snapshot import Snapshot
from core.contract import DocumentInfo


def documents(snap: Snapshot) -> list[DocumentInfo]:
    """One entry per document, in id order: language, licence, full / notes / translation, staleness."""
    out: dict[str, DocumentInfo] = {}
    for c in snap.chunks.values():
        info = out.get(c.doc_id)
        if info is None:
            # the chunk already says whether its document is paraphrased notes (Document.verbatim at ingest)
            kind = "translation" if c.translation_of else ("full" if c.verbatim else "notes")
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
