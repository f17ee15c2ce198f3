"""Facts in code blocks (pure): manifests, config lines, command lines and usage blocks, each value with its span.

- YAML / JSON → one ``manifest`` fact per scalar leaf (key path, value) with its document's apiVersion and kind,
  read by PyYAML's composer (node positions are the spans); a block PyYAML rejects (Helm's ``{{ }}``) is read
  line by line with ``core.units.yaml_key_paths``;
- ``Key=Value`` lines (slurm.conf, gres.conf, env files) → ``config`` facts (``env`` for ``export X=…`` and
  ALL_CAPS keys), the file named by the lead-in ("Example *gres.conf* file:") or the block's first comment;
- command lines → ``flag`` facts for ``--flag=value`` (and ``#SBATCH --flag value``), ``config`` facts for bare
  ``key=value`` arguments (``scontrol create reservation duration=120``, ``helm --set a.b=c``);
- usage blocks (``--flag=ARG   what it does``, the description possibly on the lines under it) → ``flag`` facts
  with the description and the default when "(default: …)" says it.

    >>> text = "```\\nGresTypes=gpu\\n```"
    >>> [(f.key, f.value) for f in code_facts(CodeLines.of(text, md.parse(text)[0]), "", "slurm.conf:")]
    [('GresTypes', 'gpu')]

Deliberately left out: program source (Go, Python), diagrams, and command output other than ``key=value`` pairs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import yaml

from core import markdown as md
from core.contract import Fact, FactKind
from core.units import SHELL_LANGS, yaml_key_paths

_YAML_LANGS = frozenset(["yaml", "yml", "json", "jsonc"])
_CONFIG_LANGS = frozenset(["ini", "conf", "cfg", "properties", "env", "dotenv", "toml"])
_PAIR = re.compile(r"(?:^|(?<=\s))(?P<key>[A-Za-z_][\w.\-/\[\]]*)=(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"']+)")
_CONFIG_LINE = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][\w.\-/\[\]]*=\S")
_ENV_KEY = re.compile(r"^[A-Z][A-Z0-9_]*$")
# "$ srun …", "user@box:~/build$ ./configure …"; "> " continues the command above it
_PROMPT = re.compile(r"^\s*[\w@.~:/-]*\$\s+")
_CONTINUATION = re.compile(r"^\s*>\s+")
_SBATCH = re.compile(r"^\s*#SBATCH\s+(?P<flag>--?[A-Za-z][\w-]*)(?:[= ](?P<value>\S+))?")
_LONG_FLAG = re.compile(r"(?:^|(?<=\s))(?P<flag>--[A-Za-z][\w-]*)=(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"']+)")
_USAGE = re.compile(
    r"^(?P<indent>\s*)(?:-[A-Za-z0-9],\s*)?(?P<flag>--?[A-Za-z][\w-]*)(?P<arg>\[?=\S+|\s[A-Z<][\w<>\[\],.|:@#-]*)?"
    r"(?:\s{2,}(?P<desc>\S.*))?$"
)
# "(default: 5)", "Default: 5.", "defaults to NONE", "The default value is 7-0 (7 days)."
DEFAULT = re.compile(
    r"\bdefault(?:s| value)?(?:\s+(?:is|to|of|value is)\s+|\s*[:=]\s*)`?(?P<value>[^\s`,;()]+?)`?(?=[\s,;)]|\.(?:\s|$)|$)",
    re.I,
)
_FILE_NAME = re.compile(r"[\w.-]*\.(?:conf|cfg|ini|env|toml|properties)\b|\.env\b")
_WORD = re.compile(r"^[a-z][a-z0-9]*$")
_NOT_PROGRAMS = frozenset(["sudo", "time", "exec", "env", "then", "do", "if", "&&", "|"])
FACT_KEYS = 12  # description words kept in a gloss


@dataclass(frozen=True)
class CodeLines:
    """A code block's lines and where each one sits in the chunk's text (a block in a list item is indented)."""

    text: str
    lines: tuple[str, ...]
    first: int  # the chunk's line that holds code line 0
    offsets: tuple[int, ...]

    @classmethod
    def of(cls, text: str, block: md.Block, offsets: Sequence[int] | None = None) -> CodeLines:
        """The lines of ``block``, a code block of ``text`` (``core.markdown.parse``)."""
        lines = tuple(block.code_lines)
        return cls(text, lines, block.first_code_line, tuple(offsets or md.line_offsets(text)))

    def span(self, i: int, column: int, value: str) -> tuple[int, int, int] | None:
        """(start, end, chunk line) of ``value`` at ``column`` of code line ``i``; None if it is not there verbatim."""
        line_no = self.first + i
        source = self.text[self.offsets[line_no] : self.offsets[line_no + 1] - 1]
        code = self.lines[i]
        shift = len(source) - len(code) if code and source.endswith(code) else source.find(code) if code else -1
        start = self.offsets[line_no] + max(shift, 0) + column
        if shift < 0 or self.text[start : start + len(value)] != value or not value:
            return None
        return start, start + len(value), line_no


def gloss(*parts: str) -> str:
    words = " ".join(p for p in parts if p).replace(" > ", " ").split()
    return " ".join(words[: FACT_KEYS + 8])


def _fact(
    code: CodeLines, i: int, column: int, value: str, kind: FactKind, subject: str, key: str, **fields: str
) -> Fact | None:
    """The fact whose value sits at ``column`` of code line ``i`` (quotes dropped); None unless it is there verbatim."""
    value = value.strip()
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
        value, column = value[1:-1], column + 1
    found = code.span(i, column, value) if value else None
    if found is None:
        return None
    fields.setdefault("gloss", gloss(subject, key))
    return Fact(kind=kind, subject=subject, key=key, value=value, start=found[0], end=found[1], line=found[2], **fields)


def code_facts(code: CodeLines, language: str, lead: str = "") -> list[Fact]:
    """Every fact of one code block; ``language`` its info string's first word, ``lead`` the text before it."""
    lines = code.lines
    language = language.lower()
    if language in _YAML_LANGS or (not language and _looks_like_yaml(lines)):
        return manifest_facts(code)
    if language in _CONFIG_LANGS or (language in SHELL_LANGS and _looks_like_config(lines)):
        return config_facts(code, _file_label(lead, lines, language))
    if language in SHELL_LANGS:
        usage = usage_facts(code)
        return usage if usage else command_facts(code)
    return []


