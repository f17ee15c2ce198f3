"""Read the corpus folder: Markdown files with optional YAML front matter, validated per file.

Adding a document is dropping a ``.md`` file into the folder. Only the body is required; ``id`` comes
from the file name and ``title`` from the first heading when the front matter leaves them out.
Every problem is reported per file with its reason, so one bad file never hides the others.

Deliberately left out: any format other than Markdown, and fetching (see ``ingest.sync.sources``).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.text import detect_language
from ingest.chunking import headings, parse_blocks

# The inner group is optional so an empty front matter ("---" right after "---") is still closed.
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?:(.*?)\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_OPENING = re.compile(r"\A---[ \t]*\r?\n")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MAX_DOC_BYTES = 5_000_000
_PARAPHRASED = re.compile(r"paraphras|not verbatim|summary notes", re.IGNORECASE)


class Document(BaseModel):
    """A corpus document after front-matter validation."""

    id: str
    title: str
    url: str = ""
    language: str = "en"
    license: str = ""
    completeness: str = ""
    role: str = ""
    path: str = Field("", description="Source file, relative to the corpus folder.")
    body: str = Field(description="Markdown body without front matter, verbatim.")
    translation_of: str = Field("", description="A translation companion: the original document's id.")
    source_sha256: str = Field("", description="A translation: SHA-256 of the original's body it was made from.")
    section_map: dict[str, str] = Field(
        default_factory=dict, description="A translation: its section paths → the original's (set by linking)."
    )

    @property
    def body_sha256(self) -> str:
        """SHA-256 of the UTF-8 body: what a translation's ``source_sha256`` records of its original."""
        return hashlib.sha256(self.body.encode("utf-8")).hexdigest()

    @property
    def verbatim(self) -> bool:
        """False for paraphrased notes (``completeness: partial (paraphrased notes …; not verbatim)``): a
        quote from them is not the source's wording, and a citation must say so."""
        return not _PARAPHRASED.search(self.completeness)

    @property
    def content_hash(self) -> str:
        """Hash of everything that ends up in the index, so any change triggers re-embedding."""
        h = hashlib.sha256()
        aligned = "\n".join(f"{k}\t{v}" for k, v in sorted(self.section_map.items()))
        for part in (
            self.id,
            self.title,
            self.url,
            self.language,
            str(self.verbatim),
            self.translation_of,
            aligned,
            self.body,
        ):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
        return h.hexdigest()[:16]


