"""The default answerer: extractive, grounded, offline (pure given scored units).

It picks the best evidence units for the question, quotes them verbatim with inline ``[n]`` markers,
and — for platform-selection questions — opens with a one-line verdict that the quoted evidence itself
states (a recommendation table row or a sentence that recommends a platform). When the evidence is
too weak it refuses plainly instead of dressing irrelevant passages up as an answer. Quotes keep the
document's structure: a lead-in is shown with the list, table rows or command it announces, nested under it,
and a quoted code window or block stands under the sentence that announces it (``Quote.intro``), never twice.

Deliberately left out: paraphrasing or translating quotes (they stay verbatim in their own language;
only the framing follows the question's language).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field

from app.answer.evidence import (
    Evidence,
    ScoredUnit,
    Unit,
    brought_along,
    code_after,
    continuation,
    followers,
    is_lead_in,
    is_table_separator,
)
from app.answer.locate import Located
from app.answer.quotes import QUOTES_HEADING, RELATED_HEADING, lead_and_more, make_quote
from app.answer.values import without_links
from app.answer.verdict_lines import cite_votes, verdict_lines
from app.models import Citation, Finding, Passage, Quote, QuoteRole, Verdict
from app.retrieval.companions import original_units
from app.retrieval.snapshot import Snapshot
from core.contract import StoredChunk
from core.text import content_tokens, normalize
from core.units import announcer, code_lines_shown, code_window, holds_values

__all__ = ["QUOTES_HEADING", "RELATED_HEADING", "Draft", "compose", "related_lines"]

# "How do I …?" wants the command: such questions get the example that follows a quoted sentence.
_HOWTO = re.compile(
    r"how (do|can|should|would) (i|we|you|one)|how to|what (command|option|flag|setting)s?|example of"
    r"|どうやって|どうすれば|どのように(して)?(使|設定|実行|指定|起動|有効)|方法|手順|やり方|コマンド|書き方",
    re.I,
)


MAX_UNITS = 7  # measured 5/6/7/8 units: 145/151/154/156 of 228 (golden+holdout+fresh); 7 keeps answers readable
PER_PASSAGE = 3
UNIT_FLOOR = 0.65  # units scoring under this share of the best are not evidence enough
REDUNDANT = 0.7  # word overlap at which a unit repeats one already chosen
REPEAT_MIN_CHARS = 20  # content words of a line shorter than this are no sign of a repeat (as in the evals)


def select_units(
    scored: Sequence[ScoredUnit], limit: int | None = None, units: Sequence[Unit] = ()
) -> list[ScoredUnit]:
    """Best units, at most PER_PASSAGE per passage, none far below the best, none that mostly repeats
    one already chosen (the same sentence in two documents, sibling table rows): each line adds news.

    A chosen lead-in will show what it announces (``followers`` among ``units``): those units are
    not chosen again and do not use up the slots of the answer."""
    ranked = sorted(scored, key=lambda s: -s.score)
    if not ranked:
        return []
    prose = [s.score for s in ranked if s.unit.kind != "code"]
    floor = (prose[0] if prose else ranked[0].score) * UNIT_FLOOR  # a long code block must not raise the bar
    limit = MAX_UNITS if limit is None else limit
    chosen: list[ScoredUnit] = []
    kept: list[set[str]] = []
    per_passage: dict[int, int] = {}
    covered: set[Unit] = set()
    for s in ranked:
        if s.score < floor or len(chosen) >= limit:
            break
        if s.unit in covered or per_passage.get(s.unit.passage, 0) >= PER_PASSAGE:
            continue
        if s.unit.kind == "code" and any(c.unit.kind == "code" for c in chosen):
            continue  # one example is enough; more would crowd out the explanation
        words = set(content_tokens(s.unit.text))
        if repeats(words, kept):
            continue
        kept.append(words)
        per_passage[s.unit.passage] = per_passage.get(s.unit.passage, 0) + 1
        chosen.append(s)
        covered.update(followers(s.unit, units))
    return chosen


def word_overlap(a: set[str], b: set[str]) -> float:
    """Share of the smaller unit's words that the other one also has (1.0 for an exact repeat)."""
    if not a or not b:
        return float(a == b)
    return len(a & b) / min(len(a), len(b))


