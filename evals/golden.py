"""Load and validate the golden Q&A file (JSON Lines, one case per line).

Every problem is reported with its line and field (``golden.jsonl:12: field 'must_include.0.1': ...``)
and all problems are collected before failing, so one run of ``evals`` shows everything to fix.
Validation is strict on purpose: a misspelt key or an answerable case with no key facts would
otherwise score as a silent pass.

Deliberately left out: checking that the facts are true (that is what reviewing the file is for) and
any other format than JSON Lines.

    >>> case = GoldenCase.model_validate({"id": "q1", "question": "Q?", "lang": "en",
    ...     "reference_answer": "A.", "must_include": [["512 ?MB"]], "sources": ["gateway-en"]})
    >>> case.refuse, case.section
    (False, None)
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from app.models import AnswerType

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class GoldenError(ValueError):
    """The golden file cannot be used; ``problems`` lists every issue as 'file:line: ...'."""

    def __init__(self, path: Path, problems: list[str]):
        self.path = path
        self.problems = problems
        shown = "\n".join(problems[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{len(problems)} problem(s) in golden file {path}:\n{shown}{more}")


@cache
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Key-fact patterns are matched case-insensitively against NFKC-normalised text."""
    return re.compile(pattern, re.IGNORECASE)


# The answer types a case may be labelled with: the advisor's, plus "none" for a value that is not stated.
AnswerTypeLabel = AnswerType | Literal["none"]


