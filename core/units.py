"""Evidence units: the smallest quotable pieces of a passage (pure, no models).

A unit is a sentence, a list item (with its parent items as context), a table row shown with its header
("観点: 主目的; Slurm: …"), a code block, or one line of a code block (``code_line``: a value in a manifest
or a flag in a command is evidence too). Each unit knows its block (paragraph, list, table or code
block), so a lead-in can bring along what it announces. The passage is read by ``core.markdown``; the
app scores and quotes the units, ingest reads decision rules from them and aligns a translation's
units with its original's.

Deliberately left out: scoring (``app.answer.evidence``) and anything that needs a model.

    >>> [u.text for u in split_units("| a | b |\\n|---|---|\\n| 1 | 2 |", "table")]
    ['a: 1; b: 2']
    >>> [(u.kind, u.text, u.context) for u in split_units("Create it:\\n\\n```yaml\\nspec:\\n  queue: gpu\\n```")][2:]
    [('code_line', 'spec:', 'Create it: | lang: yaml | keys: spec'), ('code_line', '  queue: gpu', 'Create it: | lang: yaml | keys: spec > queue')]
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from core import markdown as md
from core.text import split_sentences

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

# A parent list item of at most this many words and characters is a label for its items.
LABEL_WORDS, LABEL_CHARS = 5, 48
_FIGURE = re.compile(r"^\W*\((figure|図)[:：]", re.IGNORECASE)


@dataclass(frozen=True)
class Unit:
    passage: int  # index into the passage list
    text: str  # what the answer shows (verbatim words; table cells labelled by their header)
    quote: str  # verbatim Markdown of the unit, for the citation
    # "sentence", "item", "row", "code", "code_line", or "heading" (a section title that announces a table or
    # list, or that states a value of its own: "Integration with Podman (Slurm-23.02+)")
    kind: str
    # parent list items ("a › b"), or for a code line "lead-in | lang: yaml | keys: spec > queue" (parts
    # left out when empty): helps scoring, not shown
    context: str = ""
    block: int = 0  # which paragraph, list, table or code block of the passage it belongs to
    line: int = 0  # a code line's line number inside its code block (0-based; blank lines count)


def is_table_separator(line: str) -> bool:
    """The ``|---|:---:|`` line under a Markdown table's header (``core.markdown``'s one rule)."""
    return md.is_delimiter_row(line)


def clean_markup(text: str) -> str:
    """Inline Markdown as shown: emphasis and code-span backticks dropped (a code span's content kept
    verbatim), links kept as links."""
    return md.inline_text(text)


def code_language(unit: Unit) -> str:
    """The language of a code block (``yaml``, ``console``…) or of a code line's block; ``""`` if unknown."""
    if unit.kind == "code":
        found = md.code_block(unit.quote)
        return found.language if found is not None else ""
    for part in unit.context.split(" | ") if unit.kind == "code_line" else ():
        if part.startswith("lang: "):
            return part.removeprefix("lang: ")
    return ""


def _window(unit: Unit, units: Sequence[Unit], before: int, after: int) -> list[tuple[int, str]] | None:
    """The numbered non-blank lines of a code line's block around it; None when the line is not found."""
    whole = next((u for u in units if u.kind == "code" and u.passage == unit.passage and u.block == unit.block), None)
    found = md.code_block(whole.quote) if whole is not None else None
    if found is not None and unit.line < len(found.code_lines):
        numbered = list(enumerate(found.code_lines))
    else:  # the block unit is not at hand: its line units are
        numbered = [
            (u.line, u.quote)
            for u in units
            if u.kind == "code_line" and (u.passage, u.block) == (unit.passage, unit.block)
        ]
    shown = [(i, line.rstrip()) for i, line in numbered if line.strip()]
    at = next((k for k, (i, _) in enumerate(shown) if i == unit.line), None)
    return None if at is None else shown[max(0, at - before) : at + after + 1]


def code_window(unit: Unit, units: Sequence[Unit], before: int = 1, after: int = 1) -> str:
    """A code line with up to ``before`` and ``after`` non-blank lines of its block around it (comments
    included), dedented and without trailing spaces: what an answer quotes instead of the whole block."""
    if unit.kind != "code_line":
        return unit.quote
    window = _window(unit, units, before, after)
    if window is None:
        return unit.text.strip()
    return textwrap.dedent("\n".join(line for _, line in window))


