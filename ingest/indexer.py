"""Incremental ingest: only new or changed documents are embedded; the live index is never touched.

Plan → embed → write a new generation → publish (see ``ingest.store``). Unchanged documents keep
their stored vectors (copied, not recomputed), changed documents get fresh chunks, removed documents
are simply not carried over. Nothing changed → nothing is written and no model is loaded.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from pydantic import BaseModel, Field
from tqdm import tqdm

from core.contract import IndexMeta, StoredChunk, contextual_text, embed_text
from core.settings import Settings
from ingest.chunking import CHUNKER_VERSION, chunk_markdown
from ingest.companions import link
from ingest.documents import Document, DocumentError, load_corpus
from ingest.embeddings import AdvisorEmbeddings
from ingest.rules import dump_rules, extract_rules
from ingest.store import Store

__all__ = ["IngestError", "IngestReport", "chunk_document", "contextual_text", "embed_text", "run_ingest"]


class IngestError(RuntimeError):
    """Input problems that stop the ingest before anything is written."""

    def __init__(self, message: str, errors: list[DocumentError] | None = None):
        super().__init__(message)
        self.errors = errors or []


class IngestReport(BaseModel):
    docs_added: int = 0
    docs_updated: int = 0
    docs_unchanged: int = 0
    docs_deleted: int = 0
    chunks_total: int = 0
    embedded: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    generation: str = ""
    skipped: list[DocumentError] = Field(default_factory=list)
    translations_stale: list[str] = Field(
        default_factory=list, description="Companions whose original changed since they were translated."
    )

    def summary(self) -> str:
        line = (
            f"{self.docs_added} added, {self.docs_updated} updated, {self.docs_unchanged} unchanged, "
            f"{self.docs_deleted} deleted; {self.chunks_total} chunks, {self.embedded} embedded "
            f"in {self.seconds:.1f}s"
        )
        if self.rebuilt:
            line += " (full rebuild)"
        if self.skipped:
            line += f"; {len(self.skipped)} file(s) skipped"
        if self.translations_stale:
            line += (
                f"; stale translation(s): {', '.join(self.translations_stale)} (the original changed since it was"
                " translated: they still answer, flagged as stale; `ingest --translate` rewrites them)"
            )
        return line


def index_meta(settings: Settings, embeddings: AdvisorEmbeddings) -> IndexMeta:
    return IndexMeta(
        embedder=embeddings.spec,
        chunker=CHUNKER_VERSION,
        chunk_size=settings.index.chunk_size,
        chunk_min=settings.index.chunk_min,
    )


def chunk_document(doc: Document, settings: Settings, fits: Callable[[str], bool] | None) -> list[StoredChunk]:
    """Cut one document into stored chunks whose *embedded* text (with header) fits the model."""
    doc_hash = doc.content_hash
    # The contextual header (title + this chunk's section path) is embedded too, so it counts against
    # the model's limit: the chunker checks each section's chunks with that section's own header.
    raw = chunk_markdown(
        doc.body,
        settings.index.chunk_size,
        settings.index.chunk_min,
        fits,
        prefix=lambda section: contextual_text(doc.title, section, ""),
    )
    return [
        StoredChunk(
            id=f"{doc.id}#{i:04d}",
            doc_id=doc.id,
            doc_hash=doc_hash,
            title=doc.title,
            url=doc.url,
            section=c.section,
            kind=c.kind,
            language=doc.language,
            index=i,
            text=c.text,
            verbatim=doc.verbatim,
            translation_of=doc.translation_of,
            original_section=doc.section_map.get(c.section, "") if doc.translation_of else "",
            license=doc.license,
            completeness=doc.completeness,
            rules=dump_rules(extract_rules(c.text, f"{doc.id}#{i:04d}", doc.id, c.section, doc.language, c.kind)),
        )
        for i, c in enumerate(raw)
    ]


def _embed(chunks: list[StoredChunk], embeddings: AdvisorEmbeddings, batch: int, progress: bool) -> list[list[float]]:
    vectors: list[list[float]] = []
    bar = tqdm(total=len(chunks), desc="embedding", unit="chunk", disable=not progress, file=sys.stderr)
    for start in range(0, len(chunks), batch):
        part = chunks[start : start + batch]
        vectors.extend(embeddings.embed_documents([embed_text(c) for c in part]))
        bar.update(len(part))
    bar.close()
    return vectors


def load_documents(settings: Settings) -> tuple[list[Document], list[DocumentError], list[str]]:
    """The corpus and its translation companions, linked: (documents, per-file errors, stale companions)."""
    docs, errors = load_corpus(settings.index.corpus_dir, settings.index.translations_folder)
    linked = link(docs)
    errors.extend(DocumentError(path=p.path, reason=p.reason) for p in linked.problems)
    return linked.documents, errors, linked.stale


def run_ingest(
    settings: Settings,
    embeddings: AdvisorEmbeddings,
    *,
    rebuild: bool = False,
    skip_invalid: bool = False,
    progress: bool = False,
    store: Store | None = None,
) -> IngestReport:
    """Bring the index in line with the corpus folder. Raises IngestError on bad input."""
    started = time.perf_counter()
    docs, errors, stale = load_documents(settings)
    if errors and not skip_invalid:
        raise IngestError(f"{len(errors)} file(s) could not be ingested; nothing was written", errors)
    if not docs:
        raise IngestError(f"no documents found under {settings.index.corpus_dir}", errors)

    store = store or Store.open(settings)
    store.prune()  # debris of an earlier interrupted ingest; the live generation is kept
    meta = index_meta(settings, embeddings)
    current = store.current()
    report = IngestReport(skipped=errors, translations_stale=stale)
    compatible = current is not None and current.meta == meta and not rebuild
    report.rebuilt = current is not None and not compatible
    old_hashes = current.doc_hashes() if (current is not None and compatible) else {}

    new_ids = {d.id for d in docs}
    changed = [d for d in docs if old_hashes.get(d.id) != d.content_hash]
    report.docs_added = sum(1 for d in changed if d.id not in old_hashes)
    report.docs_updated = len(changed) - report.docs_added
    report.docs_unchanged = len(docs) - len(changed)
    report.docs_deleted = sum(1 for doc_id in old_hashes if doc_id not in new_ids)

    if current is not None and compatible and not changed and not report.docs_deleted:
        store.touch(stale)
        report.chunks_total = current.count()
        report.generation = current.name
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    fits = embeddings.fits if changed else None
    fresh = [chunk for doc in changed for chunk in chunk_document(doc, settings, fits)]
    # Embed before writing anything: an interrupted embedding leaves no trace in the store.
    vectors = _embed(fresh, embeddings, settings.index.embedding_batch_size, progress)
    report.embedded = len(fresh)

    kept_chunks: list[StoredChunk] = []
    kept_vectors: list[list[float]] = []
    if current is not None and compatible:
        unchanged = {d.id for d in docs} - {d.id for d in changed}
        all_chunks, all_vectors = current.all_chunks(with_embeddings=True)
        for chunk, vector in zip(all_chunks, all_vectors, strict=True):
            if chunk.doc_id in unchanged:
                kept_chunks.append(chunk)
                kept_vectors.append(vector)

    previous = current.name if current is not None else None
    gen = store.new_generation(meta)
    try:
        gen.add(kept_chunks + fresh, kept_vectors + vectors)
        store.publish(gen, documents=len(docs), stale=stale)
    except BaseException:
        # Ctrl-C or a store error mid-write: drop the half-built generation, keep the live one.
        try:
            if store.current_name() != gen.name:
                store.client.delete_collection(gen.name)
        except Exception:
            pass
        raise
    store.prune(keep_previous=previous)
    report.chunks_total = len(kept_chunks) + len(fresh)
    report.generation = gen.name
    report.seconds = round(time.perf_counter() - started, 3)
    return report