# --- manifests ------------------------------------------------------------------------------------------------


def _looks_like_yaml(lines: Sequence[str]) -> bool:
    """An unlabelled block of keys, nested at least once ("adev0: srun -N3" then "0: adev3" is a transcript)."""
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    keyed = sum(
        1 for ln in body if re.match(r"^\s*(?:- +)?[\w\"'][\w.\-/\"']*\s*:(?:\s|$)", ln) or ln.lstrip().startswith("- ")
    )
    nested = any(" > " in path for path in yaml_key_paths(body))
    return len(body) >= 2 and ":" in body[0] and "=" not in body[0] and keyed >= 0.75 * len(body) and nested


def manifest_facts(code: CodeLines) -> list[Fact]:
    """One fact per scalar leaf of each YAML document, with the document's apiVersion and kind."""
    source = "\n".join(code.lines)
    try:
        documents = list(yaml.compose_all(source, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return _manifest_lines(code)
    facts: list[Fact] = []
    for root in documents:
        if not isinstance(root, yaml.MappingNode):
            continue
        head = {
            k.value: v.value for k, v in root.value if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode)
        }
        api, kind = str(head.get("apiVersion", "")), str(head.get("kind", ""))
        subject = " ".join(p for p in (kind, _metadata_name(root)) if p)
        for path, node in _leaves(root, ()):
            found = _leaf_fact(code, node, path, subject, api, kind)
            if found is not None:
                facts.append(found)
    return facts


def _metadata_name(root: yaml.MappingNode) -> str:
    for key, value in root.value:
        if getattr(key, "value", None) == "metadata" and isinstance(value, yaml.MappingNode):
            for k, v in value.value:
                if getattr(k, "value", None) == "name" and isinstance(v, yaml.ScalarNode):
                    return str(v.value)
    return ""


def _leaves(node: yaml.Node, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], yaml.ScalarNode]]:
    if isinstance(node, yaml.ScalarNode):
        yield path, node
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _leaves(item, path)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _leaves(value, (*path, str(getattr(key, "value", ""))))