def code_lines_shown(unit: Unit, units: Sequence[Unit]) -> list[Unit]:
    """The code line units that quoting ``unit`` already shows: a code block's lines, a code line's window
    (what ``code_window`` quotes). Empty for prose."""
    if unit.kind == "code":
        lines: set[int] | None = None
    elif unit.kind == "code_line":
        window = _window(unit, units, 1, 1)
        lines = {i for i, _ in window} if window is not None else {unit.line}
    else:
        return []
    return [
        u
        for u in units
        if u.kind == "code_line"
        and (u.passage, u.block) == (unit.passage, unit.block)
        and (lines is None or u.line in lines)
    ]


def split_units(text: str, kind: str = "text", passage: int = 0) -> list[Unit]:
    """All evidence units of one passage, in order, each tagged with its block (paragraph, list,
    table or code block) so that a lead-in sentence can bring the list it introduces along."""
    return list(_split_units(text, kind, passage))


@lru_cache(maxsize=8192)
def _split_units(text: str, kind: str, passage: int) -> tuple[Unit, ...]:
    # the same chunks come back question after question: parsing them once is most of an answer's time
    return tuple(_read_units(text, kind, passage))


def _read_units(text: str, kind: str, passage: int) -> list[Unit]:
    units = _UnitReader(passage, md.lines(text)).read(md.parse_passage(text))
    # A list item that only introduces nested items, a label ("Kubernetesの強み"), is context, not evidence;
    # a parent item that states something stays. A lead-in item ("… does three things:") stays too: it
    # brings its nested items along when quoted.
    introducers = {u.context.split(" › ")[-1] for u in units if u.context and u.kind == "item"}
    return [
        u
        for u in units
        if (_is_code_evidence(u) if u.kind == "code_line" else _is_evidence(u, introducers))
        or (u.text in introducers and is_lead_in(u))
    ]


@dataclass
class _UnitReader:
    """One walk over a passage's blocks, collecting units. List items stay in one block until another
    block comes between them (a code block inside an item gets its own block, right after the item)."""

    passage: int
    src: list[str]  # the passage's source lines, for verbatim quotes
    units: list[Unit] = field(default_factory=list)
    block: int = 0
    in_list: bool = False

    def read(self, blocks: Sequence[md.Block], parents: tuple[str, ...] = ()) -> list[Unit]:
        for b in blocks:
            if b.kind == "list":
                for item in b.children:
                    self._item(item, parents)
            elif b.kind in ("paragraph", "heading", "html"):
                self._sentences(b.text)
            elif b.kind == "table":
                self._table(b)
            elif b.kind == "code":
                self._code(b)
            elif b.kind == "quote":
                self.read(b.children, parents)
            # a thematic break or a link definition holds no words to quote
        return self.units

    def _next_block(self) -> int:
        self.block += 1
        self.in_list = False
        return self.block

    def _sentences(self, text: str) -> None:
        joined = " ".join(line.strip() for line in text.split("\n"))
        b = self._next_block()
        sentences = [s for s in split_sentences(joined) if s.strip()]
        shown = [clean_markup(s) for s in sentences]
        for sentence, words, keys in zip(sentences, shown, defined_terms(shown), strict=True):
            context = f"keys: {keys}" if keys else ""
            self.units.append(Unit(self.passage, words, sentence.strip(), "sentence", context, b))

    def _item(self, item: md.Block, parents: tuple[str, ...]) -> None:
        head = item.children[0] if item.children and item.children[0].kind == "paragraph" else None
        own = parents
        if head is not None:
            if not self.in_list:
                self._next_block()
                self.in_list = True
            text = clean_markup(" ".join(line.strip() for line in head.text.split("\n")))
            # the item's lines as written, container markers ("> ", indentation) dropped
            quote = " ".join(self.src[n].strip().lstrip(">").strip() for n in range(head.start, head.end))
            self.units.append(Unit(self.passage, text, quote, "item", " › ".join(parents), self.block))
            own = (*parents, text)  # nested items name their parent by its whole text
        for child in item.children[1 if head is not None else 0 :]:
            if child.kind == "list":
                for sub in child.children:
                    self._item(sub, own)
            else:
                self.read([child], own)

    def _table(self, table: md.Block) -> None:
        b = self._next_block()
        header, *rows = table.cells
        for i, cells in enumerate(rows):
            # an empty header cell (a table's row-label column) labels nothing: show the bare value
            text = "; ".join(
                f"{clean_markup(h)}: {clean_markup(c)}" if clean_markup(h) else clean_markup(c)
                for h, c in zip(header, cells, strict=False)
                if c
            )
            quote = "\n".join(self.src[n] for n in (table.start, table.start + 1, table.start + 2 + i))
            self.units.append(Unit(self.passage, text, quote, "row", block=b))

    def _code(self, code: md.Block) -> None:
        """The block as one unit (short ones are quoted whole), then each line that holds something, with
        the block's lead-in (the sentence or item right before it), language and YAML key path as context."""
        last = self.units[-1] if self.units else None
        lead = last.text if last and last.block == self.block and last.kind in ("sentence", "item") else ""
        b = self._next_block()
        quote = "\n".join(self.src[code.start : code.end])
        self.units.append(Unit(self.passage, quote, quote, "code", block=b))
        yaml = _is_yaml(code)
        lines = code.code_lines
        keys = yaml_key_paths(lines) if yaml else [""] * len(lines)
        language = "yaml" if yaml else transcript_language(code.language, lines)
        entries = flag_entries(lines)
        for i, line in enumerate(lines):
            if is_quotable_line(line):
                source = self.src[code.first_code_line + i]
                context = _code_context(lead, language, keys[i], entries[i])
                self.units.append(Unit(self.passage, line.rstrip(), source, "code_line", context, b, i))


