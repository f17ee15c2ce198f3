"""Quotes as data (pure): an evidence unit → the typed ``Quote`` an answer shows, and a quote → Markdown.

A quote keeps what every renderer needs: the shown text (table cells labelled by their header), the
verbatim Markdown (a row under its header, a code window), where the unit sits in its chunk, the values of
the value line inside it, what a lead-in brings along, and its role (the value's unit, support, an argument
against the verdict, or related text under "not stated"). The CLI's Markdown is one rendering of it
(``quote_lines``); the web UI draws HTML from the same fields.

    >>> from core.units import split_units
    >>> from app.models import Passage
    >>> p = Passage(chunk_id="d#0", doc_id="d", title="D", text="The default is 5 s.")
    >>> q = make_quote(split_units(p.text)[0], 1, p, [])
    >>> (q.text, q.start, q.end), quote_lines(q, "en")
    (('The default is 5 s.', 0, 19), ['- The default is 5 s. [1]'])

Deliberately left out: choosing and ordering quotes (``app.answer.compose``) and HTML (``app.web``).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.answer.values import without_links
from app.models import AnswerType, Passage, Quote, QuoteRole, ValueSpan
from core.text import join_sentences
from core.units import Unit, announcer, code_language, code_window, unit_keys

# The quotes a user reads first; the rest is folded under "More from the documents".
LEAD_QUOTES = 3
# The lines that open an answer's quoted evidence, by language (the web UI's labels say the same).
QUOTES_HEADING = {"en": "From the knowledge base:", "ja": "ナレッジベースの該当箇所:"}
RELATED_HEADING = {"en": "Related, but not an answer:", "ja": "関連する記述（回答ではありません）:"}


def make_quote(
    unit: Unit,
    n: int,
    passage: Passage,
    units: Sequence[Unit],
    *,
    attached: Sequence[Unit] = (),
    values: Sequence[tuple[int, str, AnswerType]] = (),
    role: QuoteRole = "support",
    score: float | None = None,
    original: str = "",
) -> Quote:
    """The quote of ``unit`` (cited as ``n``); ``values`` are (part, value, type) shown in bold."""
    if unit.kind == "code_line":
        text = markdown = code_window(unit, units)
    else:
        text, markdown = unit.text, unit.quote
    start, end = _offsets(passage.text, unit)
    announcing = announcer(unit, units)
    spans = []
    for part, value, answer_type in values:
        at = without_links(text).find(value)
        if at >= 0:
            spans.append(ValueSpan(part=part, value=value, answer_type=answer_type, start=at, end=at + len(value)))
    return Quote(
        about=about(unit),
        intro=announcing.text if announcing is not None else "",
        n=n,
        doc_id=passage.doc_id,
        chunk_id=passage.chunk_id,
        title=passage.title,
        section=passage.section,
        kind=unit.kind,
        text=text,
        markdown=markdown,
        code_language=code_language(unit) if unit.kind in ("code", "code_line") else "",
        start=start,
        end=end,
        language=passage.language,
        values=spans,
        followers=[u.text for u in attached],
        follower_kinds=[u.kind for u in attached],
        follower_markdown=[u.quote for u in attached],
        role=role,
        score=None if score is None else round(score, 4),
        translation_of=passage.translation_of,
        original=original,
    )


def about(unit: Unit) -> str:
    """The term of a definition list that sentence ``unit`` belongs to, when the sentence does not name it: a
    parameter reference flattened into one paragraph ("PriorityCalcPeriod: The period … The default value is 5
    (minutes).") says only in its first sentence what the next ones are about. "" for anything else.

    >>> from core.units import split_units
    >>> [about(u) for u in split_units("CalcPeriod: The period. The default is 5. MaxAge: The age. The default is 7.")]
    ['', 'CalcPeriod', '', 'MaxAge']
    """
    if unit.kind != "sentence":
        return ""
    terms = [t.strip() for t in unit_keys(unit).split(" > ") if t.strip()]
    return " › ".join(terms) if terms and terms[-1] not in unit.text else ""


def _offsets(text: str, unit: Unit) -> tuple[int, int]:
    """Where the unit's own source sits in its chunk (a table row: its row line), or (-1, -1)."""
    source = unit.quote.split("\n")[-1] if unit.kind == "row" else unit.quote
    at = text.find(source) if source else -1
    return (at, at + len(source)) if at >= 0 else (-1, -1)


def bolded(quote: Quote) -> str:
    """The quote's shown text with its values in bold (each once, outside link addresses)."""
    text = quote.text
    for span in sorted(quote.values, key=lambda s: -s.start):
        if text[span.start : span.end] == span.value and f"**{span.value}**" not in text:
            text = f"{text[: span.start]}**{span.value}**{text[span.end :]}"
    return text


def going_on(quote: Quote) -> list[str]:
    """The sentences a sentence quote goes on with (the rest of its paragraph it brings), in order; every
    renderer continues the quote's own line with them (``core.text.join_sentences``)."""
    kinds = quote.follower_kinds
    return [text for i, text in enumerate(quote.followers) if i < len(kinds) and kinds[i] == "sentence"]


def quote_lines(quote: Quote, language: str) -> list[str]:
    """One quote as Markdown list lines: prose with its values in bold, a code window or block as a fenced
    block under a label, a lead-in with what it announces nested under it."""
    ja = language == "ja"
    if quote.kind == "code_line":
        label = "コード例より" if ja else "From the code example"
        body = [f"  ```{quote.code_language}", *("  " + line for line in quote.text.splitlines()), "  ```"]
        return [f"- {quote.intro} [{quote.n}]" if quote.intro else f"- {label} [{quote.n}]:", *body]
    if quote.kind == "code":
        label = f"{quote.intro} [{quote.n}]" if quote.intro else f"{'例' if ja else 'Example'} [{quote.n}]:"
        return [f"- {label}", *("  " + line for line in quote.text.splitlines())]
    about = f"*{quote.about}* — " if quote.about else ""
    lines = [f"- {about}{join_sentences([bolded(quote), *going_on(quote)])} [{quote.n}]"]
    for text, kind in zip(quote.followers, quote.follower_kinds, strict=False):
        if kind != "sentence":
            lines.extend(("  " + line for line in text.splitlines()) if kind == "code" else [f"  - {text}"])
    return lines


def quotes_markdown(quotes: Sequence[Quote], language: str) -> list[str]:
    return [line for q in quotes for line in quote_lines(q, language)]


def lead_and_more(
    header: Sequence[str], quotes: Sequence[Quote], language: str, *, related: bool = False
) -> tuple[str, str, list[Quote], list[Quote]]:
    """The answer's Markdown split where a user stops reading: the header lines and the first ``LEAD_QUOTES``
    quotes (under "From the knowledge base:", or "Related, but not an answer:"), then the rest."""
    lead, more = list(quotes[:LEAD_QUOTES]), list(quotes[LEAD_QUOTES:])
    lines = list(header)
    if lead:
        lines.append((RELATED_HEADING if related else QUOTES_HEADING)["ja" if language == "ja" else "en"])
        lines.extend(quotes_markdown(lead, language))
    return "\n".join(lines), "\n".join(quotes_markdown(more, language)), lead, more
