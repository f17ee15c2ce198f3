"""The app's HTTP server: one FastAPI app with the health probe and the feedback API, the Gradio UI mounted on it.

``create_server(settings)`` builds it — the users (``app.web.access``; none = no login), the login throttle
in front of Gradio's login form, the endpoints of ``app.web.http_api`` (feedback behind the same users),
and the page of ``app.web.ui`` at ``/`` with the same safe options as before (loopback, never shared, no
extra paths). ``serve`` runs it with uvicorn; ``running`` runs it in a thread (tests, benchmarks).

Deliberately left out: the page (``app.web.ui``), the handlers and the endpoints themselves.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import gradio as gr
import uvicorn
from fastapi import FastAPI

from app.pipeline import Advisor
from app.web.access import Throttle, load_users
from app.web.handlers import Runtime
from app.web.http_api import api_router
from app.web.login import LoginThrottle, basic_auth, verifier
from app.web.ui import build_app, launch_options
from core.settings import Settings

# Options of Blocks.launch that mount_gradio_app does not take (it never shares, and the server is ours).
_LAUNCH_ONLY = ("share", "server_name", "server_port", "auth")


def create_server(settings: Settings, advisor: Advisor | None = None, runtime: Runtime | None = None) -> FastAPI:
    """The whole app; raises ``AccessError`` for an unusable users file. ``app.state.runtime`` is its Runtime."""
    users = load_users(settings)
    if runtime is None:
        runtime = Runtime(settings, advisor or Advisor(settings), workers=0 if advisor is not None else None)
    demo = build_app(settings, runtime=runtime)
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    throttle = Throttle(settings.web.login_max_failures, settings.web.login_window_s)
    app.include_router(api_router(runtime, basic_auth(users, throttle) if users is not None else None))
    if users is not None:
        app.add_middleware(LoginThrottle, throttle=throttle)
    options = {k: v for k, v in launch_options(settings).items() if k not in _LAUNCH_ONLY}
    gr.mount_gradio_app(
        app,
        demo,
        path="/",
        server_name=settings.web.host,
        server_port=settings.web.port,
        auth=verifier(users) if users is not None else None,
        **options,
    )
    app.state.runtime = runtime
    return app


def _config(app: FastAPI, settings: Settings, port: int | None = None) -> uvicorn.Config:
    return uvicorn.Config(
        app, host=settings.web.host, port=port or settings.web.port, log_level="warning", access_log=False
    )


def serve(settings: Settings) -> None:
    """Run the app until interrupted (``app`` calls this)."""
    app = create_server(settings)
    try:
        uvicorn.Server(_config(app, settings)).run()
    finally:
        app.state.runtime.close()


@contextlib.contextmanager
def running(app: FastAPI, settings: Settings, port: int, **kw: Any) -> Iterator[str]:
    """Serve ``app`` on ``settings.web.host:port`` in a thread; yields its URL (ending in ``/``)."""
    server = uvicorn.Server(_config(app, settings, port))
    thread = threading.Thread(target=server.run, name="app-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the app server did not start")
        time.sleep(0.05)
    try:
        yield f"http://{settings.web.host}:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        app.state.runtime.close()