# --- definition paragraphs ------------------------------------------------------------------------------
# A parameter reference flattened into one paragraph ("PriorityCalcPeriod: The period … The default value is 5
# (minutes). PriorityUsageResetPeriod: … - NONE: Never clear historic usage. The default value."): the sentences
# after a definition say nothing of what they are about, so each carries its term as its key path.
_TERM = re.compile(r"^(?:[-*•]\s+)?(?P<term>--?[A-Za-z][\w-]*|[A-Za-z_][\w.]*[A-Z_][\w.]*|[A-Z][A-Z0-9_]+)\s*:\s+\S")
_VALUE_TERM = re.compile(r"^[A-Z][A-Z0-9_]+$")  # an upper-case term (NONE, DAILY) names a value of the term above


def defined_terms(sentences: Sequence[str]) -> list[str]:
    """For each sentence of a paragraph, the key path of the term it belongs to ("" outside a definition list).
    A paragraph is a definition list when at least two of its sentences open with a term and a colon.

    >>> defined_terms(["Intro.", "CalcPeriod: The period.", "The default is 5.", "ResetPeriod: When.",
    ...                "- NONE: Never.", "The default value.", "FavorSmall: A boolean."])
    ['', 'CalcPeriod', 'CalcPeriod', 'ResetPeriod', 'ResetPeriod > NONE', 'ResetPeriod > NONE', 'FavorSmall']
    """
    opened = [m.group("term") if (m := _TERM.match(s)) else "" for s in sentences]
    if sum(1 for t in opened if t) < 2:
        return ["" for _ in sentences]
    out: list[str] = []
    top = value = ""
    for term in opened:
        if term and _VALUE_TERM.match(term) and top and not _VALUE_TERM.match(top):
            value = term
        elif term:
            top, value = term, ""
        out.append(f"{top} > {value}" if value else top)
    return out


def unit_keys(unit: Unit) -> str:
    """A unit's key path: a code line's YAML keys, or the term a sentence of a definition paragraph is about."""
    if unit.kind in ("code_line", "sentence") and "keys: " in unit.context:
        return unit.context.split("keys: ")[-1].split(" | ")[0]
    return ""


# --- code lines -------------------------------------------------------------------------------------------
# A comment ("# …", "// …", "-- …") explains a line and holds no value; "#SBATCH" and "#include" are kept.
_COMMENT = re.compile(r"^\s*(?:#(?:[\s#!]|$)|//|/\*.*\*/\s*$|<!--.*-->\s*$|;(?:\s|$)|--(?:\s|$))")
_PUNCTUATION_ONLY = re.compile(r"^[\s\[\]{}()<>,;:.\-]*$")  # "}", "]);", "---"
_YAML_KEY = re.compile(r"^(?P<indent> *)(?P<dash>(?:- +)*)(?P<key>[\w\"'][\w.\-/\"']*)\s*:(?:\s|$)")


def is_quotable_line(line: str) -> bool:
    """A code line that holds something: not blank, not only a comment, not only brackets and braces."""
    return bool(line.strip()) and not _COMMENT.match(line) and not _PUNCTUATION_ONLY.match(line)


