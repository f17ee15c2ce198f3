"""Facts about the machine the process runs on (pure reads of the OS, no settings).

Deliberately left out: memory and GPU detection (nothing decides on them).
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1