class FrontMatter(BaseModel):
    """Validated front matter. Unknown keys (author, date, notes, ...) are kept but not required."""

    model_config = ConfigDict(extra="allow")

    id: str | None = Field(None, description="Stable document id; defaults to the file name stem.")
    title: str | None = Field(None, description="Display title; defaults to the first heading.")
    url: str = Field("", description="Canonical link used in citations.")
    language: str = Field("", description="'ja', 'en', ...; detected from the text when missing.")
    license: str = ""
    completeness: str = ""
    role: str = ""
    translation_of: str = Field("", description="A translation companion: the original document's id.")
    source_sha256: str = Field("", description="A translation: SHA-256 of the original's body it was made from.")

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        if value is not None and not _ID.match(value):
            raise ValueError("must be 1-128 characters of letters, digits, '.', '_' or '-'")
        return value

    @field_validator("source_sha256", "translation_of", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        # YAML reads an all-digit hash or id as a number; it is still text
        return str(value) if isinstance(value, int | float) else value

    @field_validator("url")
    @classmethod
    def _valid_url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL")
        return value


class DocumentError(BaseModel):
    """Why one file could not be read."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def first_error(exc: ValidationError, whole: str) -> tuple[str, str]:
    """(dotted field path, message) of a validation error's first problem; ``whole`` when no field."""
    first = exc.errors()[0]
    return ".".join(str(part) for part in first["loc"]) or whole, str(first["msg"])


def parse_document(raw: bytes, rel_path: str) -> Document:
    """Parse one file's bytes into a Document; raises ValueError with a reason a person can act on."""
    if len(raw) > MAX_DOC_BYTES:
        raise ValueError(f"file is {len(raw):,} bytes, over the {MAX_DOC_BYTES:,}-byte limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte {exc.start}): save the file as UTF-8") from None
    text = text.removeprefix("\ufeff")
    meta: dict[str, object] = {}
    body = text
    match = _FRONT_MATTER.match(text)
    if match:
        try:
            loaded = yaml.safe_load(match.group(1) or "")
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 2})" if mark is not None else ""  # +2: 0-based, after the '---'
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ValueError(f"malformed front matter{where}: {problem}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ValueError("malformed front matter: expected 'key: value' lines")
        meta = {str(k): v for k, v in (loaded or {}).items()}
        body = text[match.end() :]
    elif _OPENING.match(text):
        raise ValueError("malformed front matter: opening '---' has no closing '---'")
    try:
        fm = FrontMatter.model_validate(meta)
    except ValidationError as exc:
        field, msg = first_error(exc, "front matter")
        raise ValueError(f"front matter field '{field}': {msg}") from None
    if not body.strip():
        raise ValueError("document is empty (no text after the front matter)")
    if not parse_blocks(body):
        # It would index as zero chunks and count as new on every ingest.
        raise ValueError("document has headings but no text under them")
    stem = Path(rel_path).stem
    doc_id = fm.id or stem
    if not _ID.match(doc_id):
        raise ValueError(f"cannot derive an id from the file name '{stem}': set 'id' in the front matter")
    found = headings(body)  # skips '# comments' inside code blocks
    title = fm.title or (found[0][1] if found and found[0][1] else doc_id)
    return Document(
        id=doc_id,
        title=str(title),
        url=fm.url,
        language=fm.language or detect_language(body),
        license=fm.license,
        completeness=fm.completeness,
        role=fm.role,
        path=rel_path,
        body=body,
        translation_of=fm.translation_of,
        source_sha256=fm.source_sha256.strip().lower(),
    )


def load_corpus(corpus_dir: Path, translations_dir: Path | None = None) -> tuple[list[Document], list[DocumentError]]:
    """Read every ``*.md`` under ``corpus_dir`` (recursively), and the translation companions under
    ``translations_dir`` when it exists. Returns documents and per-file errors; a companion must name
    its original (``translation_of``), and companions are linked by ``ingest.companions.link``."""
    if not corpus_dir.is_dir():
        return [], [DocumentError(path=str(corpus_dir), reason="corpus folder does not exist")]
    docs, errors = _read_folder(corpus_dir, "")
    if (
        translations_dir is not None
        and translations_dir.is_dir()
        and translations_dir.resolve() != corpus_dir.resolve()
    ):
        more, more_errors = _read_folder(translations_dir, f"{translations_dir.name}/")
        errors.extend(more_errors)
        for doc in more:
            if not doc.translation_of:
                errors.append(DocumentError(path=doc.path, reason="a translation companion needs 'translation_of'"))
        docs.extend(d for d in more if d.translation_of)
    seen: dict[str, str] = {}
    unique: list[Document] = []
    for doc in docs:
        if doc.id in seen:
            errors.append(DocumentError(path=doc.path, reason=f"duplicate id '{doc.id}' (also in {seen[doc.id]})"))
            continue
        seen[doc.id] = doc.path
        unique.append(doc)
    return unique, errors


def _read_folder(folder: Path, prefix: str) -> tuple[list[Document], list[DocumentError]]:
    docs: list[Document] = []
    errors: list[DocumentError] = []
    for path in sorted(folder.rglob("*.md")):
        rel = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in Path(rel).parts) or path.name.upper() == "README.MD":
            continue  # hidden files and the folder's own README are not documents
        try:
            docs.append(parse_document(path.read_bytes(), prefix + rel))
        except OSError as exc:
            errors.append(DocumentError(path=prefix + rel, reason=f"unreadable: {exc.strerror or exc}"))
        except ValueError as exc:
            errors.append(DocumentError(path=prefix + rel, reason=str(exc)))
    return docs, errors