def yaml_key_paths(lines: Sequence[str]) -> list[str]:
    """Per line, the YAML keys from the document root down to it, by indentation ("spec > queue").

    >>> yaml_key_paths(["spec:", "  levels:", "  - nodeLabel: a", "    weight: 1", "  other: 2"])
    ['spec', 'spec > levels', 'spec > levels > nodeLabel', 'spec > levels > weight', 'spec > other']
    """
    stack: list[tuple[int, str]] = []  # (column of a key's children, key)
    paths: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped == "---":  # a new YAML document
            stack.clear()
        if not stripped or stripped.startswith("#") or stripped == "---":
            paths.append("")
            continue
        indent = len(line) - len(line.lstrip(" "))
        dash = stripped == "-" or stripped.startswith("- ")
        # a sequence item may sit in its parent key's column ("levels:" then "- x"): it still belongs to it
        while stack and (stack[-1][0] > indent if dash else stack[-1][0] >= indent):
            stack.pop()
        keys = [key for _, key in stack]
        if m := _YAML_KEY.match(line):
            keys.append(m["key"].strip("\"'"))
            stack.append((indent + len(m["dash"]), keys[-1]))
        paths.append(" > ".join(keys))
    return paths


def _is_yaml(code: md.Block) -> bool:
    """A YAML block: so labelled, or unlabelled with most of its lines keys or sequence items."""
    if code.language:
        return code.language in ("yaml", "yml")
    lines = [ln for ln in code.code_lines if ln.strip() and not ln.lstrip().startswith("#")]
    keyed = sum(1 for ln in lines if _YAML_KEY.match(ln) or ln.lstrip().startswith("- "))
    return len(lines) >= 2 and bool(_YAML_KEY.match(lines[0])) and keyed >= 0.75 * len(lines)


# Shell-like labels, and none: a block of such lines may be commands, or a session transcript.
SHELL_LANGS = frozenset(["", "bash", "sh", "shell", "console", "zsh", "shell-session", "text"])
_PROMPT = re.compile(r"^\s*\$\s")


def transcript_language(language: str, lines: Sequence[str]) -> str:
    """``console`` for a shell-like block that shows a session ("$ srun --mpi=list" and what it printed),
    where only the prompt lines are commands; ``shell`` for a console-labelled block with no prompt (every
    line is a command); otherwise the block's own label."""
    if language.lower() not in SHELL_LANGS:
        return language
    if any(_PROMPT.match(line) for line in lines):
        return "console"
    return "shell" if language.lower() == "console" else language


def _code_context(lead: str, language: str, keys: str, entry: str = "") -> str:
    parts = (lead, f"lang: {language}" if language else "", f"keys: {keys}" if keys else "", entry)
    return " | ".join(part for part in parts if part)


# A usage block's option: the flag on its own line, what it does on the more-indented lines under it
# ("--container-unshare=NS[,NS...]" / "[pyxis] create new namespaces … Supported: net, ipc, uts.").
_FLAG_LINE = re.compile(r"^(?P<indent>\s*)-{1,2}[A-Za-z][\w-]*")


def flag_entries(lines: Sequence[str]) -> list[str]:
    """For each line of a code block, the whole option entry it belongs to ("entry: --flag … what it does"),
    when the entry spans several lines; "" otherwise. Each line of the entry is then scored with the words
    of all of it: the flag with its description, the description with its flag."""
    out = [""] * len(lines)
    i = 0
    while i < len(lines):
        m = _FLAG_LINE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, j = len(m.group("indent")), i + 1
        while j < len(lines) and lines[j].strip() and not _FLAG_LINE.match(lines[j]):
            if len(lines[j]) - len(lines[j].lstrip()) <= indent:
                break
            j += 1
        if j - i > 1:
            entry = "entry: " + " ".join(line.strip() for line in lines[i:j])
            out[i:j] = [entry] * (j - i)
        i = j
    return out


# A unit that announces what follows: "… three things:", "as follows", "次のとおり", "以下の…".
# Only a lead-in directly followed by a list, table or code block brings anything along (``followers``).
_LEAD_IN = re.compile(
    r"[:：]\s*$|\b(as follows|the following|following (is|are)|shown below|listed below|below)\b|以下|次の", re.I
)


def _is_evidence(unit: Unit, parents: set[str]) -> bool:
    text = unit.text.strip()
    if not text or INJECTION.search(text) or _FIGURE.match(text):
        return False
    if unit.kind == "item" and text in parents and _is_label(text):
        return False
    if md.is_link_only(text):  # a bare link or a contents entry
        return False
    return len(md.inline_text(text, links=False).strip(" -:|")) >= 6