class GoldenCase(BaseModel):
    """One question with what a correct answer must contain and which documents support it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Unique, stable case id (letters, digits, '.', '_', '-').")
    question: str = Field(min_length=1, description="The question as a user would type it.")
    lang: Literal["ja", "en"] = Field(description="Language of the question.")
    reference_answer: str = Field(description="A short correct answer, for token-overlap F1 and for reviewers.")
    must_include: list[list[str]] = Field(
        default_factory=list,
        description="Key facts: every group must match; a group is a list of alternative regexes.",
    )
    sources: list[str] = Field(default_factory=list, description="Doc ids that support the answer.")
    section: str | None = Field(None, description="Section (heading path prefix or part) holding the answer.")
    refuse: bool = Field(False, description="True when the knowledge base cannot answer: the system must refuse.")
    tags: list[str] = Field(default_factory=list, description="e.g. injection, cross-lang, selection, multi-fact.")
    history: list[str] = Field(
        default_factory=list, description="Earlier user questions of the conversation, oldest first (follow-ups)."
    )
    verdict: Literal["slurm", "kubernetes", "hybrid", "depends"] | None = Field(
        None, description="Selection cases: the verdict the documents state for the situation; None for the rest."
    )
    answer_type: AnswerTypeLabel | None = Field(
        None,
        description="The kind of answer expected (the first part's for a multi-part question); 'none' when refused.",
    )
    part_types: list[AnswerTypeLabel] = Field(
        default_factory=list, description="One answer type per must_include group."
    )
    asked_type: AnswerTypeLabel | None = Field(
        None, description="Near-miss cases: the type the missing value would have."
    )
    focus: str | None = Field(None, description="Near-miss cases: the entity asked about (which the documents cover).")
    asked: str | None = Field(None, description="Near-miss cases: the attribute asked for (which they never state).")
    situation: dict[str, str] | None = Field(
        None, description="Selection cases: the facets the question states ({facet: value}), for reading errors."
    )
    deciding: str | None = Field(None, description="'depends' cases: the facet that decides between the platforms.")

    _line: int = PrivateAttr(0)

    @property
    def line(self) -> int:
        """Line of the case in its file (0 when built in code)."""
        return self._line

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("must be 1-128 characters of letters, digits, '.', '_' or '-'")
        return value

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("must_include")
    @classmethod
    def _valid_patterns(cls, groups: list[list[str]]) -> list[list[str]]:
        for gi, group in enumerate(groups):
            if not group:
                raise ValueError(f"group {gi} is empty: give at least one alternative")
            for ai, pattern in enumerate(group):
                where = f"group {gi}, alternative {ai} ({pattern!r})"
                if not pattern.strip():
                    raise ValueError(f"{where} is blank")
                try:
                    compiled = compile_pattern(pattern)
                except re.error as exc:
                    raise ValueError(f"{where} is not a valid regex: {exc}") from None
                if compiled.search(""):
                    raise ValueError(f"{where} matches the empty string, so it would always pass")
                if unicodedata.normalize("NFKC", pattern) != pattern:
                    # Answers are NFKC-normalised before matching, so e.g. a full-width '％' could never match.
                    raise ValueError(f"{where} changes under NFKC normalisation: write its normalised form")
        return groups

    @field_validator("sources", "tags")
    @classmethod
    def _no_blanks(cls, values: list[str]) -> list[str]:
        if any(not v.strip() for v in values):
            raise ValueError("must not contain blank entries")
        if len(set(values)) != len(values):
            raise ValueError("must not contain duplicates")
        return values

    @model_validator(mode="after")
    def _consistent(self) -> GoldenCase:
        if not self.refuse:
            if not self.must_include:
                raise ValueError("an answerable case (refuse: false) needs at least one must_include group")
            if not self.sources:
                raise ValueError("an answerable case (refuse: false) needs at least one source doc id")
        if self.section is not None and (not self.section.strip() or not self.sources):
            raise ValueError("'section' must be non-blank and needs 'sources'")
        return self


def _field_name(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(case)"


def parse_golden(text: str, path: Path) -> list[GoldenCase]:
    """Parse JSON Lines text into cases; raises GoldenError listing every problem. Blank lines are skipped."""
    name = path.name
    problems: list[str] = []
    cases: list[GoldenCase] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{name}:{number}: not valid JSON ({exc.msg}, column {exc.colno})")
            continue
        if not isinstance(data, dict):
            problems.append(f"{name}:{number}: expected a JSON object, got {type(data).__name__}")
            continue
        try:
            case = GoldenCase.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                msg = str(err["msg"]).removeprefix("Value error, ")
                problems.append(f"{name}:{number}: field '{_field_name(err['loc'])}': {msg}")
            continue
        case._line = number
        if case.id in first_line:
            problems.append(
                f"{name}:{number}: field 'id': duplicate id '{case.id}' (first on line {first_line[case.id]})"
            )
            continue
        first_line[case.id] = number
        cases.append(case)
    if not cases and not problems:
        problems.append(f"{name}: no cases (the file is empty)")
    if problems:
        raise GoldenError(path, problems)
    return cases


def load_golden(path: Path) -> list[GoldenCase]:
    """Read and validate a golden file; raises GoldenError (also for a missing or unreadable file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GoldenError(path, [f"{path}: file not found"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenError(path, [f"{path}: unreadable ({exc})"]) from None
    return parse_golden(text, path)


def unknown_sources(cases: Iterable[GoldenCase], doc_ids: set[str], path: Path) -> list[str]:
    """Problems for source doc ids that are not in the corpus (such cases could never be retrieved)."""
    return [
        f"{path.name}:{case.line}: field 'sources': unknown doc id '{doc_id}'"
        for case in cases
        for doc_id in case.sources
        if doc_id not in doc_ids
    ]


SPLITS_PATH = Path(__file__).with_name("splits.toml")
# The splits of the labelled situation tables (evals/situations*.jsonl, evals/negation.jsonl): the models are fitted
# on train and chosen on dev; dev2-dev7 are read while choosing, never by the fit; the test splits only to report.
SITUATION_SPLITS = ("train", "dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7", "test", "test2", "test3")


def split_files(name: str, path: Path = SPLITS_PATH) -> list[Path]:
    """The question files of one split of the evaluation protocol (``evals/splits.toml``)."""
    import tomllib

    with path.open("rb") as fh:
        splits = tomllib.load(fh)
    if name not in splits:
        raise GoldenError(path, [f"{path.name}: unknown split {name!r} (known: {', '.join(sorted(splits))})"])
    return [path.parent / file for file in splits[name]]


def load_split(name: str, path: Path = SPLITS_PATH) -> list[GoldenCase]:
    """Every case of one split, file after file (ids are unique across the files)."""
    cases: list[GoldenCase] = []
    for file in split_files(name, path):
        cases.extend(load_golden(file))
    return cases
