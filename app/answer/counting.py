"""What a quantity counts (pure): "16 nodes" answers "how many machines" but not "how many rings".

A question's counted thing ("machines", "リング") is compared with the unit word after a value's number;
counters that count the same thing (machines, nodes, servers, 台) match, a number followed by another counter
("2 GPUs per node") does not, and a word may sit between the number and what it counts ("1 management node").

Deliberately left out: units of measure (conversions between GB and GiB, or hours and minutes).
"""

from __future__ import annotations

import re

from app.answer.values import Span
from app.retrieval.bridge import english_words
from core.text import normalize

_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|sixteen"


# Counters and the unit words that count the same thing.
_MACHINES = ("node", "machine", "server", "host", "台", "ノード")
_SAME_UNIT = {
    "台": _MACHINES,
    "ノード": _MACHINES,
    **dict.fromkeys(("node", "machine", "server", "host"), _MACHINES),
    "秒": ("s", "sec", "second", "秒"),
    "分": ("min", "minute", "分"),
    "時間": ("h", "hour", "時間"),
    "日": ("day", "日"),
    "回": ("time", "回"),
    "倍": ("x", "time", "倍"),
    "層": ("layer", "level", "層"),
    "段": ("level", "layer", "段"),
    "%": ("%", "percent"),
    "percent": ("%", "percent"),
    "円": ("円",),
    "万円": ("円", "万円"),
}
# Unit words that count something of their own: a number with one of them counts that, not the asked thing.
_OTHER_COUNTERS = frozenset(
    [
        *("gpu", "cpu", "pod", "core", "job", "task", "rank", "slot", "replica", "worker"),
        *("m", "sec", "second", "min", "minute", "h", "hour", "day", "week", "month", "year", "time", "x"),
        *("gb", "mb", "kb", "tb", "gib", "mib", "percent", "%", "layer", "level", "version", "release"),
    ]
)  # singular: a unit word is compared without its plural "s" ("ms" → "m")
_WORD_COUNT = re.compile(rf"^(?:{_NUMBER_WORDS})((?:\s+[a-z][\w-]*){{1,3}})")
# The unit word right after a value's number ("16 nodes can be…" → nodes, "3層" → 層).
_COUNTED_UNIT = re.compile(r"\d[\d.,]*\s*(?:[~〜–-]\s*\d[\d.,]*\s*)?(%|[a-z]+|[\u3040-\u30ff\u4e00-\u9fff]+)")


def counts(value: str, counted: str) -> bool:
    """Does a quantity ``value`` count what the question counts? A value with no unit word may; one whose unit
    is another thing does not. ``counted`` empty: anything counts."""
    if not counted:
        return True
    words = normalize(value)
    m = _COUNTED_UNIT.search(words)
    unit = m.group(1) if m else ""
    if not m and (n := _WORD_COUNT.search(words)):
        # a number word: what follows within two words ("seven MIG slices")
        return any(counts(f"1 {w}", counted) for w in n.group(1).split())
    if not unit or unit.isdigit():
        return True
    wanted = counted_words(counted)
    if unit.rstrip("s") in wanted or any(unit.startswith(w) for w in wanted if len(w) > 2 or not w.isascii()):
        return True
    if unit.rstrip("s") in _OTHER_COUNTERS:
        return False  # "2 GPUs per node" counts GPUs, not nodes
    # a word between the number and what it counts: "1 management node", "3 control-plane nodes"
    return m is not None and any(w.rstrip("s") in wanted for w in words[m.end() :].split()[:2])


def counted_words(counted: str) -> set[str]:
    """The unit words that count what ``counted`` names, singular and lower case ("machines" → node, server…)."""
    glossed = english_words(f"w:{counted}") if not counted.isascii() else []
    same = _SAME_UNIT.get(counted, ()) or _SAME_UNIT.get(counted.rstrip("s"), ())
    return {w.rstrip("s").lower() for w in (counted, counted.rstrip("s"), *same, *glossed) if w}


def count_spans(text: str, counted: str) -> list[Span]:
    """ "how many entries": a number with what is counted right after it ("keeps 17 entries", "seven MIG
    slices"), the count and the thing together."""
    things = [re.escape(w) for w in sorted(counted_words(counted)) if w.isascii() and len(w) > 2]
    if not things:
        return []
    pattern = rf"\b(?:\d+|{_NUMBER_WORDS})(?:\s+[A-Za-z][\w-]*){{0,2}}?\s+(?:{'|'.join(things)})\w*"
    return [Span(m.start(), m.end(), m.group()) for m in re.finditer(pattern, text, re.I)]