def _is_label(text: str) -> bool:
    """A few words naming what the nested items are about, rather than a statement of its own."""
    visible = md.inline_text(text, links=False)
    return len(visible.split()) <= LABEL_WORDS and len(visible) <= LABEL_CHARS


def _is_code_evidence(unit: Unit) -> bool:
    return not INJECTION.search(unit.text) and not _FIGURE.match(unit.text.strip())


def announcer(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """The sentence or list item that announces the code block holding ``unit`` (the block, or one of its
    lines): the last unit of the paragraph or list right before the block, when it announces what follows
    ("Install the slurm-operator and its CRDs:"). None for anything else."""
    if unit.kind not in ("code", "code_line"):
        return None
    before = [u for u in units if u.passage == unit.passage and u.block == unit.block - 1]
    last = before[-1] if before else None
    return last if last is not None and last.kind in ("sentence", "item") and is_lead_in(last) else None


def announces(sentence: str) -> bool:
    """Whether a sentence announces what follows it ("…three things:", "as follows", "次のとおり")."""
    return bool(_LEAD_IN.search(sentence))


def is_lead_in(unit: Unit) -> bool:
    return unit.kind == "heading" or (unit.kind in ("sentence", "item") and announces(unit.quote))


# What the embedder reads of one unit: its section heading (and a code line's key path) as context, then the
# unit's own words; bounded so that a long code block costs no more than a sentence or two.
UNIT_EMBED_CHARS = 700


HEADED_KINDS = ("row", "item")


# A version or dotted number in a section title ("Docker Engine v20.10+", "(3.3.0)"); a leading section number
# ("4. 運用") is numbering, not a value.
_TITLE_VALUE = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+(?![\w.])")
_NUMBERING = re.compile(r"^\s*\d+(?:\.\d+)*\.?\s")


def title_value(title: str) -> bool:
    """Whether a section title states a value of its own (a version or dotted number), which its passages'
    sentences may never repeat.

    >>> title_value("Integration with Podman (Slurm-23.02+)"), title_value("4.1 Operation"), title_value("Setup")
    (True, False, False)
    """
    return bool(_TITLE_VALUE.search(_NUMBERING.sub("", md.inline_text(title, links=False))))


def holds_values(unit: Unit) -> bool:
    """Whether values are read from ``unit``: not from a whole code block (its lines are units of their own), nor
    from a heading that only announces what follows it."""
    return unit.kind != "code" and (unit.kind != "heading" or title_value(unit.text))


def heading_lead(section: str, units: Sequence[Unit]) -> Unit | None:
    """A passage that opens with a table or list under its own heading ("Requirements & supported
    versions") is announced by that heading: as a unit, the heading brings the table or list along. A heading
    that states a value ("Integration with Rootless Docker (Docker Engine v20.10+ & Slurm-23.02+)") is a unit
    of every passage under it: the value is written nowhere else."""
    title = section.split(" > ")[-1].strip()
    if not title or not units:
        return None
    if (units[0].kind not in HEADED_KINDS or units[0].context) and not title_value(title):
        return None
    # block 0 is never used by split_units, so the heading sits right before the opening block
    return Unit(units[0].passage, clean_markup(title), "", "heading", block=units[0].block - 1)


def unit_embedding_text(unit: Unit, section: str) -> str:
    """The text whose vector stands for ``unit`` (ingest embeds it once; the answer step compares questions to it).

    >>> unit_embedding_text(Unit(0, "  queue: gpu", "", "code_line", "Create it: | lang: yaml | keys: spec > queue"), "Jobs")
    'Jobs › spec > queue\\n  queue: gpu'
    """
    head = " › ".join(part for part in (section, unit_keys(unit)) if part)
    return f"{head}\n{unit.text}"[:UNIT_EMBED_CHARS]


def unit_key(text: str) -> str:
    """A unit text's id among its generation's unit vectors (ingest writes them, the answer step reads them).

    >>> unit_key("a") == unit_key("a") != unit_key("b")
    True
    """
    return hashlib.sha256(text.encode()).hexdigest()


def unit_embedding_texts(text: str, kind: str, section: str) -> list[str]:
    """Every distinct unit text of one passage, as embedded (in passage order; the heading that announces its
    opening table or list first)."""
    units = split_units(text, kind)
    lead = heading_lead(section, units)
    return list(dict.fromkeys(unit_embedding_text(u, section) for u in ([lead] if lead else []) + units))
