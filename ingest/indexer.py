"""Incremental ingest: only new or changed documents are chunked again; the live index is never touched.

Plan → embed → write a new generation → publish (see ``ingest.store``). Unchanged documents keep
their stored vectors (copied, not recomputed), changed documents get fresh chunks, removed documents
are simply not carried over. Fresh chunks take their vectors from the embedding cache when the same
embedder embedded the same text before (``ingest.embed_cache``), so a rebuild or a chunker change only
embeds new texts. Nothing changed → nothing is written and no model is loaded.

Deliberately left out: linking translations (``ingest.companions``) and the Chroma layout (``ingest.store``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Collection

from pydantic import BaseModel, Field

from core.contract import IndexMeta, StoredChunk, contextual_text, dump_facts, embed_text
from core.settings import Settings
from ingest.chunking import CHUNKER_VERSION, chunk_markdown
from ingest.companions import Linked, link
from ingest.documents import Document, DocumentError, load_corpus
from ingest.embed_cache import EmbeddingCache, open_cache
from ingest.embeddings import AdvisorEmbeddings
from ingest.facts import FACTS_VERSION, extract_facts
from ingest.rules import dump_rules, extract_rules
from ingest.store import UNITS_SUFFIX, Generation, Store
from ingest.unit_vectors import UNITS_VERSION, store_units, unit_texts

# Units are short: larger batches keep every engine busy (the settings' batch size is sized for chunks).
UNIT_BATCH = 8

__all__ = ["IngestError", "IngestReport", "chunk_document", "contextual_text", "embed_text", "run_ingest"]

log = logging.getLogger(__name__)


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
    embedded: int = Field(0, description="Texts the model embedded (cache misses, each distinct text once).")
    cache_hits: int = Field(0, description="Fresh chunks whose vector came from the embedding cache.")
    units: int = Field(0, description="Evidence units of the new generation, each with its own vector.")
    units_embedded: int = Field(0, description="Units the model embedded (the rest came from the embedding cache).")
    cache_misses: int = Field(0, description="Fresh chunks whose text the cache did not hold.")
    seconds: float = 0.0
    rebuilt: bool = False
    generation: str = ""
    skipped: list[DocumentError] = Field(default_factory=list)
    translations_stale: list[str] = Field(
        default_factory=list, description="Companions whose original changed since they were translated."
    )
    translations_unaligned: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Stale companion id → its sections that match no section of the changed original (not indexed).",
    )

    def summary(self) -> str:
        line = (
            f"{self.docs_added} added, {self.docs_updated} updated, {self.docs_unchanged} unchanged, "
            f"{self.docs_deleted} deleted; {self.chunks_total} chunks, {self.embedded} embedded "
            f"(cache: {self.cache_hits} hits, {self.cache_misses} misses); {self.units} units, "
            f"{self.units_embedded} embedded; in {self.seconds:.1f}s"
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
        for companion, sections in self.translations_unaligned.items():
            line += (
                f"; {companion}: {len(sections)} section(s) match nothing in the changed original and are left out"
                f" until it is re-translated: {'; '.join(repr(s) for s in sections)}"
            )
        return line


def index_meta(settings: Settings, embeddings: AdvisorEmbeddings) -> IndexMeta:
    return IndexMeta(
        embedder=embeddings.spec,
        chunker=CHUNKER_VERSION,
        chunk_size=settings.index.chunk_size,
        chunk_min=settings.index.chunk_min,
        facts=FACTS_VERSION,
        units=UNITS_VERSION,
    )


def chunk_document(
    doc: Document, settings: Settings, fits: Callable[[str], bool] | None, leave_out: Collection[str] = ()
) -> list[StoredChunk]:
    """Cut one document into stored chunks whose *embedded* text (with header) fits the model.

    ``leave_out``: sections not to index (a stale translation's sections that match nothing in its original).
    """
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
            facts=dump_facts(extract_facts(c.text)),
        )
        for i, c in enumerate(raw)
        if c.section not in leave_out
    ]


def load_documents(settings: Settings) -> tuple[Linked, list[DocumentError]]:
    """The corpus and its translation companions, linked, and the per-file errors (a broken companion's too)."""
    docs, errors = load_corpus(settings.index.corpus_dir, settings.index.translations_folder)
    linked = link(docs)
    errors.extend(DocumentError(path=p.path, reason=p.reason) for p in linked.problems)
    return linked, errors


def _carried_over(current: Generation, unchanged: set[str]) -> tuple[list[StoredChunk], list[list[float]]]:
    """The chunks of unchanged documents and their stored vectors, copied as they are."""
    chunks, vectors = current.all_chunks(with_embeddings=True)
    kept = [(c, v) for c, v in zip(chunks, vectors, strict=True) if c.doc_id in unchanged]
    return [c for c, _ in kept], [v for _, v in kept]


def run_ingest(
    settings: Settings,
    embeddings: AdvisorEmbeddings,
    *,
    rebuild: bool = False,
    skip_invalid: bool = False,
    progress: bool = False,
    store: Store | None = None,
    cache: EmbeddingCache | None = None,
) -> IngestReport:
    """Bring the index in line with the corpus folder. Raises IngestError on bad input."""
    started = time.perf_counter()
    linked, errors = load_documents(settings)
    docs, stale, unaligned = linked.documents, linked.stale, linked.unaligned
    if errors and not skip_invalid:
        raise IngestError(f"{len(errors)} file(s) could not be ingested; nothing was written", errors)
    if not docs:
        raise IngestError(f"no documents found under {settings.index.corpus_dir}", errors)

    store = store or Store.open(settings)
    store.prune()  # debris of an earlier interrupted ingest; the live generation is kept
    meta = index_meta(settings, embeddings)
    current = store.current()
    report = IngestReport(skipped=errors, translations_stale=stale, translations_unaligned=unaligned)
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
        store.touch(stale, unaligned)
        report.chunks_total = current.count()
        report.generation = current.name
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    fits = embeddings.fits if changed else None
    fresh = [c for doc in changed for c in chunk_document(doc, settings, fits, unaligned.get(doc.id, ()))]
    # Embed before writing to the index: an interrupted embedding leaves no trace in it (only in the cache).
    cache = cache or open_cache(settings, store, embeddings.spec)
    vectors, used = cache.embed(
        [embed_text(c) for c in fresh], embeddings, settings.index.embedding_batch_size, progress
    )
    report.embedded, report.cache_hits, report.cache_misses = used.embedded, used.hits, used.misses

    kept_chunks: list[StoredChunk] = []
    kept_vectors: list[list[float]] = []
    if current is not None and compatible:
        kept_chunks, kept_vectors = _carried_over(current, {d.id for d in docs} - {d.id for d in changed})
    # Every unit of the new generation: a kept chunk's units come from the cache.
    units = unit_texts(kept_chunks + fresh)
    unit_vectors, unit_used = cache.embed(
        units, embeddings, settings.index.embedding_batch_size * UNIT_BATCH, progress, what="unit"
    )
    report.units, report.units_embedded = len(units), unit_used.embedded

    previous = current.name if current is not None else None
    gen = store.new_generation(meta)
    try:
        gen.add(kept_chunks + fresh, kept_vectors + vectors)
        store_units(store.new_unit_vectors(gen.name), units, unit_vectors)
        store.publish(gen, documents=len(docs), stale=stale, unaligned=unaligned)
    except BaseException:
        # Ctrl-C or a store error mid-write: drop the half-built generation, keep the live one.
        with contextlib.suppress(Exception):
            if store.current_name() != gen.name:
                for name in (gen.name, gen.name + UNITS_SUFFIX):
                    with contextlib.suppress(Exception):
                        store.client.delete_collection(name)
        raise
    store.prune(keep_previous=previous)
    try:
        cache.settle([*(embed_text(c) for c in kept_chunks + fresh), *units])
    except Exception as exc:  # the index is published; a cache that cannot shrink only costs disk space
        log.warning("embedding cache could not be bounded: %s", exc)
    report.chunks_total = len(kept_chunks) + len(fresh)
    report.generation = gen.name
    report.seconds = round(time.perf_counter() - started, 3)
    return report
