"""core.machine: the cores this process may use."""

from __future__ import annotations

import os

import pytest

from core.machine import usable_cores


def test_usable_cores_follow_the_affinity_and_fall_back_to_the_cpu_count(monkeypatch: pytest.MonkeyPatch) -> None:
    assert 1 <= usable_cores() <= (os.cpu_count() or 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert usable_cores() == 3
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert usable_cores() == 1
