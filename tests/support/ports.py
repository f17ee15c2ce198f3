"""A free port on loopback, for the servers the tests start (the app, a Chroma server, fake LLM servers)."""

import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