def repeats(words: set[str], kept: Sequence[set[str]]) -> bool:
    """Whether a unit with these content words mostly repeats one already chosen (``REDUNDANT`` overlap)."""
    return any(word_overlap(words, other) >= REDUNDANT for other in kept)


@dataclass
class Draft:
    """A composed answer: the header lines (verdict, facts needed, value line, parts not stated), the quotes in
    the order a user should read them (the first ``LEAD_QUOTES`` are the lead), and their citations."""

    lines: list[str]
    citations: list[Citation]
    verdict: Verdict | None
    findings: list[Finding] = field(default_factory=list)
    quotes: list[Quote] = field(default_factory=list)

    def markdown(self, language: str) -> list[str]:
        """Every line of the answer, the header, the lead and the rest of the quotes (as one Markdown text)."""
        lead, more = lead_and_more(self.lines, self.quotes, language)[:2]
        return [*lead.splitlines(), *more.splitlines()]


def _citation(source: Passage | StoredChunk, n: int) -> Citation:
    chunk_id = source.chunk_id if isinstance(source, Passage) else source.id
    return Citation(
        n=n,
        doc_id=source.doc_id,
        chunk_id=chunk_id,
        title=source.title,
        url=source.url,
        section=source.section,
        quote="",
        verbatim=source.verbatim,
    )


class Numbering:
    """Citation numbers in order of first use, one per chunk; each citation gathers its quotes."""

    def __init__(self) -> None:
        self.by_chunk: dict[str, Citation] = {}
        self.quotes: dict[str, list[str]] = {}

    def cite(self, source: Passage | StoredChunk, quotes: Sequence[str]) -> int:
        chunk_id = source.chunk_id if isinstance(source, Passage) else source.id
        if chunk_id not in self.by_chunk:
            self.by_chunk[chunk_id] = _citation(source, len(self.by_chunk) + 1)
            self.quotes[chunk_id] = []
        for quote in quotes:
            if quote:
                add_quote(self.quotes[chunk_id], quote)
        return self.by_chunk[chunk_id].n

    def citations(self) -> list[Citation]:
        return [c.model_copy(update={"quote": "\n".join(self.quotes[cid])}) for cid, c in self.by_chunk.items()]


def add_quote(quotes: list[str], quote: str) -> None:
    """Add ``quote`` to a citation's quotes, once. A table row (quoted with its header and separator)
    joins an earlier row of the same table, so the header is shown once above all its quoted rows."""
    lines = quote.split("\n")
    if len(lines) == 3 and is_table_separator(lines[1]):
        head = "\n".join(lines[:2]) + "\n"
        for i, existing in enumerate(quotes):
            if existing.startswith(head):
                if lines[2] not in existing.split("\n")[2:]:
                    quotes[i] = f"{existing}\n{lines[2]}"
                return
    if quote not in quotes:
        quotes.append(quote)


def _words(unit: Unit) -> str:
    """A unit's content words, the key by which the same line is known in two passages; "" for a line too short
    to tell (a bare heading or "replicas: 1" may well stand in two quotes)."""
    key = " ".join(content_tokens(unit.text))
    return key if len(key) >= REPEAT_MIN_CHARS else ""


def _all_quoted(code: Unit, units: Sequence[Unit], lines: Set[Unit]) -> bool:
    """Whether every line of code block ``code`` is among ``lines`` (a block without line units never is)."""
    own = code_lines_shown(code, units)
    return bool(own) and all(u in lines for u in own)


def is_howto_question(question: str) -> bool:
    return bool(_HOWTO.search(question))


