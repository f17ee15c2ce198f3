"""The `app` command as a child process on loopback, configured from a Settings object (replica tests).

``settings_env(settings)`` turns every setting into its ``ADVISOR_*`` variable, so the child builds the same
Settings; ``AppProcess`` starts `app`, waits for ``/healthz`` to say 200, and can be killed like a crashed
replica (SIGKILL) or stopped. The child runs in its own folder, so no developer ``.env`` is read.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from pydantic import SecretStr

from core.settings import Settings, setting_fields

APP = Path(sys.executable).parent / "app"


def settings_env(settings: Settings) -> dict[str, str]:
    """``ADVISOR_*`` variables for every set value of ``settings``."""
    env: dict[str, str] = {}
    for info in setting_fields():
        value = getattr(getattr(settings, info.section), info.field)
        if value is None:
            continue
        env[info.env] = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
    return env


class AppProcess:
    """One `app` replica on ``127.0.0.1:port``."""

    def __init__(self, settings: Settings, port: int, folder: Path) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/"
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / f"app-{port}.log"
        env = {**os.environ, **settings_env(settings.with_(port=port, host="127.0.0.1"))}
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen([str(APP)], cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)

    def wait_healthy(self, timeout: float = 240.0) -> dict[str, object]:
        """The body of the first 200 from /healthz; raises with the log's tail when it never comes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            with contextlib.suppress(httpx.HTTPError):
                resp = httpx.get(f"{self.url}healthz", timeout=5)
                if resp.status_code == 200:
                    return dict(resp.json())
            time.sleep(0.3)
        tail = self.log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise RuntimeError(f"app on port {self.port} never became healthy (exit {self.proc.poll()}):\n{tail}")

    def kill(self) -> None:
        """SIGKILL: no shutdown, like a crashed or OOM-killed replica."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
