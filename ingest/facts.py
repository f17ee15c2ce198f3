"""Facts read from a chunk at ingest (pure, no models): the values its code, config, flags and tables state.

A manifest's leaves, a config file's keys, a command's flags, a parameter's default, a table's cells: each is a
``core.contract.Fact`` with the span of its value in the chunk's text (``text[start:end] == value``), so the
answer path finds typed candidates without parsing Markdown again. Code blocks are read by ``ingest.fact_code``;
this module walks the chunk (``core.markdown``) and reads the prose shapes:

- tables → a ``cell`` fact per cell (row label, column header, value); a row whose label is a flag is also a
  ``flag`` fact, one whose label is a parameter in a table with a description or default column a ``param`` fact;
- definitions in lists and paragraphs: "**Name** — what it is. Default: 5.", "`--flag=ARG`: what it does",
  "*--gres*\\n:   what it does", "PriorityCalcPeriod: The period … The default value is 5 (minutes)." → ``param``
  or ``flag`` facts with the description and the default when stated.

    >>> [(f.kind, f.subject, f.key, f.value) for f in extract_facts("| Option | Default |\\n|---|---|\\n| queue | `main` |")]
    [('cell', 'queue', 'Default', 'main'), ('param', '', 'queue', 'main')]

Deliberately left out: values in running prose ("set the weight to 1000"), which the evidence units cover, and
any judgement of which fact answers a question.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from core import markdown as md
from core.contract import Fact, FactKind
from ingest.fact_code import DEFAULT, FACT_KEYS, CodeLines, code_facts, gloss

__all__ = ["FACTS_VERSION", "extract_facts"]

FACTS_VERSION = "facts-1"  # bump whenever the same chunk can yield different facts: the index then re-reads them

_FLAG = re.compile(r"^(?P<flag>--?[A-Za-z][\w-]*)(?:[= ](?P<arg>\S.*))?$")
_NAME = re.compile(r"^[A-Za-z_][\w.\-/]*$")
# "**Name**: …", "- `--flag=ARG` — …", "*--gres*\n:   …": a marked-up term, a separator, its description
_TERM = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*)?(?P<o>\*\*|__|\*|`)(?P<term>[^\n]{1,60}?)(?P=o)"
    r"(?P<sep>\s*[:：]\s+|\s+[—–-]\s+|\s*\n:\s+)(?P<desc>\S[\s\S]*)$"
)
# "PriorityType: Set this value … PriorityDecayHalfLife: This determines …": CamelCase names opening definitions
_RUN_ON = re.compile(r"(?:^|(?<=\. ))(?P<term>[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+): (?=\S)")
_DESCRIPTION_HEADER = re.compile(r"desc|meaning|purpose|what|behaviou?r|説明|意味", re.I)
_DEFAULT_HEADER = re.compile(r"default|既定|デフォルト", re.I)
_NAME_HEADER = re.compile(r"param|field|option|key|name|setting|flag|variable|argument|パラメータ|項目|設定", re.I)
# "**NOTE**: …" announces a remark, not a parameter
_ADMONITION = re.compile(
    r"^(?:note|notes|important|warning|caution|tip|hint|example|result|info|attention|danger)$", re.I
)
_WRAPPED = re.compile(r"^(?P<o>\*\*|`+)(?P<inner>[^`*]+)(?P=o)$")


def extract_facts(text: str) -> list[Fact]:
    """Every fact a chunk states, in order; each value verbatim at its span."""
    offsets = md.line_offsets(text)
    facts: list[Fact] = []
    lead = ""  # the prose so far: the last config file it names is the one a config block shows
    for block in md.walk(md.parse_passage(text)):
        if block.kind == "code":
            facts.extend(code_facts(CodeLines.of(text, block, offsets), block.language, lead))
        elif block.kind == "table":
            facts.extend(table_facts(text, block, offsets))
        elif block.kind in ("paragraph", "text"):
            facts.extend(definition_facts(text, block, offsets))
        if block.kind in ("paragraph", "heading", "text"):
            lead += "\n" + block.text
    return sorted((f for f in facts if text[f.start : f.end] == f.value), key=lambda f: (f.start, f.kind))


def _make(kind: FactKind, start: int, value: str, text: str, offsets: Sequence[int], **fields: str) -> Fact:
    line = next(n for n in range(len(offsets) - 1) if offsets[n + 1] > start)
    return Fact(kind=kind, value=value, start=start, end=start + len(value), line=line, **fields)


def _unwrapped(start: int, raw: str) -> tuple[int, str]:
    """A cell or term without the code-span backticks or bold markers around all of it."""
    m = _WRAPPED.match(raw)
    return (start + m.start("inner"), m["inner"]) if m else (start, raw)


def _default(description: str, at: int) -> tuple[int, str] | None:
    m = DEFAULT.search(description)
    return (at + m.start("value"), m["value"]) if m else None


# --- tables ---------------------------------------------------------------------------------------------------


def _cells(line: str) -> list[tuple[int, int]]:
    """(start, end) of each cell's trimmed content in a table row's source line (escaped pipes and code spans kept)."""
    bounds: list[int] = []
    tick = 0
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "`":
            run = len(line[i:]) - len(line[i:].lstrip("`"))
            tick = 0 if tick == run else (tick or run)
            i += run
            continue
        if ch == "|" and not tick:
            bounds.append(i)
        i += 1
    stripped = line.strip()
    edges = [-1, *bounds, len(line)] if not stripped.startswith("|") else [*bounds]
    if not stripped.endswith("|") or (bounds and bounds[-1] != len(line.rstrip()) - 1):
        edges.append(len(line))
    spans = []
    for a, b in itertools.pairwise(edges):
        piece = line[a + 1 : b]
        lead = len(piece) - len(piece.lstrip())
        spans.append((a + 1 + lead, a + 1 + len(piece.rstrip())))
    return spans


def table_facts(text: str, table: md.Block, offsets: Sequence[int]) -> list[Fact]:
    header, *rows = table.cells
    names = [" ".join(md.inline_text(h, links=False).split()) for h in header]
    if len(names) < 2 or not rows:
        return []
    described = next((j for j, h in enumerate(names) if j and _DESCRIPTION_HEADER.search(h)), 0)
    # a table of parameters names each once ("quota | -1 | unlimited", "quota | 0 | none" lists values)
    listing = _NAME_HEADER.search(names[0]) and len({r[0] for r in rows}) == len(rows)
    defaulted = next((j for j, h in enumerate(names) if j and _DEFAULT_HEADER.search(h)), 0)
    facts: list[Fact] = []
    for r in range(len(rows)):
        n = table.start + 2 + r
        line = text[offsets[n] : offsets[n + 1] - 1]
        spans = _cells(line)
        if len(spans) != len(names):
            continue
        values = [_unwrapped(offsets[n] + a, line[a:b]) for a, b in spans]
        label = " ".join(md.inline_text(line[spans[0][0] : spans[0][1]], links=False).split())
        for j in range(1, len(names)):
            start, value = values[j]
            if value.strip():
                facts.append(
                    _make(
                        "cell", start, value, text, offsets, subject=label, key=names[j], gloss=gloss(label, names[j])
                    )
                )
        description = md.inline_text(line[slice(*spans[described])], links=False) if described else ""
        default = values[defaulted][1] if defaulted else ""
        term = _FLAG.match(values[0][1])
        if term is not None:
            facts.append(_flag(term, values[0][0], text, offsets, description, default, ""))
        elif (described or defaulted) and listing and _NAME.match(values[0][1]):
            start, value = values[defaulted] if defaulted and default else values[described or defaulted]
            facts.append(
                _make(
                    "param",
                    start,
                    value,
                    text,
                    offsets,
                    subject="",
                    key=values[0][1],
                    description=description,
                    default=default,
                    gloss=gloss(values[0][1], description),
                )
            )
    return facts


def _flag(
    term: re.Match[str], at: int, text: str, offsets: Sequence[int], description: str, default: str, subject: str
) -> Fact:
    start, value = (at + term.start("arg"), term["arg"]) if term["arg"] else (at, term["flag"])
    words = " ".join(description.split()[:FACT_KEYS])
    return _make(
        "flag",
        start,
        value,
        text,
        offsets,
        subject=subject,
        key=term["flag"],
        description=description,
        default=default,
        gloss=gloss(subject, term["flag"], words),
    )


# --- definitions in prose -------------------------------------------------------------------------------------


def definition_facts(text: str, block: md.Block, offsets: Sequence[int]) -> list[Fact]:
    """A paragraph (or a list item's) that defines a flag or a parameter, or a run of CamelCase definitions."""
    at = offsets[block.start]
    raw = md.source(text, block.start, block.end, offsets)
    if m := _TERM.match(raw):
        term_at, term = _unwrapped(at + m.start("term"), m["term"].strip())
        desc_at, desc = at + m.start("desc"), m["desc"].rstrip()
        description = md.inline_text(desc, links=False)
        stated = _default(desc, desc_at)
        if flag := _FLAG.match(term.strip("`")):
            inner = term_at + (term.index(flag.group(0)) if flag.group(0) in term else 0)
            return [_flag(flag, inner, text, offsets, description, stated[1] if stated else "", "")]
        if _NAME.match(term) and not _ADMONITION.match(term):
            return [_param(term, desc_at, desc, description, stated, text, offsets)]
        return []
    terms = list(_RUN_ON.finditer(raw))
    if not terms or terms[0].start() != 0:
        return []
    facts: list[Fact] = []
    for k, t in enumerate(terms):
        end = terms[k + 1].start() if k + 1 < len(terms) else len(raw)
        desc = raw[t.end() : end].rstrip()
        stated = _default(desc, at + t.end())
        facts.append(_param(t["term"], at + t.end(), desc, md.inline_text(desc, links=False), stated, text, offsets))
    return facts


def _param(
    name: str,
    desc_at: int,
    desc: str,
    description: str,
    stated: tuple[int, str] | None,
    text: str,
    offsets: Sequence[int],
) -> Fact:
    start, value = stated if stated else (desc_at, desc)
    words = " ".join(description.split()[:FACT_KEYS])
    return _make(
        "param",
        start,
        value,
        text,
        offsets,
        subject="",
        key=name,
        description=description,
        default=stated[1] if stated else "",
        gloss=gloss(name, words),
    )