def attach_followers(
    ordered: Sequence[ScoredUnit],
    units: Sequence[Unit],
    howto: bool = False,
    scores: Mapping[Unit, float] | None = None,
    whole_lists: bool = False,
    quoted: Set[Unit] = frozenset(),
) -> tuple[list[ScoredUnit], dict[Unit, list[Unit]]]:
    """Give each lead-in unit the list, table or code it announces — and, for a how-to question, a
    unit the command example right after it; a unit shown that way is not repeated on its own line.

    A sentence that announces "three things:" gets all of them (up to MAX_FOLLOWERS). A section
    heading only stands for its table, so it gets the HEADING_ROWS rows that match the question best
    (by ``scores``), in document order. For a question asking for a list (``whole_lists``) a list item brings
    its sibling items. A sentence that brings nothing else goes on with the next sentence of its paragraph
    (with what that one announces, or not at all when it announces what is not shown), unless that one is
    ``quoted`` before these (a value's quote). Nothing is shown twice, and an answer shows
    one code block."""
    attached: dict[Unit, list[Unit]] = {}
    used: set[Unit] = {s.unit for s in ordered if s.unit.kind == "code"}
    code_shown = bool(used)
    # the code lines a quote of a code line shows already (its window), so that a lead-in does not show them again
    # as the short code block it announces ("Apply the following command…:" after that command's value quote)
    lines_quoted = {line for u in (*quoted, *(s.unit for s in ordered)) for line in code_lines_shown(u, units)}
    # the words shown so far in reading order (the value quotes come first): the same sentence can stand in two
    # passages, and is shown once, where it comes first
    shown_words = {_words(u) for u in quoted if u.kind != "code"} - {""}
    repeats: set[Unit] = set()
    # a lead-in whose list or code another quote shows already would end on a colon with nothing under it; one
    # that labels a code quote of its block is shown once, as that label (``_without_intros``)
    orphaned: set[Unit] = set()
    labels = {announcer(u, units) for u in (*quoted, *(s.unit for s in ordered))}
    placed: set[Unit] = set()  # the quotes already given their place in the reading order
    for s in ordered:
        if s.unit in used and s.unit.kind != "code":
            continue  # shown under an earlier quote, so what it would bring is not shown through it
        if s.unit.kind != "code" and _words(s.unit) in shown_words:  # "" never is
            repeats.add(s.unit)
            continue
        # an earlier quote keeps its place and what it brings: a later heading does not take it as one of its rows
        rows = brought_along(s.unit, units, scores, used | placed)
        placed.add(s.unit)
        if not rows and whole_lists and s.unit.kind == "item" and s.unit not in used:
            # a question asking for the list ("what are the ways…") gets the item's siblings with it
            rows = [u for u in siblings(s.unit, units) if u not in used][:MAX_SIBLINGS]
        if not rows and howto and not code_shown:
            code = code_after(s.unit, units)
            rows = [code] if code is not None and code not in used else []
        if not rows and s.unit.kind == "sentence":
            # a sentence goes on with the next one of its paragraph ("This is…", "It also…" say what the first
            # only starts; measured in docs/evaluation.md, "A quoted sentence brings the next one")
            rows = continuation(s.unit, units)
            after = rows[0] if rows else None
            # nor when the same words are a quote of their own (the sentence stands in another passage too)
            repeated = after is not None and any(o.unit.text == after.text and o.unit != after for o in ordered)
            taken = used | placed
            if after is None or after in taken or after in quoted or repeated:
                rows = []
            else:  # the next sentence, then what it announces that no earlier quote shows
                rows = [after, *(r for r in rows[1:] if r not in taken)]
        if code_shown:
            rows = [r for r in rows if r.kind != "code"]
        rows = [r for r in rows if not (r.kind == "code" and _all_quoted(r, units, lines_quoted))]
        rows = [r for r in rows if r.kind == "code" or _words(r) not in shown_words]
        if rows and rows[-1].kind == "sentence" and is_lead_in(rows[-1]):
            rows = rows[:-1]  # a brought sentence that announces what is not shown under it would end on a colon
        shown_words.update(_words(u) for u in (s.unit, *rows) if u.kind != "code")
        shown_words.discard("")
        code_shown = code_shown or any(r.kind == "code" for r in rows)
        if rows:
            attached[s.unit] = rows
            used.update(rows)
        elif s is not ordered[0] and s.unit not in labels and _orphaned(s.unit, units):
            orphaned.add(s.unit)
    # a heading stands for its rows: with all of them quoted already, it has nothing left to show
    bare = {s.unit for s in ordered if s.unit.kind == "heading" and s.unit not in attached and not holds_values(s.unit)}
    kept = [
        s for s in ordered if (s.unit not in used or s.unit.kind == "code") and s.unit not in bare | repeats | orphaned
    ]
    return kept, attached


