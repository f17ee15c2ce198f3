"""`ingest --sync`: refresh the corpus folder from the sources listed in ``corpus/sources.toml``.

For every source with sync enabled: download ``fetch_url`` (or ``url``) with a conditional request
(ETag / Last-Modified kept in ``<corpus>/.sync-state.json``), turn HTML into clean Markdown (Markdown
and plain text are kept as they are), and write ``<id>.md`` with front matter from the manifest,
atomically. Same content → the file is not touched, so the incremental ingest that follows embeds
only what really changed. A failed source keeps its previous file: a network error never deletes
knowledge. This module holds the manifest model, the report and that orchestration; the bounded
download (timeout, size, retries, redirects, http(s) only) is ``ingest.sync.fetch`` and the HTML
conversion is ``ingest.sync.html_markdown``.

Deliberately left out: crawling beyond the listed URLs, JavaScript rendering, PDFs and images,
concurrent downloads (a few dozen pages, fetched politely one by one), and deleting files of
sources removed from the manifest (delete those by hand).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.files import write_atomic
from core.settings import Settings
from ingest.documents import first_error, parse_document
from ingest.sync.fetch import USER_AGENT, Fetched, FetchError, SyncLimits, fetch
from ingest.sync.html_markdown import html_to_markdown, tidy

STATE_FILE = ".sync-state.json"  # hidden: the corpus loader skips dot-files
_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)

Status = Literal["unchanged", "updated", "failed", "skipped"]


# --- manifest -------------------------------------------------------------------------------------
class ManifestError(ValueError):
    """The manifest cannot be read; the message names the file and the entry."""


class Source(BaseModel):
    """One [[source]] table of the manifest: metadata only, never document text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_ID, description="File stem of <id>.md and the document id.")
    title: str = Field(min_length=1)
    url: str = Field(description="Canonical link used in citations.")
    fetch_url: str | None = Field(None, description="Download location when it is not `url` (raw file).")
    selector: str | None = Field(None, description="CSS selector of an HTML page's main content.")
    language: str = ""
    license: str = ""
    role: str = ""
    completeness: str = ""
    source_repo: str | None = None
    source_commit: str | None = None
    sync: bool = True
    sync_reason: str = ""

    @field_validator("url", "fetch_url")
    @classmethod
    def _http_only(cls, value: str | None) -> str | None:
        if value is not None and urlsplit(value).scheme not in ("http", "https"):
            raise ValueError("must be an http(s) URL")
        return value

    @model_validator(mode="after")
    def _reason_when_disabled(self) -> Source:
        if not self.sync and not self.sync_reason.strip():
            raise ValueError("sync = false needs a sync_reason")
        return self

    @property
    def download_url(self) -> str:
        return self.fetch_url or self.url


