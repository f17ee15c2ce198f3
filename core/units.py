"""Evidence units: the smallest quotable pieces of a passage (pure, no models).

A unit is a sentence, a list item (with its parent item as context), or a table row shown with its
header ("観点: 主目的; Slurm: …"). Each unit knows its block (paragraph, list, table or code block), so a
lead-in can bring along what it announces. Ingest embeds every unit (cross-language evidence
selection) and aligns a translation's units with its original's; the app scores and quotes them.

Deliberately left out: scoring (``app.evidence``) and anything that needs a model.

    >>> [u.text for u in split_units("| a | b |\\n|---|---|\\n| 1 | 2 |", "table")]
    ['a: 1; b: 2']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.text import split_sentences

_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}")
_MD_NOISE = re.compile(r"\*\*|__|`")
# Text that tries to instruct the assistant is data, never evidence: it cannot state a fact about
# Slurm or Kubernetes, so it is left out of answers (prompt-injection hygiene).
INJECTION = re.compile(
    r"ignore (all |any )?(of )?(the |your |my )?(previous |prior |above |earlier |system )?(instructions|prompts?|rules)"
    r"|disregard (the |all |your )?(previous|above|system|rules|instructions)|system prompt"
    # role-play openers, narrowly: documentation says "acts as an enhancement", "you are now ready"
    r"|you are now (an? |in |dan\b|my |the (new|system))|(pretend to be|act as) (an? )?(unrestricted|unfiltered|jailbroken|evil|dan\b|different (ai|assistant))"
    r"|you are no longer\b|from now on,? you (are|will)\b|\b(admin|developer|god|debug) mode (is )?(enabled|activated|on)\b"
    r"|(answer|reply|respond|write)\b[^.。]{0,40}\bwithout (any )?(citations|sources)"
    r"|jailbreak|developer mode|(以前|前|上記|これまで)の(指示|命令|プロンプト)を(すべて|全て)?無視|システムプロンプト|指示を無視"
    # a "system note" smuggled into a question, and what such notes ask for: no sources, a signature, a persona
    r"|システム(注記|メッセージ|通知|指示|命令)|出典を(一切)?(付け|つけ|示さ|載せ|書か)ず|と署名(すること|して|しなさい)"
    r"|あなたは(今から|これから|もう)[^。]{0,20}(ではない|ではありません|です|になる|として)"
    # requests for the assistant's own secrets are never questions about the knowledge base
    r"|(reveal|print|show|dump|leak|tell me) (me )?(your|the) (api[ -]?keys?|secrets?|passwords?|credentials|tokens?"
    r"|environment variables|env vars|hidden (prompt|instructions)|instructions)"
    r"|(dump|print|output|reveal|show|list) (me )?(your |the )?(full |entire |whole )?(raw )?(text|contents?) of (every|all|each)"
    r" (the )?(documents?|files?|passages?)"
    r"|(api\s*キー|apiキー|環境変数|パスワード|認証情報|隠しプロンプト).{0,20}(教えて|表示|出力|見せて)",
    re.IGNORECASE,
)


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
# Markdown link reference definitions ("[label]: https://…"), one or several run together: plumbing.
_LINK_DEFS = re.compile(r"(\s*\[[^\]]+\]:\s*\S+(\s+\"[^\"]*\")?)+\s*")
_FIGURE = re.compile(r"^\W*\((figure|図)[:：]", re.IGNORECASE)


@dataclass(frozen=True)
class Unit:
    passage: int  # index into the passage list
    text: str  # what the answer shows (verbatim words; table cells labelled by their header)
    quote: str  # verbatim Markdown of the unit, for the citation
    kind: str  # "sentence", "item", "row", "code", or "heading" (a section title that announces a table)
    context: str = ""  # parent list item or table caption: helps scoring, not shown
    block: int = 0  # which paragraph, list, table or code block of the passage it belongs to


def is_table_separator(line: str) -> bool:
    """The ``|---|:---:|`` line under a Markdown table's header."""
    return bool(_TABLE_SEP.match(line))


def clean_markup(text: str) -> str:
    return _MD_NOISE.sub("", text).strip()


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


def _table_units(lines: list[str], passage: int, block: int) -> list[Unit]:
    rows = [ln for ln in lines if ln.strip()]
    if len(rows) < 2:
        return []
    has_sep = is_table_separator(rows[1])
    header = _cells(rows[0]) if has_sep else []
    body = rows[2:] if has_sep else rows
    units = []
    for row in body:
        cells = _cells(row)
        if header and len(header) == len(cells):
            # an empty header cell (a table's row-label column) labels nothing: show the bare value
            text = "; ".join(
                f"{clean_markup(h)}: {clean_markup(c)}" if clean_markup(h) else clean_markup(c)
                for h, c in zip(header, cells, strict=True)
                if c
            )
            quote = "\n".join([rows[0], rows[1], row])
        else:
            text = " | ".join(clean_markup(c) for c in cells)
            quote = row
        units.append(Unit(passage, text, quote, "row", block=block))
    return units


def split_units(text: str, kind: str = "text", passage: int = 0) -> list[Unit]:
    """All evidence units of one passage, in order, each tagged with its block (paragraph, list,
    table or code block) so that a lead-in sentence can bring the list it introduces along."""
    units = _UnitReader(passage, text.split("\n")).read()
    # A list item that only introduces nested items ("Kubernetesの強み") is context, not evidence.
    # A lead-in item ("… does three things:") stays: it brings its nested items along when quoted.
    introducers = {u.context.split(" › ")[-1] for u in units if u.context}
    return [u for u in units if _is_evidence(u, introducers) or (u.text in introducers and is_lead_in(u))]