_DIGIT = re.compile(r"\d")


def _orphaned(unit: Unit, units: Sequence[Unit]) -> bool:
    """A sentence or item that only announces a block the passage holds: it states no number of its own."""
    return (
        unit.kind in ("sentence", "item")
        and is_lead_in(unit)
        and not _DIGIT.search(unit.text)
        and bool(followers(unit, units))
    )


MAX_SIBLINGS = 6


def siblings(item: Unit, units: Sequence[Unit]) -> list[Unit]:
    """The other items of the list holding ``item`` (same passage, block and parent), in order."""
    return [
        u
        for u in units
        if u.kind == "item"
        and u != item
        and (u.passage, u.block, u.context) == (item.passage, item.block, item.context)
    ]


def compose(
    question: str,
    language: str,
    passages: Sequence[Passage],
    evidence: Evidence,
    verdict: Verdict | None = None,
    snap: Snapshot | None = None,
    located: Sequence[Located] = (),
    missing: Sequence[str] = (),
    needs: Sequence[str] = (),
    covering: Sequence[Unit] = (),
    whole_lists: bool = False,
    ranked: Sequence[ScoredUnit] | None = None,
    unit_scores: Mapping[Unit, float] | None = None,
) -> Draft:
    """Build the answer lines from scored units (assumes the caller decided not to refuse).

    A verdict opens the answer, citing the quote of each rule behind it. A typed question opens with the
    values found (``located``), each cited, and says which of its parts no document answers (``missing``);
    their units are quoted first, the value in bold (a code line with its neighbours, marked as from the
    block); then each other part's own best unit (``covering``), then the best other units, quoted with their
    citation numbers. Lead-ins bring along what they
    announce (from ``evidence.units``)."""
    numbering = Numbering()
    lines: list[str] = []
    if verdict is not None:
        verdict = cite_votes(verdict, lambda chunk_id: _source(chunk_id, passages, snap), numbering.cite)
        shown = verdict_lines(verdict, language)
        lines.extend(shown)
        verdict = verdict.model_copy(update={"summary": shown[0].replace("**", "")})
    if needs:
        lines.append(needs_line(needs, language))
    findings = [_cite_finding(loc, numbering, passages, evidence.units) for loc in located]
    if findings:
        lines.append(direct_line(findings, language))
    if missing:
        lines.append(missing_line(missing, language))
    value_units = list(dict.fromkeys(loc.unit for loc in located))
    scores = {s.unit: s.score for s in evidence.scored}
    if ranked is not None:  # the fitted selector's order (app.answer.lead): it covers the parts first
        chosen = [s for s in ranked if s.unit not in value_units][: max(MAX_UNITS - len(value_units), 2)]
        # every unit's probability, so that a heading brings the rows the selector rates best (not its first)
        scores = {**(unit_scores or {}), **{s.unit: s.score for s in ranked}}
    else:
        first = [ScoredUnit(u, scores.get(u, 1.0)) for u in covering if u not in value_units]
        rest = [s for s in evidence.scored if s.unit not in value_units and s.unit not in covering]
        limit = max(MAX_UNITS - len(value_units) - len(first), 2)
        chosen = first + select_units(rest, limit=limit, units=evidence.units)
    ordered, attached = attach_followers(
        chosen[: MAX_UNITS + 1], evidence.units, is_howto_question(question), scores, whole_lists, set(value_units)
    )
    against = _against(verdict, snap)
    quotes: list[Quote] = []
    for unit in value_units:
        values = [(loc.part, loc.span.text, loc.answer_type) for loc in located if loc.unit == unit]
        n = numbering.cite(
            passages[unit.passage], [*_intro_quote(unit, evidence.units), unit_quote(unit, evidence.units)]
        )
        quotes.append(make_quote(unit, n, passages[unit.passage], evidence.units, values=values, role="value"))
    for s in ordered:
        p = passages[s.unit.passage]
        with_followers = [s.unit, *attached.get(s.unit, [])]
        n = numbering.cite(p, [*_intro_quote(s.unit, evidence.units), *(u.quote for u in with_followers)])
        original = ""
        if p.translation_of and snap is not None:
            # a translation is not the publisher's wording: the original's words go with it
            original = " / ".join(u.text for u in original_units(p, [u.quote for u in with_followers if u.quote], snap))
        role: QuoteRole = "against" if normalize(s.unit.quote) in against else "support"
        quotes.append(
            make_quote(
                s.unit, n, p, evidence.units, attached=attached.get(s.unit, []), role=role, score=s.score,
                original=original,
            )
        )  # fmt: skip
    return Draft(lines, numbering.citations(), verdict, findings, _without_intros(_without_shown_windows(quotes)))