def load_manifest(path: Path) -> list[Source]:
    """Parse and validate the manifest; raises ManifestError with a reason a person can act on."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"manifest {path} not found") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"manifest {path} is unreadable: {exc}") from None
    entries = data.get("source")
    if not isinstance(entries, list) or set(data) != {"source"}:
        raise ManifestError(f"manifest {path}: expected only [[source]] tables")
    sources: list[Source] = []
    seen: set[str] = set()
    for n, entry in enumerate(entries, start=1):
        label = entry.get("id", "?") if isinstance(entry, dict) else "?"
        try:
            source = Source.model_validate(entry)
        except ValidationError as exc:
            field, msg = first_error(exc, "entry")
            raise ManifestError(f"manifest {path}: source #{n} ({label}), {field}: {msg}") from None
        if source.id in seen:
            raise ManifestError(f"manifest {path}: duplicate id '{source.id}' (source #{n})")
        seen.add(source.id)
        sources.append(source)
    return sources


# --- report ---------------------------------------------------------------------------------------
class SourceResult(BaseModel):
    id: str
    status: Status
    reason: str = ""
    url: str = ""


class SyncReport(BaseModel):
    results: list[SourceResult] = Field(default_factory=list)
    error: str | None = Field(None, description="Set when nothing could be synced at all.")
    seconds: float = 0.0

    def count(self, status: Status) -> int:
        return sum(1 for r in self.results if r.status == status)

    def summary(self) -> str:
        if self.error:
            return f"sync: {self.error}"
        lines = [
            f"sync: {self.count('updated')} updated, {self.count('unchanged')} unchanged, "
            f"{self.count('failed')} failed, {self.count('skipped')} skipped in {self.seconds:.1f}s"
        ]
        lines += [f"  {r.status} {r.id}: {r.reason}" for r in self.results if r.status in ("updated", "failed")]
        return "\n".join(lines)


# --- converting -----------------------------------------------------------------------------------
def _to_markdown(fetched: Fetched, selector: str | None) -> str:
    raw = fetched.body
    if fetched.kind == "text" and raw.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")):
        fetched.kind = "html"
    if fetched.kind == "html":
        body = html_to_markdown(raw, fetched.url, selector, fetched.charset)
    else:
        try:
            text = raw.decode(fetched.charset or "utf-8").removeprefix("\ufeff")
        except (UnicodeDecodeError, LookupError):
            raise FetchError(f"text is not valid {fetched.charset or 'UTF-8'}") from None
        if "\x00" in text:
            raise FetchError("response looks binary (NUL bytes), not text")
        match = _FRONT_MATTER.match(text)
        body = tidy(text[match.end() :] if match else text)  # the manifest's front matter replaces upstream's
    if not body.strip():
        raise FetchError("no text left after conversion")
    return body


# --- writing --------------------------------------------------------------------------------------
def render(source: Source, body: str, retrieved: str, source_url: str | None = None) -> str:
    """The file as written: front matter from the manifest, then the body. JSON strings are valid YAML."""
    fields: dict[str, str] = {"id": source.id, "title": source.title, "url": source.url}
    if source_url and source_url != source.url:
        fields["source_url"] = source_url
    fields |= {
        "language": source.language,
        "license": source.license,
        "role": source.role,
        "retrieved": retrieved,
        "completeness": source.completeness,
    }
    head = "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fields.items() if v)
    return f"---\n{head}\n---\n\n{body}"


@dataclass
class Existing:
    text: str
    body: str
    retrieved: str | None
    source_url: str | None


def _read_existing(path: Path) -> Existing | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    match = _FRONT_MATTER.match(text)
    meta: Any = None
    if match:
        try:
            meta = yaml.safe_load(match.group(1))
        except yaml.YAMLError:
            meta = None
    meta = meta if isinstance(meta, dict) else {}
    body = text[match.end() :].lstrip("\n") if match else text
    retrieved, source_url = meta.get("retrieved"), meta.get("source_url")
    return Existing(text, body, str(retrieved) if retrieved else None, str(source_url) if source_url else None)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read_only_reason(corpus_dir: Path) -> str | None:
    """Why nothing may be written into corpus_dir, or None. Mode bits count even for root."""
    try:
        corpus_dir.mkdir(parents=True, exist_ok=True)
        real = corpus_dir.resolve()
        writable = os.access(real, os.W_OK) and bool(real.stat().st_mode & 0o222)
    except OSError as exc:
        return f"cannot use corpus folder {corpus_dir}: {exc.strerror or exc}"
    if writable:
        return None
    where = f"{corpus_dir} (a link to {real})" if corpus_dir.is_symlink() else str(corpus_dir)
    return (
        f"corpus folder {where} is read-only, so nothing was downloaded; its documents are used as they "
        "are. To sync, point at a writable folder: `ingest --sync --corpus DIR` or ADVISOR_CORPUS_DIR"
    )


# --- orchestration --------------------------------------------------------------------------------
def _sync_one(
    source: Source,
    client: httpx.Client,
    corpus_dir: Path,
    state: dict[str, Any],
    limits: SyncLimits,
    today: str,
    sleep: Callable[[float], None],
) -> SourceResult:
    url = source.download_url
    if not source.sync:
        return SourceResult(id=source.id, status="skipped", reason=source.sync_reason, url=url)
    target = corpus_dir / f"{source.id}.md"
    existing = _read_existing(target)
    previous = state.get(source.id) or {}
    headers = {"User-Agent": USER_AGENT, "Accept": "text/html, text/markdown;q=0.9, text/plain;q=0.8"}
    if existing is not None and previous.get("url") == url:  # validators only describe the file we have
        if previous.get("etag"):
            headers["If-None-Match"] = previous["etag"]
        if previous.get("last_modified"):
            headers["If-Modified-Since"] = previous["last_modified"]

    def result(status: Status, reason: str) -> SourceResult:
        return SourceResult(id=source.id, status=status, reason=reason, url=url)

    try:
        fetched = fetch(client, url, headers, limits, sleep)
        if fetched.status == 304 and existing is not None:
            body, retrieved, final_url = (
                existing.body,
                existing.retrieved or today,
                existing.source_url or url,
            )
            why_same, why_new = "not modified (HTTP 304)", "metadata changed in the manifest"
        else:
            body, retrieved, final_url = _to_markdown(fetched, source.selector), today, fetched.url
            if existing is not None and existing.retrieved:
                retrieved = existing.retrieved  # keep the date if nothing else differs
            why_same, why_new = "same content hash", "content changed" if existing else "new document"
        text = render(source, body, retrieved, final_url)
        if existing is not None and _digest(text) == _digest(existing.text):
            status: Status = "unchanged"
            reason = why_same
        else:
            text = render(source, body, today, final_url)
            parse_document(text.encode("utf-8"), target.name)  # never write what the ingest would reject
            write_atomic(target, text)
            status, reason = "updated", why_new
    except FetchError as exc:
        return result("failed", exc.reason + ("; previous file kept" if existing else ""))
    except ValueError as exc:
        return result("failed", f"converted document is invalid: {exc}")
    except OSError as exc:
        return result("failed", f"cannot write {target.name}: {exc.strerror or exc}")
    except Exception as exc:  # e.g. a parser bug on one odd page must not stop the other sources
        return result("failed", f"unexpected {type(exc).__name__}: {exc}")
    not_modified = fetched.status == 304  # a 304 may omit the validators it confirmed
    state[source.id] = {
        "url": url,
        "final_url": final_url,
        "etag": fetched.etag or (previous.get("etag") if not_modified else None),
        "last_modified": fetched.last_modified or (previous.get("last_modified") if not_modified else None),
        "sha256": _digest(body),
        "checked": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return result(status, reason)


def run_sync(
    settings: Settings,
    *,
    client: httpx.Client | None = None,
    sources: list[Source] | None = None,
    limits: SyncLimits | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> SyncReport:
    """Download every sync-enabled source into ``settings.index.corpus_dir``; never raises for one bad source."""
    started = time.perf_counter()
    report = SyncReport()
    try:
        sources = sources if sources is not None else load_manifest(settings.index.manifest_path)
    except ManifestError as exc:
        report.error = str(exc)
        return report
    corpus_dir = settings.index.corpus_dir
    report.error = _read_only_reason(corpus_dir)
    if report.error:
        return report
    state_path = corpus_dir / STATE_FILE
    try:
        loaded = json.loads(state_path.read_text(encoding="utf-8"))
        state: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError):
        state = {}  # lost state only costs unconditional downloads; the content hash still decides
    http = client or httpx.Client(headers={"User-Agent": USER_AGENT})
    today = datetime.now(UTC).date().isoformat()
    bounds = limits or SyncLimits()
    try:
        for source in sources:
            report.results.append(_sync_one(source, http, corpus_dir, state, bounds, today, sleep))
    finally:
        if client is None:
            http.close()
        with contextlib.suppress(OSError):  # losing it only costs the next run's conditional requests
            write_atomic(state_path, json.dumps(state, indent=1, sort_keys=True) + "\n")
    report.seconds = round(time.perf_counter() - started, 3)
    return report
