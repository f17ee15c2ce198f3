"""`ingest --sync` against a small HTTP server on 127.0.0.1 that serves pages written for these tests.

The server counts requests and remembers request headers, so tests can assert conditional requests,
the user agent and "no request at all". Every route misbehaves in one specific way (404, slow,
oversized, binary, redirect loop, ...). Nothing here reaches beyond loopback.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from fakes import FakeEmbeddings
from paths import fixture_settings

from core.settings import Settings
from ingest.documents import load_corpus, parse_document
from ingest.indexer import run_ingest
from ingest.store import Store
from ingest.sync.fetch import USER_AGENT, SyncLimits, content_kind
from ingest.sync.html_markdown import html_to_markdown
from ingest.sync.sources import STATE_FILE, ManifestError, Source, SyncReport, load_manifest, run_sync

GUIDE_HTML = """<!DOCTYPE html>
<html><head><title>Queue Guide</title><style>body { color: red }</style>
<script>console.log("tracking-snippet")</script></head>
<body>
<header class="site"><a href="/">SiteBrandName</a></header>
<nav><ul><li><a href="/a">NavLinkAlpha</a></li><li><a href="/b">NavLinkBeta</a></li></ul></nav>
<main>
<h1>Queue Guide</h1>
<p>Queues share <a href="/docs/quota">quota</a> between teams. See gres_flags for details.</p>
<h2>Limits</h2>
<script>inlineWidget("in-main-script")</script><style>.x { margin: 0 }</style>
<nav class="toc"><a href="#limits">TocLinkInMain</a></nav>
<ul><li>Burst jobs may borrow idle GPUs.</li><li>Reclaim happens within two minutes.</li></ul>
<table><tr><th>Queue</th><th>GPUs</th></tr><tr><td>research</td><td>64</td></tr></table>
<pre><code class="language-yaml">kind: Queue
quota: 64
</code></pre>
<img src="/diagram.png" alt="diagram">
</main>
<footer>FooterCopyrightLine</footer>
</body></html>
"""

NOTES_MD = """---
title: Upstream front matter that the manifest replaces
---

# Release Notes