def _intro_quote(unit: Unit, units: Sequence[Unit]) -> list[str]:
    """The verbatim sentence announcing a code quote (cited with it, shown as its label), or nothing."""
    announcing = announcer(unit, units)
    return [announcing.quote] if announcing is not None else []


def _code_lines(text: str) -> set[str]:
    """A code text's non-blank lines, stripped, without fences (a window is dedented, its block is not)."""
    return {line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(("```", "~~~"))}


def _without_shown_windows(quotes: Sequence[Quote]) -> list[Quote]:
    """The quotes minus a code window whose whole block another quote of the same chunk shows (a code block, or
    what a lead-in brings): the block is shown once, in the earlier of their two places."""
    out = list(quotes)
    for window in [q for q in quotes if q.kind == "code_line"]:
        lines = _code_lines(window.text)
        whole = next(
            (
                q
                for q in out
                if q is not window and q.chunk_id == window.chunk_id and lines
                and any(lines <= _code_lines(code) for code in _codes(q))
            ),
            None,
        )  # fmt: skip
        if whole is not None:
            out = _in_earlier_place(out, drop=window, keep=whole)
    return out


def _in_earlier_place(quotes: list[Quote], drop: Quote, keep: Quote) -> list[Quote]:
    """``quotes`` without ``drop``, and ``keep`` in the earlier of the two places (it shows what ``drop`` did)."""
    at = min(quotes.index(drop), quotes.index(keep))
    out = [q for q in quotes if q is not drop and q is not keep]
    out.insert(at, keep)
    return out


def _codes(quote: Quote) -> list[str]:
    """The code a quote shows: its own block, or the blocks it brings along."""
    if quote.kind == "code":
        return [quote.text]
    return [text for text, kind in zip(quote.followers, quote.follower_kinds, strict=False) if kind == "code"]


def _without_intros(quotes: Sequence[Quote]) -> list[Quote]:
    """The quotes minus a sentence quoted on its own that a code quote of the same chunk shows as its label
    ("Install the slurm-operator and its CRDs:" above its command): it is shown once, with what it announces,
    and the code quote takes the earlier of their two places. Of two windows of one block, the first is labelled."""
    out = list(quotes)
    for code in [q for q in quotes if q.intro]:
        alone = next(
            (
                q
                for q in out
                if q.kind in ("sentence", "item") and not q.followers and q.role == "support"
                and (q.chunk_id, q.text) == (code.chunk_id, code.intro)
            ),
            None,
        )  # fmt: skip
        if alone is not None:
            out = _in_earlier_place(out, drop=alone, keep=code)
    # two windows of one block: the announcing sentence labels the first only
    labelled: set[tuple[str, str]] = set()
    for i, q in enumerate(out):
        if q.intro and (q.chunk_id, q.intro) in labelled:
            out[i] = q.model_copy(update={"intro": ""})
        labelled.add((q.chunk_id, q.intro))
    return out


