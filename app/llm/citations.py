"""Clean-up of an LLM's answer text (pure): citation markers, reasoning blocks, uncited sentences.

``finalize_llm_answer`` removes markers that point at no passage ([0], [99], [abc], in any bracket
style a model writes), renumbers the cited passages 1..m in order of first use, builds ``Citation``
objects and flags sentences with no citation, so the UI can mark them as unsupported. Code spans are
left alone: ``a[1]`` inside a command is not a marker.

Deliberately left out: checking that a cited passage really entails its sentence (flagging uncited
sentences is the guarantee we give) and anything that talks to a model (``app.llm.backends``).
"""

from __future__ import annotations

import re
import unicodedata

from app.models import MARKER, Citation, Passage
from core import markdown as md

# The exact sentence the prompt asks a model to answer with when the passages do not support an answer.
REFUSALS = {
    "en": "The knowledge base does not contain enough information to answer this question.",
    "ja": "ナレッジベースには、この質問に答えるための十分な情報がありません。",
}
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL)


def strip_reasoning(text: str) -> str:
    """``"<think>plan</think>Answer [1]."`` → ``"Answer [1]."``; an unclosed block hides the rest."""
    return _THINK.sub("", text).lstrip() if "<think>" in text else text


# What a model writes: [1] [1, 2] [1-3] ［１、２］ 【1】 [^1] and bogus [abc]; "(?!\()" keeps Markdown links [text](url)
# intact. Looser than app.models.MARKER on purpose: that one matches only the clean [n] written back.
_MARKER = re.compile(r"[\[［【](?P<body>[^\[\]［］【】\n]{1,40})[\]］】](?!\()")
_NUMBER = re.compile(r"[\^#]?(\d+)")
_RANGE = re.compile(r"(\d+)\s*[-–~〜]\s*(\d+)")
_BOGUS = re.compile(r"[\^#]?[A-Za-z0-9_]{1,15}")
_TERMINATOR = re.compile(r"[。！？]+|[.!?]+(?=[\s\[]|$)")
_TRAILER = re.compile(r"[」』）)\"'”’]*(?:[ \t]*\[\d+\])*")
_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs", "cf", "fig", "approx", "no", "dr", "mr", "ms"}
_GAP = "\x00"  # stands where a marker was removed until the surrounding spaces are tidied


def _marker_numbers(body: str) -> list[int] | None:
    """``"1, 2"`` → ``[1, 2]``; ``"２-３"`` → ``[2, 3]``; ``"abc"`` → ``[]`` (bogus); prose → None."""
    body = _RANGE.sub(r"\1-\2", unicodedata.normalize("NFKC", body))
    tokens = [t for t in re.split(r"[,、;\s]+", body) if t]
    if not tokens:
        return None
    numbers: list[int] = []
    for token in tokens:
        if m := re.fullmatch(r"(\d+)-(\d+)", token):
            lo, hi = int(m[1]), int(m[2])
            numbers += list(range(lo, hi + 1)) if 0 < hi - lo < 20 else [lo, hi]
        elif m := _NUMBER.fullmatch(token):
            numbers.append(int(m[1]))
        else:
            return [] if len(tokens) == 1 and _BOGUS.fullmatch(token) else None
    return numbers


def _close_gaps(text: str) -> str:
    """``"fast \\x00."`` → ``"fast."``; ``"a \\x00 b"`` → ``"a b"``: no stray spaces where markers were."""
    text = re.sub(rf"(?m)^{_GAP}+[ \t]*", "", text)
    text = re.sub(rf"[ \t]*{_GAP}+(?=[ \t]|[.。,、!?！？:：)]|$)", "", text, flags=re.MULTILINE)
    return text.replace(_GAP, "")


def strip_markers(text: str) -> str:
    """``"Slurm [1][2]."`` → ``"Slurm."``: every citation-like marker removed (for history, plain text)."""

    def drop(m: re.Match[str]) -> str:
        return _GAP if _marker_numbers(m["body"]) is not None else m[0]

    return _close_gaps(_MARKER.sub(drop, text))


def _renumber(text: str, n_passages: int, order: list[int]) -> str:
    """Rewrite markers outside code: valid ones to their new numbers (``order`` grows), others removed."""

    def rewrite(m: re.Match[str]) -> str:
        numbers = _marker_numbers(m["body"])
        if numbers is None:
            return m[0]
        new: list[int] = []
        for p in numbers:
            if 1 <= p <= n_passages:
                if p not in order:
                    order.append(p)
                if order.index(p) + 1 not in new:
                    new.append(order.index(p) + 1)
        return "".join(f"[{n}]" for n in new) or _GAP

    out = _close_gaps(_MARKER.sub(rewrite, text))
    return re.sub(r"(\[\d+\])(?:[ \t]*\1)+", r"\1", out)  # "[1][1]" → "[1]"


