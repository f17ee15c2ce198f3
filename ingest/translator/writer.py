"""`ingest --translate`: write machine-translated companions (en ⇄ ja) through an OpenAI-compatible or Ollama server.

For each original that has no companion in the target language, or only a stale one (its ``source_sha256`` is
not the original's body hash), the body is cut before every heading, each section is translated on its own,
and the result must keep the original's structure (``ingest.companions.structure_problem``): a section that
comes back with other headings, lists, tables or code blocks is asked for once more with the problem named,
then the document fails and nothing is written for it. The companion is written atomically with front matter
that links it to its original. Up-to-date companions cost no request.

    >>> split_sections("intro\\n# A\\ntext\\n```\\n# code\\n```\\n## B\\n")
    ['intro\\n', '# A\\ntext\\n```\\n# code\\n```\\n', '## B\\n']

Deliberately left out: languages other than en/ja, streaming, parallel requests (one local model, one
request at a time), reviewing the wording, and indexing (the CLI runs the normal ingest afterwards).
A stale companion written by a person is kept, not overwritten: delete it to have it machine-translated.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field
from tqdm import tqdm

from core import markdown as md
from core.files import write_atomic
from core.settings import Settings
from ingest.chunking import headings
from ingest.companions import structure_problem
from ingest.documents import Document, load_corpus, parse_document
from ingest.translator.backend import (
    MACHINE,
    Backend,
    BackendUnreachable,
    TranslateUsageError,
    TranslationFailed,
    resolve_backend,
)

__all__ = ["Backend", "BackendUnreachable", "TranslateUsageError", "TranslationFailed", "resolve_backend"]

Language = Literal["en", "ja"]
LANGUAGE_NAMES: dict[str, str] = {"en": "English", "ja": "Japanese"}
TITLE_SUFFIX: dict[str, str] = {"en": " (English translation)", "ja": "（日本語訳）"}
COMPLETENESS = "translation (machine translation of the whole document; not the publisher's wording)"
_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_WRAPPER_LANGUAGES = ("", "markdown", "md")  # the info strings a model wraps Markdown in
_LANG_SUFFIX = re.compile(r"-(en|ja)$")


class Outcome(BaseModel):
    """What happened to one original."""

    doc_id: str
    companion_id: str
    status: Literal["written", "up to date", "failed", "kept"]
    reason: str = ""


class TranslateReport(BaseModel):
    outcomes: list[Outcome] = Field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def summary(self) -> str:
        text = f"{self.count('written')} written, {self.count('up to date')} up to date, {self.count('failed')} failed"
        if kept := self.count("kept"):
            text += f", {kept} stale human translation(s) kept"
        return text


# --- pure helpers --------------------------------------------------------------------------------------------


def split_sections(body: str) -> list[str]:
    """Cut ``body`` before every section heading, as ``core.markdown`` reads the body (so a '#' line in code,
    an HTML block or a list item is text); the pieces join back to ``body`` exactly, line endings and all."""
    offsets = md.line_offsets(body)
    # the chunker's sections: a top-level ATX heading with a title (``ingest.chunking.headings``)
    cuts = [offsets[b.start] for b in md.parse(body) if b.kind == "heading" and not b.is_setext and b.text]
    bounds = [0, *cuts, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def section_problem(translated: str, original: str) -> str | None:
    """``structure_problem`` for one section; text before the first heading gets a stand-in heading so its
    lists and tables are compared too (the shape is counted per heading)."""
    if not headings(original):
        translated, original = "# §\n\n" + translated, "# §\n\n" + original
    return structure_problem(translated, original)


def clean_reply(reply: str, original: str) -> str:
    """The model's reply without the Markdown fence some models wrap it in. The wrapper is told from code by
    what is inside: a fence is a wrapper when taking it off leaves as many code blocks as the original has
    (a wrapper's inner fences close it early by CommonMark's rules, so the whole reply reads as several
    blocks, not one)."""
    text = reply.strip()
    inner = _inside_fence(text)
    if inner is not None and _code_blocks(inner) == _code_blocks(original):
        text = inner
    return text


def _inside_fence(text: str) -> str | None:
    """What lies between ``text``'s first line, a fence tagged as Markdown or not at all, and its last line, a
    closing fence for it; None otherwise (a fence left open may be a reply cut short)."""
    blocks, src = md.parse(text), md.lines(text)
    opening = blocks[0] if blocks else None
    if opening is None or opening.kind != "code" or not opening.markup or opening.start != 0 or len(src) < 2:
        return None
    closing = src[-1].strip()
    if opening.language not in _WRAPPER_LANGUAGES or not closing.startswith(opening.markup):
        return None
    if closing.strip(opening.markup[0]):  # a fence line with an info string opens, never closes
        return None
    offsets = md.line_offsets(text)
    return text[offsets[1] : offsets[len(src) - 1] - 1].strip()


def _code_blocks(text: str) -> int:
    return sum(1 for b in md.walk(md.parse(text)) if b.kind == "code")


def companion_id(original_id: str, to: str) -> str:
    """``slurm-article-ja`` → ``slurm-article-en``; ``gateway`` → ``gateway-en``."""
    return _LANG_SUFFIX.sub("", original_id) + f"-{to}"


def system_prompt(source: str, to: str) -> str:
    src, dst = LANGUAGE_NAMES.get(source, source), LANGUAGE_NAMES[to]
    return (
        f"You translate Markdown from {src} into {dst}. Translate the user's Markdown into {dst} and keep its "
        "Markdown structure exactly: the same headings with the same levels (same number of #), the same list "
        "items with the same markers and nesting, the same table rows and columns, the same blocks in the same "
        "order. Leave code blocks, inline code, URLs and link targets unchanged; keep product, project and command "
        "names (Slurm, Kubernetes, sbatch, kubectl, ...) as they are. Add nothing and drop nothing: no notes, no "
        f"explanations. Output only the translated Markdown."
    )


def front_matter(text: str) -> dict[str, Any]:
    """The YAML front matter of a Markdown file as a dict ({} when absent or unreadable)."""
    match = _FRONT.match(text)
    if not match:
        return {}
    try:
        loaded = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def render_companion(original: Document, cid: str, to: str, title: str, body: str, backend: Backend) -> str:
    """The companion file: front matter linking it to ``original``, then the translated body."""
    fields = {
        "id": cid,
        "title": title,
        "url": original.url,
        "language": to,
        "license": f"{original.license or 'unknown (none stated in the original)'}; translation of that document",
        "translation_of": original.id,
        "source_sha256": original.body_sha256,
        "translator": backend.translator,
        "completeness": COMPLETENESS,
        "notes": (
            f"Machine translation of {original.id}, written section by section by `ingest --translate`. Same "
            "headings, lists and tables in the same order, so each section maps to the original section of the "
            "same number. source_sha256 is the SHA-256 of the original's body; when the original changes, this "
            "translation is stale and the next `ingest --translate` rewrites it."
        ),
    }
    # JSON strings are valid YAML double-quoted scalars, and keep Japanese readable.
    lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items() if value]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


# --- planning: which originals need a companion ---------------------------------------------------------------


@dataclass(frozen=True)
class Existing:
    id: str
    path: Path
    translation_of: str
    language: str
    source_sha256: str
    translator: str


@dataclass(frozen=True)
class Job:
    original: Document
    to: str
    companion_id: str
    path: Path
    existing: Existing | None


def existing_companions(translations_dir: Path) -> list[Existing]:
    """Every readable companion in the translations folder (files that fail to parse are not companions)."""
    found: list[Existing] = []
    if not translations_dir.is_dir():
        return found
    for path in sorted(translations_dir.rglob("*.md")):
        try:
            raw = path.read_bytes()
            doc = parse_document(raw, path.name)
        except (OSError, ValueError):
            continue
        if doc.translation_of:
            translator = str(front_matter(raw.decode("utf-8")).get("translator") or "")
            found.append(Existing(doc.id, path, doc.translation_of, doc.language, doc.source_sha256, translator))
    return found


def plan(
    originals: Sequence[Document],
    companions: Sequence[Existing],
    translations_dir: Path,
    doc_ids: Sequence[str],
    to: str | None,
) -> list[Job]:
    """One job per original to translate (pure). Raises TranslateUsageError for a request that makes no sense."""
    by_id = {d.id: d for d in originals}
    translation_ids = {c.id for c in companions}
    if not doc_ids and to is None:
        raise TranslateUsageError("name the documents to translate, or give --to en|ja to translate all of them")
    for doc_id in doc_ids:
        if doc_id in translation_ids:
            raise TranslateUsageError(f"'{doc_id}' is a translation; name its original")
        if doc_id not in by_id:
            raise TranslateUsageError(f"no original document '{doc_id}' in the corpus")
    chosen = [by_id[i] for i in dict.fromkeys(doc_ids)] if doc_ids else [d for d in originals if d.language != to]
    jobs = []
    for doc in chosen:
        target = to or {"en": "ja", "ja": "en"}.get(doc.language)
        if target is None:
            raise TranslateUsageError(f"'{doc.id}' is in '{doc.language}'; give --to en|ja")
        if target == doc.language:
            raise TranslateUsageError(f"'{doc.id}' is already in '{target}'")
        existing = next((c for c in companions if c.translation_of == doc.id and c.language == target), None)
        cid = existing.id if existing else companion_id(doc.id, target)
        path = existing.path if existing else translations_dir / f"{cid}.md"
        jobs.append(Job(doc, target, cid, path, existing))
    return jobs


# --- translating ----------------------------------------------------------------------------------------------


def _translate_section(backend: Backend, system: str, section: str, number: int) -> str:
    lead = section[: len(section) - len(section.lstrip("\r\n"))]
    core = section.strip("\r\n").rstrip()
    if not core.strip():
        return section
    trail = section[len(lead) + len(core) :]
    messages = [{"role": "system", "content": system}, {"role": "user", "content": core}]
    problem: str | None = None
    for _attempt in range(2):
        reply = clean_reply(backend.chat(messages), core)
        problem = section_problem(reply, core) if reply else "the reply was empty"
        if problem is None:
            return lead + reply + trail
        messages += [
            {"role": "assistant", "content": reply},
            {
                "role": "user",
                "content": f"That changed the structure ({problem}). Translate the section again "
                "with exactly the original's headings, list items, table rows and code blocks; output only Markdown.",
            },
        ]
    name = headings(core)[0][1] if headings(core) else "(text before the first heading)"
    raise TranslationFailed(f"section {number} '{name}' came back with a different structure twice: {problem}")


def _translate_title(backend: Backend, doc: Document, to: str, body: str) -> str:
    originals = [t for _, t in headings(doc.body)]
    if doc.title in originals:  # the title is a heading: its translation is already in the body
        title = [t for _, t in headings(body)][originals.index(doc.title)]
    else:
        system = f"Translate the user's document title into {LANGUAGE_NAMES[to]}. Output only the title, one line."
        reply = backend.chat([{"role": "system", "content": system}, {"role": "user", "content": doc.title}])
        title = next((ln.strip(" #\"'") for ln in reply.splitlines() if ln.strip()), "")
    return (title or doc.title) + TITLE_SUFFIX[to]


def translate_document(backend: Backend, job: Job, progress: bool = False) -> str:
    """The whole companion file for ``job``; raises TranslationFailed / BackendUnreachable."""
    doc = job.original
    system = system_prompt(doc.language, job.to)
    sections = split_sections(doc.body)
    out: list[str] = []
    bar = tqdm(total=len(sections), desc=job.companion_id, unit="section", disable=not progress, file=sys.stderr)
    try:
        for number, section in enumerate(sections, start=1):
            out.append(_translate_section(backend, system, section, number))
            bar.update(1)
    finally:
        bar.close()
    body = "".join(out)
    if problem := structure_problem(body, doc.body):
        raise TranslationFailed(f"the reassembled translation does not match the original: {problem}")
    text = render_companion(doc, job.companion_id, job.to, _translate_title(backend, doc, job.to, body), body, backend)
    if parse_document(text.encode("utf-8"), job.path.name).body != body:  # what ingest will read back
        raise TranslationFailed("the written file would not read back as the translated body")
    return text


def run_translate(
    settings: Settings,
    backend: Backend,
    doc_ids: Sequence[str] = (),
    to: str | None = None,
    *,
    progress: bool = False,
) -> TranslateReport:
    """Write every missing or stale companion. TranslateUsageError before anything is sent; BackendUnreachable
    stops the run (companions already written stay: each is complete and valid)."""
    translations_dir = settings.index.translations_folder
    docs, _errors = load_corpus(settings.index.corpus_dir)  # unreadable files are the ingest's to report
    originals = [d for d in docs if not d.translation_of]  # a translations folder inside the corpus folder
    companions = existing_companions(translations_dir)
    report = TranslateReport()
    jobs = plan(originals, companions, translations_dir, doc_ids, to)
    for job in jobs:
        outcome = Outcome(doc_id=job.original.id, companion_id=job.companion_id, status="written")
        old = job.existing
        if old is not None and old.source_sha256 == job.original.body_sha256:
            outcome.status = "up to date"
        elif old is not None and not old.translator.startswith(MACHINE):
            outcome.status, outcome.reason = "kept", f"{old.path.name} is stale but was translated by a person"
        elif old is None and job.path.exists():
            outcome.status = "failed"
            outcome.reason = f"{job.path} exists and is not a translation of '{job.original.id}'; move it"
        else:
            try:
                write_atomic(job.path, translate_document(backend, job, progress))
            except TranslationFailed as exc:
                outcome.status, outcome.reason = "failed", str(exc)
        report.outcomes.append(outcome)
    return report
