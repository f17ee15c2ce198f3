"""core.files.write_atomic: whole files or the old one, no temporary files left, ordinary permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from core.files import write_atomic


def test_writes_creating_the_folder_with_unix_line_ends(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "doc.md"
    write_atomic(target, "# 見出し\r\nline\n")
    assert target.read_bytes() == "# 見出し\r\nline\n".encode()  # written as given, not translated
    write_atomic(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert [p.name for p in target.parent.iterdir()] == ["doc.md"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "doc.md"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "half \ud800 a lone surrogate cannot be encoded")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["doc.md"]


def test_permissions_follow_the_umask_like_any_new_file(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "doc.md", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "doc.md").stat().st_mode) == 0o644
