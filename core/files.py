"""Atomic file writes: a reader sees the old file or the new one, never half of one.

``write_atomic`` writes to a hidden temporary file in the target's folder, then renames it over the target
(``os.replace`` is atomic within one file system). An interrupted write leaves the old file and no
temporary file. Used for corpus documents, translation companions, sync state and the feedback log.

Deliberately left out: ``fsync`` (a power cut may lose the newest write, never corrupt the old file),
locking between processes (callers that need it serialise themselves), and binary content.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path``, creating its folder; atomic for readers."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    # os.open with 0o666 lets the umask decide the permissions, as for any new file (mkstemp would make it 0600)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
