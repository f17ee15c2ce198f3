"""Typed-value detectors (pure): where a text states a value of the kind a question asks for.

Each answer type has a small set of patterns for the values documentation writes: versions (``v0.8.2``,
``1.12+``), API groups (``kueue.x-k8s.io/v1beta2``), flags (``--container-image``, ``-C``), keys
(``topologyName``, ``ENROOT_DATA_PATH``, ``kai.scheduler/topology``, ``GresTypes=gpu``), quantities
(``16 nodes``, ``80–95%``, ``1 μs``, ``3層``), dates (``2026/03``, ``2003``) and names (code spans,
CamelCase and kebab-case identifiers, ALL-CAPS signals). ``split_identifier`` lets question words meet
identifiers ("parent queue" ↔ ``parentQueue``).

    >>> [s.text for s in find_values("api_version", "apiVersion: kueue.x-k8s.io/v1beta2")]
    ['kueue.x-k8s.io/v1beta2']

Deliberately left out: units conversion and validation of what a value means; a value is a span of the
document's own text, quoted as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from core.units import SHELL_LANGS

# a version may sit in a release URL (".../mpi-operator/v0.8.2/deploy/...")
_VERSION = r"(?<![\w.-])v?\d+\.\d+(?:\.\d+)?(?:[-.][0-9a-z]+)*\+?(?![\w])"
_API = r"(?<![\w./-])(?:[a-z0-9-]+\.)+[a-z]{2,}/v\d+(?:(?:alpha|beta)\d+)?(?![\w.-])|(?<=apiVersion: )v\d+(?:(?:alpha|beta)\d+)?"
_FLAG = r"(?<![\w-])--[a-zA-Z][\w.-]*(?:=[^\s,;)`'\"]+)?|(?<![\w-])-[a-zA-Z](?![\w-])|(?<![\w-])--set\s+[\w.-]+=\S+"
# A flag's argument after a space ("--namespace slinky"): taken in a command line, or in prose when it looks like a
# value rather than a word of the sentence ("--rack-label to name…").
_FLAG_ARG = re.compile(r"\s+(?!-)([^\s,;)`'\"]+)")
_VALUE_LIKE = re.compile(r"[\d/.:=<>$]|^[A-Z_]{2,}$")
_ENV = r"(?<![\w.-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:=\S+)?(?![\w-])"
_CAMEL = (
    r"(?<![\w.-])[a-z]+(?:[A-Z][a-z0-9]*)+(?![\w-])|(?<![\w.-])[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+(?:=[^\s,;`]+)?(?![\w-])"
)
_SNAKE = r"(?<![\w.-])[a-z]+(?:_[a-z0-9]+)+(?![\w-])"
_QUALIFIED = r"(?<![\w./-])(?:[a-z0-9-]+\.)+[a-z0-9-]+/[A-Za-z0-9._-]+(?:=[\w.-]*)?(?![\w/])"
_ASSIGN = r"(?<![\w.-])[A-Za-z][\w.]*=[^\s;`)]+"
_YAML_KEY = r"^\s*-?\s*([A-Za-z][\w.-]*):(?=\s|$)"
_PATH = r"(?<![\w.-])(?:/[\w.@-]+){2,}/?|(?<![\w/-])[\w-]+\.(?:conf|yaml|yml|json|toml|sqsh|sock|service|d)(?![\w-])"
_CODE_SPAN = r"`([^`\n]{2,80})`"
_NUMBER = r"\d+(?:[.,]\d+)*"
_UNITS = (
    r"%|％|percent|ms|μs|us|ns|s\b|sec(?:ond)?s?|min(?:ute)?s?|h(?:ours?)?\b|days?|weeks?|months?|years?|gb/s|gbps|gib|gb"
    r"|mib|mb|kb|tb|tflops|nodes?|gpus?|cpus?|pods?|cores?|jobs?|layers?|levels?|times|x\b|倍|台|個|回|秒|分|時間|日|年|層|段|人|割"
    r"|ノード|枚|件|円|万円|ドル|millicores|megabytes"
)
_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|a few|several|dozens|hundreds|thousands|millions|tens of thousands)"
    r"(?: \(\d+\))?"  # "fourteen (14) months": the digits repeated in brackets
)
_QUANTITY = (
    # not a digit inside a name ("kueue.x-k8s.io" holds no "8s"); ASCII only, so "年2回" still counts
    rf"(?:[$¥€]\s?)?(?<![A-Za-z0-9_.-]){_NUMBER}(?:\s*(?:[-–~〜]|to)\s*{_NUMBER})?\s*(?:{_UNITS})"
    rf"|(?:up to|at most|maximum of|max)\s+{_NUMBER}(?:\s*(?:{_UNITS}))?"
    rf"|\b{_NUMBER_WORD}(?: of)?(?: \w+){{0,2}} (?:{_UNITS}|releases|versions|nodes|clusters|machines|minor releases)\b"
    # a measure written as one hyphenated modifier: "the two-month maintenance period", "a 12-month window"
    rf"|\b(?:{_NUMBER_WORD}|\d+)-(?:day|week|month|year|hour|minute|second|node|gpu)s?\b"
    r"|\b(?:once|twice|\w+ times)(?: or (?:once|twice|\w+ times))? (?:a|per|each) (?:year|month|week|day)\b"
    # a frequency answers "how often": "every month", "monthly", "毎月", "月次"
    r"|\bevery (?:\d+ )?(?:day|week|month|year|hour|minute|second)s?\b|\b(?:hourly|daily|weekly|monthly|yearly|annually)\b"
    r"|毎(?:月|週|日|年)|月次|週次|日次"
    # a quantity keeps its unit: "数百 MB", "数万ノード", "maximum of 16 nodes"
    rf"|数(?:十万|十|百|千|万)\s?(?:{_UNITS})?|年\s?\d(?:\s?[~〜–-]\s?\d)?\s?回"
)
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = (
    rf"(?<!\d)(?:19|20)\d{{2}}[-/.](?:0?[1-9]|1[0-2])(?:[-/.]\d{{1,2}})?(?!\d)|{_MONTHS}\s+\d{{1,2}},?\s+(?:19|20)\d{{2}}"
    rf"|{_MONTHS}\s+(?:19|20)\d{{2}}|(?:19|20)\d{{2}}年(?:\s*\d{{1,2}}月(?:\s*\d{{1,2}}日)?)?|(?<![\d.])(?:19|20)\d{{2}}(?![\d.])"
)
_KEBAB = r"(?<![\w./-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-])"
_CAPS = r"(?<![\w-])[A-Z]{3,}[0-9]*(?![\w-])"
_METHOD = r"(?<![\w.])[A-Z][A-Za-z0-9]+\s?\(\)?"

PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "api_version": (re.compile(_API),),
    "version": (re.compile(_VERSION, re.I),),
    "flag": (re.compile(_FLAG),),
    "key": tuple(re.compile(p, re.M) for p in (_QUALIFIED, _ENV, _ASSIGN, _CAMEL, _SNAKE, _YAML_KEY)),
    "quantity": (re.compile(_QUANTITY, re.I),),
    # "since when" is often answered with the release that brought it ("introduced in v0.15")
    "date": (re.compile(_DATE, re.I), re.compile(r"(?<![\w./-])v\d+\.\d+(?:\.\d+)?(?![\w/])")),
    "name": tuple(re.compile(p) for p in (_CODE_SPAN, _QUALIFIED, _PATH, _CAMEL, _KEBAB, _CAPS, _METHOD)),
    "path": (re.compile(_PATH),),
}
# A default is any value stated beside the word "default"; a command is a whole shell line.
_DEFAULT_VALUE = re.compile(
    rf"(?i:{_QUANTITY})|(?i:\b(?:true|false|enabled|disabled|none|null)\b)|{_VERSION}|{_CAMEL}|{_ENV}|`[^`\n]+`|\b{_NUMBER}\b"
)
_SHELL_START = re.compile(r"^\s*(?:\$\s+|#\s+)?(?:sudo\s+)?[a-z][\w.-]*(?:\s|$)")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


def _spans(pattern: re.Pattern[str], text: str) -> list[Span]:
    out = []
    for m in pattern.finditer(text):
        group = 1 if pattern.groups and m.group(1) else 0
        value = m.group(group).strip().rstrip(".,:;")
        if value:
            out.append(Span(m.start(group), m.start(group) + len(value), value))
    return out


# In prose, a link's address is where the text points, not what it states: "[Enroot](https://github.com/
# NVIDIA/enroot)" holds no path or key the user asked for. A command's URL is part of the command, and a
# release is often only in its download URL (".../mpi-operator/v0.8.2/deploy/..."): code lines and versions
# keep theirs.
_LINK_TARGET = re.compile(r"\]\([^)\s]+\)|<https?://[^>\s]+>|https?://[^\s)>\]]+")


def without_links(text: str) -> str:
    """``text`` with every link address blanked out (same length, so spans keep their offsets)."""
    return _LINK_TARGET.sub(lambda m: " " * len(m.group()), text)


def find_values(answer_type: str, text: str, *, code_lang: str | None = None) -> list[Span]:
    """Spans of ``text`` that are values of ``answer_type``, in order, without overlaps. ``code_lang`` is the
    block's language when ``text`` is a line of code (None for prose): a command is a shell line. A link's
    address in prose is not a value (but for a version)."""
    if code_lang is None and answer_type != "version":
        text = without_links(text)
    if answer_type == "command":
        return _command(text, code_lang)
    if answer_type == "default":
        return _dedupe(_spans(_DEFAULT_VALUE, text))
    found = [s for p in PATTERNS.get(answer_type, ()) for s in _spans(p, text)]
    if answer_type == "flag":
        found = [_with_argument(s, text, code_lang is not None) for s in found]
    return _dedupe(found)


def _with_argument(span: Span, text: str, in_code: bool) -> Span:
    """A long flag with the argument that follows it after a space, where that is one (see ``_FLAG_ARG``)."""
    if not span.text.startswith("--") or "=" in span.text:
        return span
    m = _FLAG_ARG.match(text, span.end)
    if m is None or not (in_code or _VALUE_LIKE.search(m.group(1))):
        return span
    return Span(span.start, m.end(1), text[span.start : m.end(1)])


def _command(text: str, code_lang: str | None) -> list[Span]:
    spans = [s for s in _spans(re.compile(_CODE_SPAN), text) if " " in s.text and _SHELL_START.match(s.text)]
    # In a session transcript (core.units.transcript_language) what a prompt line printed is not a command.
    transcript_output = code_lang == "console" and not text.lstrip().startswith("$")
    if (
        code_lang is not None
        and code_lang.lower() in SHELL_LANGS
        and _SHELL_START.match(text)
        and not transcript_output
    ):
        stripped = re.sub(r"^\s*(?:\$\s+)", "", text).rstrip()
        start = text.index(stripped) if stripped in text else 0
        spans.append(Span(start, start + len(stripped), stripped))
    return _dedupe(spans)


def _dedupe(spans: list[Span]) -> list[Span]:
    """Longest first wins a place; spans inside a longer one are dropped; document order."""
    kept: list[Span] = []
    for s in sorted(spans, key=lambda s: (-(s.end - s.start), s.start)):
        if not any(k.start <= s.start and s.end <= k.end for k in kept):
            kept.append(s)
    return sorted(kept, key=lambda s: s.start)


_CAMEL_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def split_identifier(word: str) -> list[str]:
    """The words inside an identifier: ``parentQueue`` → parent, queue; ``ENROOT_DATA_PATH`` → enroot,
    data, path; ``kai.scheduler/topology`` → kai, scheduler, topology.

    >>> split_identifier("podset-required-topology"), split_identifier("TASMultiLayerTopology")
    (['podset', 'required', 'topology'], ['tas', 'multi', 'layer', 'topology'])
    """
    return list(_split_identifier(word))


# Both run for every candidate unit of every part of every question, on the same few thousand strings: once each.
@lru_cache(maxsize=65536)
def _split_identifier(word: str) -> tuple[str, ...]:
    out: list[str] = []
    for piece in re.split(r"[^A-Za-z0-9]+", word):
        out.extend(p.lower() for p in _CAMEL_PARTS.findall(piece))
    return tuple(w for w in out if w)


def identifier_words(text: str) -> list[str]:
    """Every identifier in ``text`` split into its words (for matching question words to code)."""
    return list(_identifier_words(text))


@lru_cache(maxsize=16384)
def _identifier_words(text: str) -> tuple[str, ...]:
    words: list[str] = []
    for token in re.findall(r"[A-Za-z][A-Za-z0-9_./-]*[A-Za-z0-9]", text):
        parts = _split_identifier(token)
        if len(parts) > 1:
            words.extend(parts)
    return tuple(words)