def _leaf_fact(
    code: CodeLines, node: yaml.ScalarNode, path: tuple[str, ...], subject: str, api: str, kind: str
) -> Fact | None:
    if not path or node.style in ("|", ">") or node.value in ("", None):
        return None
    start, end = node.start_mark, node.end_mark
    raw = code.lines[start.line][start.column :] if start.line < len(code.lines) else ""
    if end.line == start.line:
        raw = raw[: end.column - start.column]
    raw = raw.rstrip()
    key = " > ".join(path)
    group = api.split("/")[0].split(".")[0] if "." in api.split("/")[0] else ""
    return _fact(
        code,
        start.line,
        start.column,
        raw,
        "manifest",
        subject,
        key,
        api_version=api,
        object_kind=kind,
        gloss=gloss(group, kind, key),
    )


_YAML_PAIR = re.compile(r"^\s*(?:-\s+)*(?P<key>[\w\"'][\w.\-/\"']*)\s*:\s+(?P<value>[^#\s][^#]*?)\s*(?:\s#.*)?$")
_YAML_ITEM = re.compile(r"^\s*-\s+(?P<value>[^#\s][^#:]*?)\s*(?:\s#.*)?$")


def _manifest_lines(code: CodeLines) -> list[Fact]:
    """Templated YAML PyYAML cannot read: each ``key: value`` line, its key path by indentation."""
    paths = yaml_key_paths(code.lines)
    docs: list[list[int]] = [[]]
    for i, line in enumerate(code.lines):
        (docs.append([]) if line.strip() == "---" else docs[-1].append(i))
    facts: list[Fact] = []
    for doc in docs:
        head = {m["key"]: m["value"] for i in doc if (m := _YAML_PAIR.match(code.lines[i])) and not paths[i].count(">")}
        api, kind = head.get("apiVersion", ""), head.get("kind", "")
        names = [m["value"] for i in doc if paths[i] == "metadata > name" and (m := _YAML_PAIR.match(code.lines[i]))]
        subject = " ".join(p for p in (kind, names[0] if names else "") if p)
        for i in doc:
            line = code.lines[i]
            m = _YAML_PAIR.match(line) or _YAML_ITEM.match(line)
            if m is None or m["value"] in ("|", ">", "|-", ">-") or line.lstrip().startswith("#"):
                continue
            found = _fact(
                code,
                i,
                m.start("value"),
                m["value"],
                "manifest",
                subject,
                paths[i],
                api_version=api,
                object_kind=kind,
                gloss=gloss(kind, paths[i]),
            )
            if found is not None and paths[i]:
                facts.append(found)
    return facts


# --- config lines ---------------------------------------------------------------------------------------------


def _looks_like_config(lines: Sequence[str]) -> bool:
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if not body or any(_PROMPT.match(ln) for ln in lines):
        return False
    # every word a pair: "NodeName=n1 Gres=gpu:2" is config, "FFLAGS=-O2 ./configure" a command
    unquoted = [re.sub(r"\"[^\"]*\"|'[^']*'", "q", re.split(r"\s#", ln)[0]) for ln in body]
    pairs = [ln for ln in unquoted if all("=" in w for w in ln.split() if w != "export")]
    return len(pairs) >= 0.6 * len(body)


def _file_label(lead: str, lines: Sequence[str], language: str) -> str:
    named = _FILE_NAME.findall(lead)
    if named:
        return str(named[-1])
    for line in lines[:2]:
        if line.lstrip().startswith("#") and (m := _FILE_NAME.search(line)):
            return m.group(0)
    return ".env" if language in ("env", "dotenv") else ""


def config_facts(code: CodeLines, label: str) -> list[Fact]:
    """``Key=Value`` pairs; a line of several pairs is a record named by its first ("NodeName=n1 Gres=…"), and
    indented lines under it continue it (``scontrol show`` output)."""
    facts: list[Fact] = []
    record = ""
    for i, line in enumerate(code.lines):
        if not _CONFIG_LINE.match(line):
            continue
        body = re.split(r"\s#", line, maxsplit=1)[0]
        pairs = list(_PAIR.finditer(body))
        indented = line[:1].isspace()
        if not indented:
            record = pairs[0].group(0) if len(pairs) > 1 else ""
        exported = line.lstrip().startswith("export ")
        for n, m in enumerate(pairs):
            env = exported or label == ".env" or (_ENV_KEY.match(m["key"]) is not None and not label)
            subject = f"{label} {record}".strip() if (n or indented) and record else label
            kind: FactKind = "env" if env else "config"
            found = _fact(code, i, m.start("value"), m["value"], kind, subject, m["key"], gloss=gloss(label, m["key"]))
            if found is not None:
                facts.append(found)
    return facts