def _source(chunk_id: str, passages: Sequence[Passage], snap: Snapshot | None) -> Passage | StoredChunk | None:
    """Where a rule's quote is cited from: a retrieved passage, else the index (a verdict never depends on
    what ranked)."""
    found = next((p for p in passages if p.chunk_id == chunk_id), None)
    return found if found is not None or snap is None else snap.chunks.get(chunk_id)


def unit_quote(unit: Unit, units: Sequence[Unit]) -> str:
    """The verbatim quote of a unit: a code line with the lines around it (never the whole block)."""
    return code_window(unit, units) if unit.kind == "code_line" else unit.quote


def _cite_finding(loc: Located, numbering: Numbering, passages: Sequence[Passage], units: Sequence[Unit]) -> Finding:
    n = numbering.cite(passages[loc.unit.passage], [unit_quote(loc.unit, units)])
    return Finding(part=loc.part, value=loc.span.text, answer_type=loc.answer_type, n=n)


def direct_line(findings: Sequence[Finding], language: str) -> str:
    """The direct answer: each value in bold with its citation, parts in order ("**v1beta2** [1]; **topologyName** [2]")."""
    label = "回答" if language == "ja" else "Answer"
    shown = list(dict.fromkeys(f"**{f.value}** [{f.n}]" for f in sorted(findings, key=lambda f: (f.part, f.n))))
    return f"**{label}:** " + "; ".join(shown)


def needs_line(needs: Sequence[str], language: str) -> str:
    """A selection question that states no deciding fact: ask for the facts the documents' rules decide on."""
    if language == "ja":
        return "**判定には状況が必要です:** 次の点を教えてください — " + "、".join(needs)
    return "**To recommend a platform I need your situation:** tell me about " + ", ".join(needs)


def missing_line(asked: Sequence[str], language: str) -> str:
    """A part of the question that no document answers, said as plainly as the values found."""
    parts = " / ".join(a.strip().rstrip("?？") for a in asked)
    if language == "ja":
        return f"**資料に記載なし:** 「{parts}」"
    return f"**Not stated in the documents:** “{parts}”"


def bold_first(text: str, span: str) -> str:
    """``text`` with the first ``span`` outside a link's address in bold (once: a span already bold stays)."""
    if f"**{span}**" in text:
        return text
    at = without_links(text).find(span)
    return text if at < 0 else f"{text[:at]}**{span}**{text[at + len(span) :]}"


RELATED = 3  # passages a not-stated answer shows as related (never as the answer)


def related_lines(language: str, passages: Sequence[Passage], evidence: Evidence) -> Draft:
    """Under a "not stated" line: the closest passages' best sentences, labelled as not an answer."""
    numbering = Numbering()
    best: dict[int, ScoredUnit] = {}
    for s in evidence.scored:
        # a related line stands alone: one that announces a list or code it does not show ("…supports:") says nothing
        if s.unit.kind in ("code", "code_line", "heading") or is_lead_in(s.unit):
            continue
        if s.unit.passage not in best or s.score > best[s.unit.passage].score:
            best[s.unit.passage] = s
    # the same sentence can stand in two passages (overlapping chunks, two pages): each related line adds news
    top: list[ScoredUnit] = []
    kept: list[set[str]] = []
    for s in sorted(best.values(), key=lambda s: -s.score):
        words = set(content_tokens(s.unit.text))
        if len(top) < RELATED and not repeats(words, kept):
            top.append(s)
            kept.append(words)
    quotes = []
    for s in top:
        n = numbering.cite(passages[s.unit.passage], [s.unit.quote])
        quotes.append(make_quote(s.unit, n, passages[s.unit.passage], evidence.units, role="related"))
    return Draft([], numbering.citations(), None, quotes=quotes)


def _against(verdict: Verdict | None, snap: Snapshot | None) -> frozenset[str]:
    """The quotes of the rules that recommend another platform than the verdict (never for "it depends")."""
    if verdict is None or snap is None or verdict.value == "depends":
        return frozenset()
    supporting = {verdict.value} | ({"slurm", "kubernetes"} if verdict.value == "hybrid" else set())
    return frozenset(normalize(r.quote) for r in snap.rules if r.verdict not in supporting)
