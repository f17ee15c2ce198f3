"""corpus/sources.toml: parses into the Source model and agrees with the shared corpus documents.

The shared documents (../shared/corpus/docs) exist on the development machines and in CI; where they
do not, the cross-checks against them are reported as skipped (never passed without checking).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from paths import PROJECT_ROOT, SHARED_DOCS

from core.settings import Settings
from ingest.documents import parse_document
from ingest.sync.sources import Source, load_manifest

MANIFEST = PROJECT_ROOT / "corpus" / "sources.toml"
needs_shared = pytest.mark.skipif(not SHARED_DOCS.is_dir(), reason=f"{SHARED_DOCS} not on this machine")
PARAPHRASED = {
    "nebius-slurm-vs-k8s",
    "spectrocloud-demystifying-kubernetes",
    "mpi-operator-issue-503",
    "redhat-kubeflow-mpi-operator-openshift",
}
ROLE = re.compile(r"^(core document|cited source [1-7]|substitute for cited source 6|extra)$")


@pytest.fixture(scope="module")
def sources() -> list[Source]:
    return load_manifest(MANIFEST)


def test_settings_point_at_the_committed_manifest() -> None:
    assert Settings().index.manifest_path == MANIFEST


def test_manifest_parses_with_unique_ids_and_http_urls(sources: list[Source]) -> None:
    assert len(sources) >= 38
    ids = [s.id for s in sources]
    assert len(ids) == len(set(ids))
    for source in sources:
        for url in filter(None, (source.url, source.fetch_url)):
            parts = urlsplit(url)
            assert parts.scheme in ("http", "https") and parts.netloc, (source.id, url)
        assert ROLE.match(source.role), (source.id, source.role)
        assert source.language in ("en", "ja") and source.license and source.completeness, source.id


def test_manifest_holds_metadata_only() -> None:
    # Source forbids unknown keys, so a pasted `text`/`body` field would fail to load; long values
    # would mean document text smuggled into a known field.
    for line in MANIFEST.read_text(encoding="utf-8").splitlines():
        assert len(line) < 300, line[:80]


def test_paraphrased_notes_are_never_downloaded(sources: list[Source]) -> None:
    disabled = {s.id for s in sources if not s.sync}
    assert disabled == PARAPHRASED
    assert all("paraphrased" in s.sync_reason for s in sources if not s.sync)


def test_github_sources_fetch_the_raw_file_of_their_snapshot_path(sources: list[Source]) -> None:
    raw = [s for s in sources if s.fetch_url]
    assert len(raw) >= 10
    for source in raw:
        assert source.source_repo, source.id
        repo, path = source.source_repo.split(":", 1)
        assert source.fetch_url == f"https://raw.githubusercontent.com/{repo}/HEAD/{path}", source.id


def _front_matter(path: Path) -> dict[str, object]:
    match = re.match(r"\A---\n(.*?)\n---\n", path.read_text(encoding="utf-8"), re.DOTALL)
    assert match, path.name
    loaded = yaml.safe_load(match.group(1))
    assert isinstance(loaded, dict)
    return loaded


@needs_shared
def test_every_source_has_a_shared_document_and_back(sources: list[Source]) -> None:
    shared = {p.stem for p in SHARED_DOCS.glob("*.md") if p.name.upper() != "README.MD"}
    manifest = {s.id for s in sources}
    assert manifest - shared == set(), "manifest entries without a document"
    assert shared - manifest == set(), "documents without a manifest entry"


@needs_shared
def test_manifest_metadata_matches_the_documents_front_matter(sources: list[Source]) -> None:
    for source in sources:
        path = SHARED_DOCS / f"{source.id}.md"
        meta = _front_matter(path)
        for key in ("id", "title", "url", "language", "license", "completeness", "source_repo", "source_commit"):
            assert meta.get(key) == getattr(source, key), (source.id, key)
        doc = parse_document(path.read_bytes(), path.name)
        assert (doc.id, doc.title, doc.url) == (source.id, source.title, source.url)