def split_sentences(text: str) -> list[str]:
    """Sentences of Markdown text, each with its trailing markers.

    ``"Slurm queues jobs.[1] K8s runs pods [2]。次です！"`` → ``["Slurm queues jobs.[1]", "K8s runs pods
    [2]。", "次です！"]``. The text is read by ``core.markdown``; lines are split first (list items, table
    rows). Headings, code, table header rows and delimiter rows claim nothing; list bullets and quote
    markers are not part of a sentence; "e.g." and "3.5" do not end a sentence.
    """
    sentences: list[str] = []
    for line in _claiming_lines(text):
        start = 0
        for m in _TERMINATOR.finditer(line):
            if m.end() <= start or (m[0] == "." and _is_abbreviation(line, m.start())):
                continue
            trailer = _TRAILER.match(line, m.end())
            stop = trailer.end() if trailer else m.end()
            if piece := line[start:stop].strip():
                sentences.append(piece)
            start = stop
        if rest := line[start:].strip():
            sentences.append(rest)
    return sentences


def _claiming_lines(text: str) -> list[str]:
    """The lines of prose (paragraphs, list items, quotes) and table body rows, stripped, in order."""
    source = md.lines(text)
    lines: list[str] = []
    for block in md.walk(md.parse(text)):
        if block.kind in ("paragraph", "html"):
            lines.extend(line.strip() for line in block.text.split("\n"))
        elif block.kind == "table":
            lines.extend(source[n].lstrip(" \t>").strip() for n in range(block.start + 2, block.end))
    return [line for line in lines if line and not md.is_delimiter_row(line)]


def _is_abbreviation(line: str, dot: int) -> bool:
    word = re.search(r"([A-Za-z]+(?:\.[A-Za-z]+)*)$", line[:dot])
    return word is not None and word[1].lower() in _ABBREVIATIONS


def _prose(text: str) -> str:
    return "".join(piece for piece, code in md.split_code(text) if not code)


def is_refusal(text: str) -> bool:
    """True when ``text`` is one of the fixed refusal sentences the prompt asks for (ignoring spacing)."""
    plain = " ".join(strip_markers(text).split())
    return any(plain == refusal for refusal in REFUSALS.values())


def finalize_llm_answer(text: str, passages: list[Passage]) -> tuple[str, list[Citation], list[str]]:
    """Clean the model's final text → (Markdown with markers 1..m, citations, flagged sentences).

    ``"A [2]. B [9]. C [2][1]."`` with 3 passages → ``("A [1]. B. C [1][2].", [cite p2, cite p1], ["B."])``.
    Markers pointing at no passage ([0], [99], [abc]) are removed; cited passages are renumbered in order
    of first appearance; code spans are left alone; a sentence without a valid marker is flagged unless it
    is a refusal or a lead-in ending in ":".
    """
    text = strip_reasoning(text).strip()
    order: list[int] = []
    pieces = md.split_code(text)  # markers are rewritten outside code only: ``a[1]`` in a command stays
    cleaned = "".join(piece if code else _renumber(piece, len(passages), order) for piece, code in pieces).strip()
    citations = [
        Citation(
            n=n,
            doc_id=passages[p - 1].doc_id,
            chunk_id=passages[p - 1].chunk_id,
            title=passages[p - 1].title,
            url=passages[p - 1].url,
            section=passages[p - 1].section,
            quote=passages[p - 1].text,
            verbatim=passages[p - 1].verbatim,
        )
        for n, p in enumerate(order, 1)
    ]
    flagged = [
        sentence
        for sentence in split_sentences(cleaned)
        if not MARKER.search(_prose(sentence))  # a marker the renderer will link
        and re.search(r"\w", sentence)
        and not sentence.endswith((":", "："))
        and not is_refusal(sentence)
    ]
    return cleaned, citations, flagged


def drop_unsupported(text: str, flagged: list[str]) -> str:
    """The answer without its flagged (uncited) sentences: ``"A [1]. B. C [1]."``, ``["B."]`` → ``"A [1].  C [1]."``.

    A list item left empty goes too; code blocks and indentation are kept as they are.
    """
    for sentence in flagged:
        text = text.replace(sentence, "", 1)
    lines = [line.rstrip() for line in text.splitlines()]
    lines = [line for line in lines if not re.fullmatch(r"\s*(?:[-*+]|\d+[.)])", line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
