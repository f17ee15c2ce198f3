"""The ``app`` command: parse the flags, then serve the web UI (``app.web.server``) or print a users-file line.

``app`` serves the page of ``app.web.ui`` with the health probe and the feedback API, behind a login when there
are users (``app.web.access``); ``app --hash-user NAME`` prints a users-file line. Flags override ``ADVISOR_*``
variables and ``.env`` and are validated like any other setting, before any model loads.

Deliberately left out: the page (``app.web.ui``) and the server (``app.web.server``).
"""

from __future__ import annotations

import argparse
import getpass
import logging
import sys

from app.web import server
from app.web.access import AccessError, hash_entry
from core.settings import settings_or_exit


def _hash_user(name: str) -> int:
    """Print a users-file line for ``name``; the password is read from the terminal (or one line of stdin)."""
    if sys.stdin.isatty():
        password = getpass.getpass(f"password for {name}: ")
        if getpass.getpass("again: ") != password:
            print("app: the passwords differ", file=sys.stderr)
            return 2
    else:
        password = sys.stdin.readline().rstrip("\n")
    try:
        print(hash_entry(name, password))
    except AccessError as exc:
        print(f"app: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="app", description="Run the Slurm×K8s Advisor web UI.")
    parser.add_argument("--host", help="address to bind (default: ADVISOR_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default: ADVISOR_PORT or 7860)")
    parser.add_argument(
        "--users", dest="users_file", metavar="FILE",
        help="require a login: users file of user:hash lines (default: ADVISOR_USERS_FILE)",
    )  # fmt: skip
    parser.add_argument(
        "--hash-user", metavar="NAME",
        help="print a users-file line for NAME (password read from the terminal or stdin) and exit",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.hash_user:
        return _hash_user(args.hash_user)
    # Flags override ADVISOR_* variables and .env and are validated like any other value.
    flags = {name: value for name, value in vars(args).items() if value is not None and name != "hash_user"}
    settings = settings_or_exit("app", flags)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        server.serve(settings)
    except AccessError as exc:
        print(f"app: {exc}", file=sys.stderr)
        return 2
    return 0
