"""Logins over HTTP: the UI's login form, throttled, and HTTP Basic credentials for the feedback API.

``LoginThrottle`` is ASGI middleware in front of Gradio's ``POST /login``: a user name or client address
with too many recent failures gets 429 and ``Retry-After`` before its password is even checked; otherwise
the form goes on to Gradio, which checks it with ``verifier(users)`` (argon2 in a thread, off the event
loop), and the outcome is counted. ``basic_auth`` is the same rule as a FastAPI dependency for the API:
401 with ``WWW-Authenticate: Basic`` for missing or wrong credentials, 429 when throttled.

Deliberately left out: the users and the throttle themselves (``app.web.access``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.access import Throttle, Users

LOGIN_PATHS = ("/login", "/login/")


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def too_many(wait: int) -> dict[str, Any]:
    return {
        "status_code": 429,
        "detail": f"too many failed logins; try again in {wait} s",
        "headers": {"Retry-After": str(wait)},
    }


def verifier(users: Users) -> Callable[[str, str], Awaitable[bool]]:
    """Gradio's ``auth`` callable: the password hash is checked in a thread (argon2 takes tens of ms)."""

    async def verify(user: str, password: str) -> bool:
        return await run_in_threadpool(users.verify, user, password)

    return verify


class LoginThrottle:
    """ASGI middleware: throttles ``POST /login`` per user name and per client address."""

    def __init__(self, app: ASGIApp, throttle: Throttle) -> None:
        self.app = app
        self.throttle = throttle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in LOGIN_PATHS:
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break

        async def replay() -> Message:
            return {"type": "http.request", "body": body, "more_body": False}

        form = await Request(scope, replay).form()
        user = str(form.get("username") or "").strip()
        keys = self.throttle.keys(user, client_address(scope))
        wait = self.throttle.retry_after(keys)
        if wait:
            refused = too_many(wait)
            response = JSONResponse({"detail": refused["detail"]}, status_code=429, headers=refused["headers"])
            await response(scope, replay, send)
            return
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        await self.app(scope, replay, watch)
        if status and status[0] == 200:
            self.throttle.succeeded(user)
        elif status and 400 <= status[0] < 500:
            self.throttle.failed(keys)


def _credentials(header: str) -> tuple[str, str] | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep and user else None


def basic_auth(users: Users, throttle: Throttle) -> Callable[[Request], Awaitable[str]]:
    """A FastAPI dependency: the user name of valid Basic credentials; else 401 (or 429 when throttled)."""

    async def require_user(request: Request) -> str:
        given = _credentials(request.headers.get("authorization", ""))
        user = given[0] if given else ""
        keys = throttle.keys(user, client_address(request.scope))
        wait = throttle.retry_after(keys)
        if wait:
            raise HTTPException(**too_many(wait))
        if given is None or not await run_in_threadpool(users.verify, *given):
            if given is not None:
                throttle.failed(keys)
            raise HTTPException(
                status_code=401,
                detail="log in with HTTP Basic credentials of a user in the users file",
                headers={"WWW-Authenticate": 'Basic realm="advisor"'},
            )
        throttle.succeeded(user)
        return user

    return require_user