# --- commands and usage ---------------------------------------------------------------------------------------


def _command(words: Sequence[str]) -> tuple[str, str]:
    """(program, program with its subcommands) of a command line's words ("scontrol create reservation")."""
    # "PODNAME=$(kubectl get …" runs kubectl; "sudo", assignments and options name no program
    words = [w.rsplit("$(", 1)[-1] for w in words]
    at = next((n for n, w in enumerate(words) if w and w not in _NOT_PROGRAMS and w[0] != "-" and "=" not in w), None)
    if at is None:
        return "", ""
    program = words[at].rsplit("/", 1)[-1]
    subs = [w for w in words[at + 1 : at + 3] if _WORD.match(w)]
    return program, " ".join([program, *subs])


def command_facts(code: CodeLines) -> list[Fact]:
    """Flags with values and ``key=value`` arguments of the command lines (a transcript's prompt lines only)."""
    transcript = any(_PROMPT.match(ln) for ln in code.lines)
    facts: list[Fact] = []
    program = command = ""
    continued = False
    for i, line in enumerate(code.lines):
        if m := _SBATCH.match(line):
            if m["value"]:
                found = _fact(code, i, m.start("value"), m["value"], "flag", "sbatch", m["flag"])
                facts.extend([found] if found else [])
            continue
        is_prompt = bool(_PROMPT.match(line))
        if continued or _CONTINUATION.match(line):
            body, continued = _CONTINUATION.sub("", line), True
        elif is_prompt or not (transcript or line.lstrip().startswith("#")):
            body = _PROMPT.sub("", line)
            program, command = _command(body.split())
        else:  # a transcript's output, or a comment
            continue
        offset = len(line) - len(body)
        for m in _LONG_FLAG.finditer(body):
            found = _fact(code, i, offset + m.start("value"), m["value"], "flag", program, m["flag"])
            facts.extend([found] if found else [])
        for m in _PAIR.finditer(body):
            if m.start() > 0:
                assigned: FactKind = "env" if _ENV_KEY.match(m["key"]) else "config"
                found = _fact(code, i, offset + m.start("value"), m["value"], assigned, command, m["key"])
                facts.extend([found] if found else [])
        continued = line.rstrip().endswith("\\")
    return facts


def usage_facts(code: CodeLines) -> list[Fact]:
    """A usage block's options: flag, argument, description (its own line's and the more-indented ones under it)."""
    lines = code.lines
    entries: list[tuple[int, re.Match[str], list[int]]] = []
    for i, line in enumerate(lines):
        m = _USAGE.match(line)
        if m is not None and len(m["indent"]) >= 1:
            entries.append((i, m, []))
        elif (
            entries
            and line.strip()
            and len(line) - len(line.lstrip()) > len(entries[-1][1]["indent"]) + 4
            and entries[-1][0] + len(entries[-1][2]) + 1 == i  # right under the flag or its description
        ):
            entries[-1][2].append(i)
    described = [e for e in entries if e[1]["desc"] or e[2]]
    if len(described) < 2:
        return []
    program = next((_command(_PROMPT.sub("", ln).split())[0] for ln in lines if _PROMPT.match(ln)), "")
    usage = next((re.search(r"usage:\s*(\S+)", ln, re.I) for ln in lines if re.search(r"usage:\s*\S", ln, re.I)), None)
    program = usage.group(1) if usage else program
    facts: list[Fact] = []
    for i, m, more in described:
        description = " ".join([m["desc"] or "", *(lines[j].strip() for j in more)]).strip()
        default = DEFAULT.search(description)
        arg = (m["arg"] or "").strip().lstrip("[").lstrip("=") if m["arg"] else ""
        column = m.end("arg") - len(arg) if arg else m.start("flag")
        value = arg or m["flag"]
        found = _fact(
            code,
            i,
            column,
            value,
            "flag",
            program,
            m["flag"],
            description=description,
            default=default["value"] if default else "",
            gloss=gloss(program, m["flag"], " ".join(description.split()[:FACT_KEYS])),
        )
        facts.extend([found] if found else [])
    return facts