@dataclass
class _UnitReader:
    """One pass over a passage's lines, collecting units; the state is what the current line continues."""

    passage: int
    lines: list[str]
    units: list[Unit] = field(default_factory=list)
    parents: list[tuple[int, str]] = field(default_factory=list)  # open list items: (indent, text)
    paragraph: list[str] = field(default_factory=list)  # lines of the paragraph being read
    block: int = 0
    in_list: bool = False

    def read(self) -> list[Unit]:
        i = 0
        while i < len(self.lines):
            line = self.lines[i]
            if line.lstrip().startswith(("```", "~~~")):
                i = self._code(i)
            elif line.lstrip().startswith("|"):
                i = self._table(i)
            elif item := _LIST_ITEM.match(line):
                self._item(line, len(item.group(1)), item.group(2))
                i += 1
            elif not line.strip():
                self._flush_paragraph()
                self.parents.clear()
                # a blank line between items keeps the list going; anything else ends it
                self.in_list = self.in_list and _next_is_item(self.lines, i)
                i += 1
            else:
                self._text_line(line)
                i += 1
        self._flush_paragraph()
        return self.units

    def _next_block(self) -> int:
        self.block += 1
        return self.block

    def _flush_paragraph(self) -> None:
        if self.paragraph:
            joined = " ".join(p.strip() for p in self.paragraph)
            b = self._next_block()
            for sentence in split_sentences(joined):
                if sentence.strip():
                    self.units.append(Unit(self.passage, clean_markup(sentence), sentence.strip(), "sentence", block=b))
            self.paragraph.clear()

    def _code(self, i: int) -> int:
        """A fenced code block from line ``i`` as one unit; returns the line after its closing fence."""
        self._flush_paragraph()
        self.in_list = False
        j = i + 1
        while j < len(self.lines) and not self.lines[j].lstrip().startswith(("```", "~~~")):
            j += 1
        code = "\n".join(self.lines[i : j + 1])
        self.units.append(Unit(self.passage, code, code, "code", block=self._next_block()))
        return j + 1

    def _table(self, i: int) -> int:
        """The table rows from line ``i`` as units; returns the line after the table."""
        self._flush_paragraph()
        self.in_list = False
        j = i
        while j < len(self.lines) and self.lines[j].lstrip().startswith("|"):
            j += 1
        self.units.extend(_table_units(self.lines[i:j], self.passage, self._next_block()))
        return j

    def _item(self, line: str, indent: int, content: str) -> None:
        self._flush_paragraph()
        if not self.in_list:
            self._next_block()
            self.in_list = True
        while self.parents and self.parents[-1][0] >= indent:
            self.parents.pop()
        context = " › ".join(clean_markup(p) for _, p in self.parents)
        self.units.append(Unit(self.passage, clean_markup(content), line.strip(), "item", context, self.block))
        self.parents.append((indent, content))

    def _text_line(self, line: str) -> None:
        """A non-blank line that starts no block: continues the list item above it, or a paragraph."""
        stripped = line.strip().lstrip(">").strip()
        units = self.units
        # An indented line continues the item above it; so does an unindented one right after an
        # item line ("lazy continuation": docs wrapped at 100 columns write items that way).
        lazy = units[-1].kind == "item" and not line.lstrip().startswith("#") if units and self.in_list else False
        if self.parents and (line.startswith(" ") or lazy):
            # continuation of a list item: attach to the last unit
            last = units[-1]
            if last.kind == "item" and self.parents:
                # nested items name their parent by its whole text, continuation lines included
                self.parents[-1] = (self.parents[-1][0], f"{self.parents[-1][1]} {stripped}")
            units[-1] = Unit(
                self.passage,
                f"{last.text} {clean_markup(stripped)}",
                f"{last.quote} {stripped}",
                last.kind,
                last.context,
                last.block,
            )
        elif stripped:
            self.in_list = False
            self.paragraph.append(stripped)


def _next_is_item(lines: list[str], i: int) -> bool:
    for line in lines[i + 1 :]:
        if line.strip():
            return bool(_LIST_ITEM.match(line))
    return False


# A unit that announces what follows: "… three things:", "as follows", "次のとおり", "以下の…".
# Only a lead-in directly followed by a list, table or code block brings anything along (``followers``).
_LEAD_IN = re.compile(
    r"[:：]\s*$|\b(as follows|the following|following (is|are)|shown below|listed below|below)\b|以下|次の", re.I
)


def _is_evidence(unit: Unit, parents: set[str]) -> bool:
    text = unit.text.strip()
    if not text or INJECTION.search(text) or _FIGURE.match(text):
        return False
    if unit.kind == "item" and text in parents:
        return False
    if _LINK.fullmatch(text) or _LINK_DEFS.fullmatch(text):  # a bare link, contents entry or link target
        return False
    return len(_LINK.sub(r"\1", text).strip(" -:|")) >= 6


def is_lead_in(unit: Unit) -> bool:
    return unit.kind == "heading" or (unit.kind in ("sentence", "item") and bool(_LEAD_IN.search(unit.quote)))
