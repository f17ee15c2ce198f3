"""Logins: users from a file or ADVISOR_USERS with argon2/bcrypt hashes, throttled failures, guarded feedback API.

The pure parts (entries, hashes, the throttle's window) are tested directly; the rest against the real server
(app.web.server) on a free loopback port: Gradio's login form, the API's Basic credentials, 429 + Retry-After.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import httpx
import pytest
from gradio_client import Client
from ports import free_port

from app.web import main as web
from app.web.access import AccessError, Throttle, Users, hash_entry, load_users, parse_entries
from app.web.server import create_server, running
from core.settings import Settings
from tests.app.web.test_http_api import RATING, wait_healthy

ALICE = hash_entry("alice", "s3cr:et ü")


def test_hash_entry_verifies_and_names_are_checked() -> None:
    users = Users(parse_entries([ALICE, "# a comment", ""], "test"))
    assert ALICE.startswith("alice:$argon2id$")
    assert users.verify("alice", "s3cr:et ü") and not users.verify("alice", "s3cr:et") and not users.verify("bob", "x")
    for bad in (("", "pw"), ("a:b", "pw"), ("a b", "pw"), ("bob", "")):
        with pytest.raises(AccessError):
            hash_entry(*bad)


def test_bcrypt_hashes_are_accepted() -> None:
    entry = "carol:" + bcrypt.hashpw(b"pw", bcrypt.gensalt(rounds=4)).decode()
    users = Users(parse_entries([entry], "test"))
    assert users.verify("carol", "pw") and not users.verify("carol", "wrong")


def test_a_bad_entry_names_its_origin_and_line_not_the_hash() -> None:
    with pytest.raises(AccessError, match="users file x, entry 2") as info:
        parse_entries([ALICE, "bob:plaintext-password"], "users file x")
    assert "plaintext" not in str(info.value)


def test_users_from_file_and_variable(settings: Settings, tmp_path: Path) -> None:
    assert load_users(settings) is None  # no users: no login
    path = tmp_path / "users"
    path.write_text(ALICE + "\n", encoding="utf-8")
    bob = hash_entry("bob", "pw")
    users = load_users(settings.with_(users_file=path, users=f"{bob}\n"))
    assert users is not None and len(users) == 2 and users.verify("bob", "pw")
    with pytest.raises(AccessError, match="cannot read"):
        load_users(settings.with_(users_file=tmp_path / "missing"))
    (tmp_path / "empty").write_text("# nobody yet\n", encoding="utf-8")
    with pytest.raises(AccessError, match="no users"):
        load_users(settings.with_(users_file=tmp_path / "empty"))


def test_throttle_window_per_user_and_address() -> None:
    throttle = Throttle(max_failures=3, window_s=60)
    keys = throttle.keys("alice", "10.0.0.1")
    for t in (0.0, 1.0):
        throttle.failed(keys, now=t)
    assert throttle.retry_after(keys, now=2.0) == 0
    throttle.failed(keys, now=2.0)
    assert throttle.retry_after(keys, now=2.0) == 58  # until the first failure leaves the window
    assert throttle.retry_after(throttle.keys("alice", "10.0.0.9"), now=3.0) > 0  # the user, from anywhere
    assert throttle.retry_after(throttle.keys("bob", "10.0.0.1"), now=3.0) > 0  # the address, for anyone
    assert throttle.retry_after(throttle.keys("bob", "10.0.0.2"), now=3.0) == 0
    assert throttle.retry_after(keys, now=60.5) == 0  # the window moved on
    throttle.succeeded("alice")
    assert throttle.retry_after(throttle.keys("alice", "10.0.0.9"), now=3.0) == 0


def test_hash_user_command_reads_the_password_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("pa ss\n"))
    assert web.main(["--hash-user", "dave"]) == 0
    line = capsys.readouterr().out.strip()
    assert Users(parse_entries([line], "out")).verify("dave", "pa ss") and "pa ss" not in line


@pytest.fixture
def guarded(indexed: Settings, tmp_path: Path) -> Iterator[tuple[str, Settings]]:
    users = tmp_path / "users"
    users.write_text(f"{ALICE}\n{hash_entry('bob', 'pw')}\n", encoding="utf-8")
    settings = indexed.with_(users_file=users, login_max_failures=3)
    with running(create_server(settings), settings, free_port()) as url:
        yield url, settings


def test_the_ui_and_the_feedback_api_need_a_login_health_does_not(guarded: tuple[str, Settings]) -> None:
    url, _ = guarded
    assert wait_healthy(url).status_code == 200  # open: a load balancer probes it without a login
    with httpx.Client() as http:
        assert http.get(f"{url}config").status_code in (401, 403)
        assert http.post(
            f"{url}gradio_api/queue/join", json={"data": [], "fn_index": 0, "session_hash": "x"}
        ).status_code in (401, 403)
        resp = http.post(f"{url}api/feedback", json=RATING)
        assert resp.status_code == 401 and resp.headers["www-authenticate"].startswith("Basic")
        assert http.get(f"{url}api/feedback").status_code == 401
        assert http.post(f"{url}api/feedback", json=RATING, auth=("alice", "s3cr:et ü")).status_code == 201
        assert http.get(f"{url}api/feedback", auth=("bob", "pw")).text.count("\n") == 1
    with pytest.raises(Exception):  # noqa: B017 - gradio_client raises a plain ValueError/HTTP error
        Client(url, verbose=False)
    client = Client(url, verbose=False, auth=("alice", "s3cr:et ü"))
    assert "**2** documents" in client.predict(api_name="/status")


def test_failed_logins_are_throttled_per_user_and_address(guarded: tuple[str, Settings]) -> None:
    url, _ = guarded
    with httpx.Client() as http:
        for _ in range(3):
            assert http.post(f"{url}login", data={"username": "alice", "password": "wrong"}).status_code == 400
        resp = http.post(f"{url}login", data={"username": "alice", "password": "s3cr:et ü"})
        assert resp.status_code == 429 and 0 < int(resp.headers["retry-after"]) <= 300
        assert "too many failed logins" in resp.json()["detail"]
        # The address is throttled too: another user from it waits as well, on the API as on the form.
        assert http.post(f"{url}login", data={"username": "bob", "password": "pw"}).status_code == 429
        assert http.get(f"{url}api/feedback", auth=("bob", "pw")).status_code == 429


def test_failed_api_credentials_are_throttled(guarded: tuple[str, Settings]) -> None:
    url, _ = guarded
    with httpx.Client() as http:
        for _ in range(3):
            assert http.get(f"{url}api/feedback", auth=("bob", "nope")).status_code == 401
        resp = http.post(f"{url}api/feedback", json=RATING, auth=("bob", "pw"))
        assert resp.status_code == 429 and int(resp.headers["retry-after"]) > 0
        assert wait_healthy(url).status_code == 200  # health stays open


def test_an_unusable_users_file_stops_the_app_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "users"
    bad.write_text("alice:plaintext\n", encoding="utf-8")
    monkeypatch.delenv("ADVISOR_USERS", raising=False)
    assert web.main(["--users", str(bad), "--port", str(free_port())]) == 2  # before any model loads
    err = capsys.readouterr().err
    assert err.startswith("app: users file") and err.strip().endswith("(argon2 or bcrypt; see `app --hash-user`)")
    assert "plaintext" not in err and err.count("\n") == 1
