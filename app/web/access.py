"""Who may use the web UI and the feedback API: users with password hashes, and a throttle on failed logins.

Users come from ``ADVISOR_USERS_FILE`` (one ``user:hash`` a line, ``#`` comments) and/or ``ADVISOR_USERS``
(the same entries separated by newlines or spaces); a hash is argon2 (``$argon2id$…``, what ``app
--hash-user NAME`` prints) or bcrypt (``$2b$…``, e.g. from ``htpasswd -B``). No users: no login. A password
never appears on a command line.

``Throttle`` counts failed logins per user name and per client address: after ``max_failures`` within
``window_s`` seconds, that user (from anywhere) and that address (for any user) get 429 with a
``Retry-After`` until the oldest failure leaves the window. A successful login clears the user's count, not
the address's. Counts are per process: with several replicas behind a balancer, an attacker gets at most
``max_failures`` tries per replica per window.

Deliberately left out: sessions (Gradio's login cookie), user management beyond the file, and lockouts that
need an administrator to lift.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.settings import Settings

_ENTRY = re.compile(r"^([^:\s]+):(\$\S+)$")
_BCRYPT = ("$2a$", "$2b$", "$2y$")


class AccessError(ValueError):
    """A users file or entry that cannot be used (the message names the file and line, never a hash)."""


def hash_password(password: str) -> str:
    """An argon2id hash (argon2-cffi's defaults: 64 MiB, 3 passes) of ``password``."""
    from argon2 import PasswordHasher

    return PasswordHasher().hash(password)


def hash_entry(user: str, password: str) -> str:
    """``"alice"``, ``"pw"`` → ``"alice:$argon2id$v=19$…"``, a line for the users file."""
    if not user or ":" in user or any(c.isspace() for c in user):
        raise AccessError("a user name must be non-empty, without ':' or spaces")
    if not password:
        raise AccessError("the password must not be empty")
    return f"{user}:{hash_password(password)}"


def _verify(hashed: str, password: str) -> bool:
    if hashed.startswith(_BCRYPT):
        import bcrypt

        return bcrypt.checkpw(password.encode(), hashed.encode())
    from argon2 import PasswordHasher
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        return PasswordHasher().verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


def parse_entries(lines: Iterable[str], origin: str) -> dict[str, str]:
    """``user:hash`` lines (blank and ``#`` lines skipped) → {user: hash}; raises ``AccessError``."""
    users: dict[str, str] = {}
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _ENTRY.match(line)
        if match is None or not match.group(2).startswith(("$argon2", *_BCRYPT)):
            raise AccessError(f"{origin}, entry {n}: expected user:hash (argon2 or bcrypt; see `app --hash-user`)")
        users[match.group(1)] = match.group(2)
    return users


class Users:
    """The users allowed in, by name, with their password hashes."""

    def __init__(self, hashes: dict[str, str]) -> None:
        self._hashes = hashes
        # Unknown names are checked against a real hash too, so timing does not tell which names exist.
        self._dummy = hash_password("not a password of anyone")

    def __len__(self) -> int:
        return len(self._hashes)

    def verify(self, user: str, password: str) -> bool:
        hashed = self._hashes.get(user)
        ok = _verify(hashed or self._dummy, password)
        return ok and hashed is not None


def load_users(settings: Settings) -> Users | None:
    """The users of ``web.users_file`` and ``web.users`` (the variable wins for a name in both); None = open."""
    hashes: dict[str, str] = {}
    path = settings.web.users_file
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise AccessError(f"cannot read the users file {path}: {exc.strerror or exc}") from None
        hashes.update(parse_entries(text.splitlines(), f"users file {path}"))
    if settings.web.users is not None:
        hashes.update(parse_entries(settings.web.users.get_secret_value().split(), "ADVISOR_USERS"))
    if (path is not None or settings.web.users is not None) and not hashes:
        raise AccessError("no users: the users file and ADVISOR_USERS name none (logins would always fail)")
    return Users(hashes) if hashes else None


@dataclass
class Throttle:
    """Failed logins per key (``user:NAME``, ``addr:IP``) in a sliding window; see the module docstring."""

    max_failures: int = 5
    window_s: float = 300.0
    _failures: dict[str, deque[float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @staticmethod
    def keys(user: str, address: str) -> tuple[str, ...]:
        return (f"user:{user}", f"addr:{address}") if user else (f"addr:{address}",)

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._failures.get(key)
        if times is None:
            return deque()
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            del self._failures[key]
        return times

    def retry_after(self, keys: Iterable[str], now: float | None = None) -> int:
        """Seconds until one more try is allowed for every key (0 = now)."""
        now = time.monotonic() if now is None else now
        wait = 0.0
        with self._lock:
            for key in keys:
                times = self._recent(key, now)
                if len(times) >= self.max_failures:
                    wait = max(wait, times[-self.max_failures] + self.window_s - now)
        return math.ceil(wait)

    def failed(self, keys: Iterable[str], now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            for key in keys:
                self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, user: str) -> None:
        with self._lock:
            self._failures.pop(f"user:{user}", None)
