"""A real PostgreSQL server for the tests, from Debian's packages (`apt-get install postgresql`).

``PostgresServer`` runs ``initdb`` and ``pg_ctl`` as the ``postgres`` user (never as root) in a fresh folder
under /tmp, listening on a free loopback port only (no Unix socket outside that folder), with password
(SCRAM) logins; ``url`` names a database created for the test. ``stop`` shuts it down and removes the folder.
``available()`` says whether the binaries are installed: the tests skip without them, except in CI
(``CI=true``), where a missing PostgreSQL is a failure.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

from ports import free_port

PG_ROOT = Path("/usr/lib/postgresql")


def bin_dir() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian keeps one per major version)."""
    versions = sorted((p for p in PG_ROOT.glob("*/bin") if (p / "initdb").exists()), key=lambda p: int(p.parent.name))
    return versions[-1] if versions else None


def available() -> bool:
    return bin_dir() is not None and shutil.which("runuser" if os.geteuid() == 0 else "sudo") is not None


def _as_postgres(*cmd: str) -> subprocess.CompletedProcess[str]:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else ["sudo", "-n", "-u", "postgres"]
    return subprocess.run([*prefix, *cmd], capture_output=True, text=True, timeout=120, check=True)


class PostgresServer:
    def __init__(self) -> None:
        found = bin_dir()
        assert found is not None, "PostgreSQL is not installed: apt-get install -y postgresql"
        self.bin = found
        self.port = free_port()
        self.password = secrets.token_hex(12)
        self.folder = Path(tempfile.mkdtemp(prefix="advisor-pg-"))
        self.data = self.folder / "data"
        self.folder.chmod(0o755)
        shutil.chown(self.folder, "postgres", "postgres")
        pwfile = self.folder / "pw"
        pwfile.write_text(self.password + "\n", encoding="utf-8")
        shutil.chown(pwfile, "postgres", "postgres")
        _as_postgres(str(self.bin / "initdb"), "-D", str(self.data), "-U", "advisor", "--auth=scram-sha-256",
                     f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C.UTF-8")  # fmt: skip
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        _as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
                     "-w", "-t", "60", "start")  # fmt: skip

    def create_database(self, name: str) -> str:
        """A new empty database; its URL (``postgresql://advisor:…@127.0.0.1:port/name``)."""
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def url(self, database: str) -> str:
        return f"postgresql://advisor:{self.password}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        try:
            _as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
