"""Bounded HTTP download of one document for ``ingest --sync``.

``fetch(client, url, headers, limits)`` makes one GET, with conditional-request headers when the
caller passes them. It follows redirects by hand, so the http(s)-only check and loop detection apply
on every hop. Each attempt is bounded by timeout, total deadline and size. Timeouts, network errors,
429 and 5xx are retried with exponential backoff. The result is a ``Fetched``: a 304, or a 200 body
with its content kind (HTML, Markdown or plain text, see ``content_kind``). Anything else raises a
``FetchError`` whose reason a person can act on.

Deliberately left out: turning the body into Markdown (``ingest.sync.html_markdown``), the manifest,
state and files (``ingest.sync.sources``), cookies and authentication, robots.txt, JavaScript, and
concurrent downloads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal
from urllib.parse import urljoin, urlsplit

import httpx

USER_AGENT = "slurm-k8s-advisor-sync/0.1"

Kind = Literal["html", "markdown", "text"]


@dataclass(frozen=True)
class SyncLimits:
    """Bounds of every download (tests pass small values)."""

    timeout_s: float = 20.0  # connect / read / write, each
    deadline_s: float = 120.0  # whole body of one attempt, against slow trickles
    max_bytes: int = 5_000_000
    retries: int = 2  # extra attempts after a timeout, network error, 429 or 5xx
    backoff_s: float = 1.0  # doubled after every retry
    max_redirects: int = 5


class FetchError(Exception):
    def __init__(self, reason: str, *, retryable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


@dataclass
class Fetched:
    status: int  # 200 (body read) or 304 (not modified)
    url: str  # after redirects
    kind: Kind | None = None
    charset: str | None = None
    body: bytes = b""
    etag: str | None = None
    last_modified: str | None = None


def _require_http(url: str) -> None:
    if urlsplit(url).scheme not in ("http", "https"):
        raise FetchError(f"refused non-http(s) URL {url}")


def content_kind(content_type: str, url: str) -> Kind | None:
    """What a response holds, from its type and, for raw-file servers' text/plain, the extension.

    >>> content_kind("text/plain; charset=utf-8", "https://h/x/README.md"), content_kind("image/png", "/a")
    ('markdown', None)
    """
    mime = content_type.split(";")[0].strip().lower()
    ext = PurePosixPath(urlsplit(url).path).suffix.lower()
    if mime in ("text/html", "application/xhtml+xml"):
        return "html"
    if mime in ("text/markdown", "text/x-markdown"):
        return "markdown"
    if mime in ("text/plain", ""):
        if ext in (".html", ".htm", ".shtml"):
            return "html"
        return "markdown" if ext in (".md", ".markdown") else "text"
    return None


def _download(client: httpx.Client, url: str, headers: dict[str, str], limits: SyncLimits) -> Fetched:
    """One attempt: follow redirects by hand (scheme check and loop detection on every hop)."""
    visited = [url]
    for _ in range(limits.max_redirects + 1):
        _require_http(url)
        request = client.build_request("GET", url, headers=headers, timeout=httpx.Timeout(limits.timeout_s))
        response = client.send(request, stream=True, follow_redirects=False)
        try:
            code = response.status_code
            if code in (301, 302, 303, 307, 308):  # not httpx's is_redirect: that includes 304
                location = response.headers.get("location")
                if not location:
                    raise FetchError(f"HTTP {code} redirect without a Location header")
                target = urljoin(url, location)
                if target in visited:
                    raise FetchError(f"redirect loop: {' -> '.join([*visited, target])}")
                visited.append(target)
                url = target
                continue
            validators = {
                "etag": response.headers.get("etag"),
                "last_modified": response.headers.get("last-modified"),
            }
            if code == 304:
                return Fetched(status=304, url=url, **validators)
            if code != 200:
                phrase = f"HTTP {code} {response.reason_phrase}".strip()
                raise FetchError(phrase, retryable=code == 429 or code >= 500)
            content_type = response.headers.get("content-type", "")
            kind = content_kind(content_type, url)
            if kind is None:
                raise FetchError(f"unsupported content type '{content_type}' (expected HTML, Markdown or text)")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limits.max_bytes:
                raise FetchError(f"response is {int(declared):,} bytes, over the {limits.max_bytes:,}-byte limit")
            return Fetched(200, url, kind, response.charset_encoding, _read_capped(response, limits), **validators)
        finally:
            response.close()
    raise FetchError(f"too many redirects (more than {limits.max_redirects}): {' -> '.join(visited)}")


def _read_capped(response: httpx.Response, limits: SyncLimits) -> bytes:
    parts: list[bytes] = []
    total = 0
    deadline = time.monotonic() + limits.deadline_s
    for chunk in response.iter_bytes():
        total += len(chunk)
        if total > limits.max_bytes:
            raise FetchError(f"response exceeds the {limits.max_bytes:,}-byte limit; download aborted")
        if time.monotonic() > deadline:
            raise FetchError(f"download took longer than {limits.deadline_s:g}s", retryable=True)
        parts.append(chunk)
    return b"".join(parts)


def fetch(
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    limits: SyncLimits,
    sleep: Callable[[float], None] = time.sleep,
) -> Fetched:
    """Download with retries and exponential backoff for transient failures only."""
    attempt = 0
    while True:
        try:
            return _download(client, url, headers, limits)
        except FetchError as exc:
            error = exc
        except httpx.TimeoutException as exc:
            error = FetchError(f"timed out after {limits.timeout_s:g}s ({type(exc).__name__})", retryable=True)
        except httpx.TransportError as exc:
            error = FetchError(f"network error: {exc or type(exc).__name__}", retryable=True)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            error = FetchError(f"request failed: {exc}")
        if not error.retryable or attempt >= limits.retries:
            if attempt:
                error.reason += f" (after {attempt + 1} attempts)"
            raise error
        sleep(limits.backoff_s * 2**attempt)
        attempt += 1