Minor releases ship three times a year. Patch releases ship monthly.
"""

PLAIN_V1 = "Plain status page.\n\nThe cluster has 512 GPUs in four racks.\n"
PLAIN_V2 = "Plain status page.\n\nThe cluster has 768 GPUs in six racks after the upgrade.\n"
LAST_MODIFIED = formatdate(1_700_000_000, usegmt=True)


class Site:
    """Mutable state of the fixture server: page bodies, forced failures, request log."""

    def __init__(self) -> None:
        self.plain = PLAIN_V1
        self.broken: dict[str, str] = {}  # path -> "404" | "slow": make a good route fail later
        self.hits: Counter[str] = Counter()
        self.headers: list[dict[str, str]] = []
        self.flaky_failures = 1


class Handler(BaseHTTPRequestHandler):
    server: SiteServer

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, code: int, body: bytes = b"", ctype: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response(code)
        if code != 304:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_GET(self) -> None:
        site = self.server.site
        path = self.path
        site.hits[path] += 1
        site.headers.append({k.lower(): v for k, v in self.headers.items()})
        # The client hanging up (timeout, size limit) is expected in these tests.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._route(site, site.broken.get(path, path))

    def _route(self, site: Site, path: str) -> None:
        if path == "/guide.html":
            etag = '"guide-v1"'
            if self.headers.get("If-None-Match") == etag:
                self._send(304, ETag=etag)
            else:
                self._send(200, GUIDE_HTML.encode(), ETag=etag)
        elif path == "/notes.md":
            if self.headers.get("If-Modified-Since") == LAST_MODIFIED:
                self._send(304)
            else:
                self._send(200, NOTES_MD.encode(), "text/markdown; charset=utf-8", Last_Modified=LAST_MODIFIED)
        elif path == "/plain.txt":  # no validators: "unchanged" must come from the content hash
            self._send(200, site.plain.encode(), "text/plain; charset=utf-8")
        elif path == "/moved":
            self._send(301, Location="/guide.html")
        elif path in ("/loop-a", "/loop-b"):
            self._send(302, Location="/loop-b" if path == "/loop-a" else "/loop-a")
        elif path == "/to-file":
            self._send(302, Location="file:///etc/passwd")
        elif path == "/slow":
            time.sleep(1.5)
            self._send(200, b"<p>too late</p>")
        elif path == "/big":  # honest Content-Length: refused before the body is read
            self._send(200, b"<p>" + b"x" * 300_000 + b"</p>")
        elif path == "/big-stream":  # no Content-Length: refused while streaming
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b"y" * 10_000 + b"\n")
        elif path == "/image.png":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "image/png")
        elif path == "/blob":
            self._send(200, b"\x00\x01\x02" * 50, "application/octet-stream")
        elif path == "/nav-only.html":
            self._send(200, b"<html><body><nav><a href='/'>Home</a></nav><script>x()</script></body></html>")
        elif path == "/flaky":
            if site.flaky_failures > 0:
                site.flaky_failures -= 1
                self._send(503, b"busy")
            else:
                self._send(200, b"# Flaky\n\nWorks on the second try.\n", "text/markdown")
        else:
            self._send(404, b"not found")


class SiteServer(ThreadingHTTPServer):
    daemon_threads = True  # a handler still sleeping in /slow must not block shutdown

    def __init__(self, site: Site) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.site = site


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    state = Site()
    server = SiteServer(state)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False) as http:  # no proxy from the environment for loopback
        yield http


LIMITS = SyncLimits(timeout_s=0.5, deadline_s=5.0, max_bytes=200_000, retries=1, backoff_s=0.01, max_redirects=5)


def make_settings(tmp_path: Path) -> Settings:
    return fixture_settings(tmp_path, tmp_path / "docs", manifest_path=tmp_path / "sources.toml")


def src(doc_id: str, url: str, **extra: object) -> Source:
    return Source.model_validate(
        {"id": doc_id, "title": f"Title of {doc_id}", "url": url, "language": "en", "license": "CC0-1.0"} | extra
    )


def good_sources(base: str) -> list[Source]:
    return [
        src("guide", "https://docs.example.test/guide", fetch_url=f"{base}/guide.html", role="extra"),
        src("notes", f"{base}/notes.md", completeness="full"),
        src("plain", f"{base}/plain.txt"),
    ]


def sync(settings: Settings, client: httpx.Client, sources: list[Source]) -> SyncReport:
    return run_sync(settings, client=client, sources=sources, limits=LIMITS)


def statuses(report: SyncReport) -> dict[str, str]:
    return {r.id: r.status for r in report.results}


def reasons(report: SyncReport) -> dict[str, str]:
    return {r.id: r.reason for r in report.results}


def test_first_sync_writes_documents_the_loader_accepts(
    site: tuple[Site, str], client: httpx.Client, tmp_path: Path
) -> None:
    state, base = site
    settings = make_settings(tmp_path)
    report = sync(settings, client, good_sources(base))
    assert statuses(report) == {"guide": "updated", "notes": "updated", "plain": "updated"}
    assert all(r.reason == "new document" for r in report.results)

    guide = parse_document((settings.index.corpus_dir / "guide.md").read_bytes(), "guide.md")
    assert (guide.id, guide.title, guide.url) == ("guide", "Title of guide", "https://docs.example.test/guide")
    assert (guide.license, guide.role) == ("CC0-1.0", "extra")
    body = guide.body
    assert "# Queue Guide" in body and "## Limits" in body
    assert "- Burst jobs may borrow idle GPUs." in body
    assert "| Queue | GPUs |" in body and "| research | 64 |" in body
    assert "```yaml\nkind: Queue\nquota: 64\n```" in body
    assert f"[quota]({base}/docs/quota)" in body  # relative links made absolute against the page
    assert "gres_flags" in body  # underscores not escaped
    chrome_text = ("tracking-snippet", "in-main-script", "margin: 0", "TocLinkInMain", "NavLinkAlpha")
    for chrome in (*chrome_text, "SiteBrandName", "FooterCopyrightLine"):
        assert chrome not in body
    assert "diagram" not in body

    notes = parse_document((settings.index.corpus_dir / "notes.md").read_bytes(), "notes.md")
    assert notes.title == "Title of notes" and notes.completeness == "full"
    assert notes.body.lstrip().startswith("# Release Notes") and "Upstream front matter" not in notes.body

    docs, errors = load_corpus(settings.index.corpus_dir)
    assert errors == [] and sorted(d.id for d in docs) == ["guide", "notes", "plain"]  # state file ignored
    assert (settings.index.corpus_dir / STATE_FILE).is_file()
    assert {h.get("user-agent") for h in state.headers} == {USER_AGENT}


def test_second_sync_is_unchanged_and_nothing_is_reembedded(
    site: tuple[Site, str], client: httpx.Client, tmp_path: Path
) -> None:
    state, base = site
    settings = make_settings(tmp_path)
    sources = good_sources(base)
    assert sync(settings, client, sources).count("updated") == 3
    embeddings = FakeEmbeddings()
    first = run_ingest(settings, embeddings)
    assert first.docs_added == 3 and first.embedded > 0
    calls = embeddings.calls
    mtimes = {p.name: p.stat().st_mtime_ns for p in settings.index.corpus_dir.glob("*.md")}
    state.headers.clear()

    report = sync(settings, client, sources)
    assert statuses(report) == {"guide": "unchanged", "notes": "unchanged", "plain": "unchanged"}
    assert reasons(report)["guide"] == "not modified (HTTP 304)"  # ETag
    assert reasons(report)["notes"] == "not modified (HTTP 304)"  # Last-Modified
    assert reasons(report)["plain"] == "same content hash"  # no validators offered by the server
    sent = {h.get("if-none-match") for h in state.headers} | {h.get("if-modified-since") for h in state.headers}
    assert '"guide-v1"' in sent and LAST_MODIFIED in sent
    assert {p.name: p.stat().st_mtime_ns for p in settings.index.corpus_dir.glob("*.md")} == mtimes

    second = run_ingest(settings, embeddings)
    assert second.embedded == 0 and second.docs_unchanged == 3 and embeddings.calls == calls


def test_changed_page_is_the_only_one_reembedded(site: tuple[Site, str], client: httpx.Client, tmp_path: Path) -> None:
    state, base = site
    settings = make_settings(tmp_path)
    sources = good_sources(base)
    sync(settings, client, sources)
    embeddings = FakeEmbeddings()
    run_ingest(settings, embeddings)
    calls = embeddings.calls

    state.plain = PLAIN_V2
    report = sync(settings, client, sources)
    assert statuses(report) == {"guide": "unchanged", "notes": "unchanged", "plain": "updated"}
    assert reasons(report)["plain"] == "content changed"
    assert "768 GPUs" in (settings.index.corpus_dir / "plain.md").read_text(encoding="utf-8")

    after = run_ingest(settings, embeddings)
    assert (after.docs_updated, after.docs_unchanged) == (1, 2)
    generation = Store.open(settings).current()
    assert generation is not None
    plain_chunks = [c for c in generation.all_chunks()[0] if c.doc_id == "plain"]
    assert after.embedded == len(plain_chunks) == embeddings.calls - calls - after.units_embedded
    assert "768 GPUs" in " ".join(c.text for c in plain_chunks)


@pytest.mark.parametrize(("failure", "expected"), [("404", "HTTP 404"), ("slow", "timed out")])
def test_failed_source_keeps_previous_text_and_chunks(
    site: tuple[Site, str], client: httpx.Client, tmp_path: Path, failure: str, expected: str
) -> None:
    state, base = site
    settings = make_settings(tmp_path)
    sources = good_sources(base)
    sync(settings, client, sources)
    before = (settings.index.corpus_dir / "plain.md").read_bytes()
    embeddings = FakeEmbeddings()
    run_ingest(settings, embeddings)

    state.plain = PLAIN_V2  # would be an update, but the route now fails
    state.broken["/plain.txt"] = "/missing" if failure == "404" else "/slow"
    started = time.perf_counter()
    report = sync(settings, client, sources)
    result = {r.id: r for r in report.results}["plain"]
    assert result.status == "failed" and expected in result.reason and "previous file kept" in result.reason
    assert (settings.index.corpus_dir / "plain.md").read_bytes() == before
    if failure == "slow":
        assert state.hits["/plain.txt"] == 1 + 2  # first sync, then one try and one retry
        assert "after 2 attempts" in result.reason
        assert time.perf_counter() - started < 4
    assert f"failed plain: {result.reason}" in report.summary()

    after = run_ingest(settings, embeddings)
    assert after.embedded == 0 and after.docs_deleted == 0 and after.docs_unchanged == 3


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/big", "over the 200,000-byte limit"),
        ("/big-stream", "exceeds the 200,000-byte limit"),
        ("/image.png", "unsupported content type 'image/png'"),
        ("/blob", "unsupported content type 'application/octet-stream'"),
        ("/loop-a", "redirect loop"),
        ("/to-file", "refused non-http(s) URL file:///etc/passwd"),
        ("/nav-only.html", "no text left after conversion"),
        ("/missing", "HTTP 404"),
    ],
)
def test_bad_responses_are_refused_and_nothing_is_written(
    site: tuple[Site, str], client: httpx.Client, tmp_path: Path, path: str, expected: str
) -> None:
    _, base = site
    settings = make_settings(tmp_path)
    report = sync(settings, client, [src("bad", f"{base}{path}")])
    assert statuses(report) == {"bad": "failed"}
    assert expected in reasons(report)["bad"]
    assert not (settings.index.corpus_dir / "bad.md").exists()
    assert "1 failed" in report.summary()


def test_redirect_to_a_good_page_is_followed_and_recorded(
    site: tuple[Site, str], client: httpx.Client, tmp_path: Path
) -> None:
    _, base = site
    settings = make_settings(tmp_path)
    report = sync(settings, client, [src("moved", f"{base}/moved")])
    assert statuses(report) == {"moved": "updated"}
    doc = (settings.index.corpus_dir / "moved.md").read_text(encoding="utf-8")
    assert f'source_url: "{base}/guide.html"' in doc and "# Queue Guide" in doc


def test_too_many_redirects(site: tuple[Site, str], client: httpx.Client, tmp_path: Path) -> None:
    _, base = site
    limits = SyncLimits(timeout_s=0.5, max_redirects=0)
    report = run_sync(make_settings(tmp_path), client=client, sources=[src("m", f"{base}/moved")], limits=limits)
    assert "too many redirects" in reasons(report)["m"]


def test_transient_5xx_is_retried_with_backoff(site: tuple[Site, str], client: httpx.Client, tmp_path: Path) -> None:
    state, base = site
    waits: list[float] = []
    limits = SyncLimits(timeout_s=0.5, retries=2, backoff_s=0.25)
    report = run_sync(
        make_settings(tmp_path), client=client, sources=[src("f", f"{base}/flaky")], limits=limits, sleep=waits.append
    )
    assert statuses(report) == {"f": "updated"} and state.hits["/flaky"] == 2 and waits == [0.25]


def test_non_http_url_is_refused_without_any_request(tmp_path: Path) -> None:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, text="should never be asked")

    # The manifest model rejects such URLs; model_construct stands for a source built by other code.
    bad = [
        Source.model_construct(id="ftp-doc", title="FTP", url="ftp://files.example.test/doc.md"),
        Source.model_construct(id="file-doc", title="File", url="https://x.test/", fetch_url="file:///etc/hosts"),
    ]
    with httpx.Client(transport=httpx.MockTransport(handler)) as mock:
        report = run_sync(make_settings(tmp_path), client=mock, sources=bad, limits=LIMITS)
    assert statuses(report) == {"ftp-doc": "failed", "file-doc": "failed"}
    assert all("refused non-http(s) URL" in r.reason for r in report.results)
    assert requests == []


def test_disabled_source_is_skipped_and_its_file_untouched(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    settings.index.corpus_dir.mkdir()
    notes = settings.index.corpus_dir / "notes.md"
    notes.write_text("---\nid: notes\n---\n\n# Paraphrased notes\n", encoding="utf-8")
    source = src("notes", "https://blog.example.test/post", sync=False, sync_reason="paraphrased notes")
    with httpx.Client(transport=httpx.MockTransport(lambda r: pytest.fail(f"requested {r.url}"))) as mock:
        report = run_sync(settings, client=mock, sources=[source])
    assert report.results[0].model_dump(include={"status", "reason"}) == {
        "status": "skipped",
        "reason": "paraphrased notes",
    }
    assert notes.read_text(encoding="utf-8").endswith("# Paraphrased notes\n")


def test_read_only_corpus_link_is_reported_not_crashed(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "keep.md").write_text("# Keep\n\ntext\n", encoding="utf-8")
    shared.chmod(0o555)
    settings = make_settings(tmp_path)
    settings.index.corpus_dir.symlink_to(shared, target_is_directory=True)
    try:
        with httpx.Client(transport=httpx.MockTransport(lambda r: pytest.fail("no request expected"))) as mock:
            report = run_sync(settings, client=mock, sources=[src("a", "https://x.test/a")])
    finally:
        shared.chmod(0o755)
    assert report.error is not None and "read-only" in report.error and str(shared) in report.error
    assert report.results == [] and report.summary().startswith("sync: corpus folder")
    assert sorted(p.name for p in shared.iterdir()) == ["keep.md"]


def test_manifest_errors_are_reported(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    settings.index.manifest_path.write_text('[[source]]\nid = "a"\ntitle = "A"\nurl = "file:///etc/hosts"\n')
    with pytest.raises(ManifestError, match=r"source #1 \(a\), url: .*http\(s\)"):
        load_manifest(settings.index.manifest_path)
    report = run_sync(settings)  # the CLI path: an unusable manifest is a report, not a traceback
    assert report.error is not None and "http(s)" in report.error

    settings.index.manifest_path.write_text(
        '[[source]]\nid = "a"\ntitle = "A"\nurl = "https://x.test/"\nsync = false\n'
    )
    with pytest.raises(ManifestError, match="sync_reason"):
        load_manifest(settings.index.manifest_path)
    settings.index.manifest_path.write_text('[[source]]\nid = "a"\ntitle = "A"\nurl = "https://x.test/"\n' * 2)
    with pytest.raises(ManifestError, match="duplicate id 'a'"):
        load_manifest(settings.index.manifest_path)


def test_run_sync_reads_the_manifest_from_settings(
    site: tuple[Site, str], client: httpx.Client, tmp_path: Path
) -> None:
    _, base = site
    settings = make_settings(tmp_path)
    settings.index.manifest_path.write_text(
        f'[[source]]\nid = "notes"\ntitle = "Notes"\nurl = "{base}/notes.md"\nlanguage = "en"\n', encoding="utf-8"
    )
    report = run_sync(settings, client=client, limits=LIMITS)
    assert statuses(report) == {"notes": "updated"}


def test_metadata_change_rewrites_front_matter_even_on_304(
    site: tuple[Site, str], client: httpx.Client, tmp_path: Path
) -> None:
    _, base = site
    settings = make_settings(tmp_path)
    sync(settings, client, good_sources(base))
    renamed = [s.model_copy(update={"title": "Renamed guide"}) if s.id == "guide" else s for s in good_sources(base)]
    report = sync(settings, client, renamed)
    assert statuses(report)["guide"] == "updated"
    assert reasons(report)["guide"] == "metadata changed in the manifest"
    doc = parse_document((settings.index.corpus_dir / "guide.md").read_bytes(), "guide.md")
    assert doc.title == "Renamed guide" and "## Limits" in doc.body


def test_html_conversion_falls_back_when_selector_misses() -> None:
    page = "<html><body><nav>Menu</nav><article><h2>Kept</h2><p>Body text.</p></article></body></html>"
    assert html_to_markdown(page, "https://x.test/", selector="div.td-content") == "## Kept\n\nBody text.\n"
    page = "<body><div class='td-content'><h1>Inner</h1></div><div>Outside</div></body>"
    assert html_to_markdown(page, "https://x.test/", selector="div.td-content") == "# Inner\n"


@pytest.mark.parametrize(
    ("ctype", "url", "kind"),
    [
        ("text/html; charset=utf-8", "https://x.test/a", "html"),
        ("text/plain; charset=utf-8", "https://raw.example.test/o/r/HEAD/README.md", "markdown"),
        ("text/plain", "https://raw.example.test/o/r/HEAD/doc/page.shtml", "html"),
        ("text/markdown", "https://x.test/a", "markdown"),
        ("text/plain", "https://x.test/status", "text"),
        ("application/pdf", "https://x.test/a.pdf", None),
        ("image/svg+xml", "https://x.test/a.svg", None),
    ],
)
def test_content_kind(ctype: str, url: str, kind: str | None) -> None:
    assert content_kind(ctype, url) == kind
