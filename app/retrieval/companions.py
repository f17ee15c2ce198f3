"""A translation and its original are one source: one passage per section, in the question's language.

Ranked passages may hold the same section twice, once from the original and once from its companion
translation. ``one_per_section`` keeps each section once, at its best rank, in the version written in
the question's language (swapping in the aligned chunk of the other version when only the wrong one
was retrieved). ``original_quote`` finds, for a quote from a translation, the original's passage at the
same place: headings, lists and tables follow one to one, so the k-th block of a section (and the i-th
item or row of it) is the k-th block of the original's section.

Deliberately left out: deciding what to quote (``app.answer.compose``) and any model: alignment is structural.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.models import Passage, to_passage
from app.retrieval.snapshot import Snapshot
from core import markdown as md
from core.contract import StoredChunk
from core.units import Unit, split_units


def origin(p: Passage) -> tuple[str, str]:
    """(original document, original section) of a passage: what makes two versions one source."""
    if p.translation_of:
        return p.translation_of, p.original_section
    return p.doc_id, p.section


def _versions(snap: Snapshot, doc_id: str, section: str) -> dict[str, list[StoredChunk]]:
    """Every version of one original section, by language: the original and its translations."""
    out: dict[str, list[StoredChunk]] = {}
    for c in snap.chunks.values():
        if (c.doc_id == doc_id and c.section == section) or (
            c.translation_of == doc_id and c.original_section == section
        ):
            out.setdefault(c.language, []).append(c)
    return {lang: sorted(chunks, key=lambda c: c.index) for lang, chunks in out.items()}


def _swap(p: Passage, language: str, snap: Snapshot, ranked: Sequence[Passage]) -> Passage:
    """The version of ``p``'s section in ``language``: a retrieved chunk of it when there is one, else
    the chunk at the same position in the section."""
    doc_id, section = origin(p)
    versions = _versions(snap, doc_id, section)
    wanted = versions.get(language)
    if not wanted or p.language == language:
        return p
    ids = {c.id for c in wanted}
    retrieved = next((q for q in ranked if q.chunk_id in ids), None)
    if retrieved is not None:
        return retrieved.model_copy(update={"score": p.score, "dense": p.dense, "lexical": p.lexical})
    mine = versions.get(p.language, [])
    position = next((i for i, c in enumerate(mine) if c.id == p.chunk_id), 0)
    chunk = wanted[min(position, len(wanted) - 1)]
    return to_passage(chunk, p.score, p.dense, p.lexical)


def one_per_section(ranked: Sequence[Passage], language: str, snap: Snapshot) -> list[Passage]:
    """Passages with each translated section once, in the question's language when it has a version."""
    out: list[Passage] = []
    chosen: dict[tuple[str, str], str] = {}  # origin → chunk id shown for it
    shown: set[str] = set()
    translated = {c.translation_of for c in snap.chunks.values() if c.translation_of}
    for p in ranked:
        key = origin(p)
        paired = key[0] in translated
        if not paired:
            if p.chunk_id not in shown:
                out.append(p)
                shown.add(p.chunk_id)
            continue
        best = _swap(p, language, snap, ranked)
        if key in chosen and chosen[key] != best.chunk_id and _language_of(out, chosen[key]) != best.language:
            continue  # the other version of a section already shown
        if best.chunk_id in shown:
            continue
        chosen.setdefault(key, best.chunk_id)
        out.append(best)
        shown.add(best.chunk_id)
    return out


def _language_of(passages: Sequence[Passage], chunk_id: str) -> str:
    return next((p.language for p in passages if p.chunk_id == chunk_id), "")


def _section_units(chunks: Sequence[StoredChunk]) -> list[Unit]:
    """The units of a whole section. A table cut between chunks repeats its header in the next chunk:
    the pieces are joined back into one table, so blocks count the same however the section was cut."""
    text = ""
    for c in chunks:
        piece = c.text
        lines = piece.split("\n")
        last_header = _last_table_header(text)
        if last_header and len(lines) > 2 and lines[0] == last_header[0] and lines[1] == last_header[1]:
            text = f"{text}\n" + "\n".join(lines[2:])
        else:
            text = f"{text}\n\n{piece}" if text else piece
    return split_units(text)


def _last_table_header(text: str) -> tuple[str, str] | None:
    """Header and delimiter row of the table that ends ``text``, if it ends with one (read as ``split_units``
    reads a passage: a table may sit in a list item or a quote, and a line of code that starts with "|" is code)."""
    src = md.lines(text)
    last = len(md.lines(text.rstrip()))
    tables = [b for b in md.walk(md.parse_passage(text)) if b.kind == "table" and b.end == last]
    return (src[tables[-1].start], src[tables[-1].start + 1]) if tables else None


def _position(unit_quote: str, units: Sequence[Unit]) -> tuple[int, int, int] | None:
    """(block ordinal in the section, index within the block, units in the block) of a quoted unit."""
    blocks = list(dict.fromkeys(u.block for u in units))
    for u in units:
        if u.quote == unit_quote:
            members = [v for v in units if v.block == u.block]
            return blocks.index(u.block), members.index(u), len(members)
    return None


def original_units(p: Passage, quotes: Sequence[str], snap: Snapshot) -> list[Unit]:
    """The original's units aligned with ``quotes`` taken from translation passage ``p``."""
    if not p.translation_of:
        return []
    mine = _section_units(snap.section_chunks(p.doc_id, p.section))
    theirs = _section_units(snap.section_chunks(p.translation_of, p.original_section))
    blocks = list(dict.fromkeys(u.block for u in theirs))
    out: list[Unit] = []
    for quote in quotes:
        for line in _unit_quotes(quote, mine):
            where = _position(line, mine)
            if where is None or where[0] >= len(blocks):
                continue
            members = [u for u in theirs if u.block == blocks[where[0]]]
            # the same item or row when the block has as many; a whole paragraph when sentences differ
            for u in [members[where[1]]] if len(members) == where[2] else members:
                if u.quote and u not in out:
                    out.append(u)
    return out


def original_quote(p: Passage, quotes: Sequence[str], snap: Snapshot) -> tuple[str, str] | None:
    """(original section, original quote) aligned with ``quotes`` taken from translation passage ``p``."""
    units = original_units(p, quotes, snap)
    if not units:
        return None
    whole = {u.block for u in units if u.kind == "code"}
    lines: list[str] = []
    for u in units:
        quote = u.quote.split("\n")
        if (u.kind == "code_line" and u.block in whole) or all(line in lines for line in quote):
            continue  # shown already, or shown with its whole code block
        if u.kind == "row":  # header and delimiter row once, above every row of the table
            quote = [line for line in quote if line not in lines]
        lines.extend(quote)  # a code block whole: its closing fence repeats its opening one
    return p.original_section, "\n".join(lines)


def _unit_quotes(quote: str, units: Sequence[Unit]) -> list[str]:
    """The unit quotes a citation quote is made of (a table row is quoted under its header)."""
    direct = [u.quote for u in units if u.quote and u.quote == quote]
    if direct:
        return direct
    lines = quote.split("\n")
    return [u.quote for u in units if u.quote and (u.quote in lines or u.quote.split("\n")[-1] in lines)]


def with_originals(passages: Sequence[Passage], snap: Snapshot) -> list[Passage]:
    """Translation passages carry the text of their original's aligned section (shown and checked beside them)."""
    out = []
    for p in passages:
        if p.translation_of:
            text = "\n\n".join(c.text for c in snap.section_chunks(p.translation_of, p.original_section))
            p = p.model_copy(update={"original_text": text})
        out.append(p)
    return out
