"""The one chat-model client: an OpenAI-compatible server or Ollama, built by LangChain's ``init_chat_model``.

Answering (``app.llm.backends``, streamed) and ``ingest --translate`` (one reply per request) both get their
model here, configured from ``Settings.llm``: base URL, model name, API key and the request timeout.
Replies are deterministic (temperature 0) and never retried: a person is waiting, or the caller retries
with the problem named. ``init_chat_model`` loads the provider's integration by name — ``langchain-openai``
for "openai", ``langchain-ollama`` for "ollama" — so neither is imported here.

``chat_failure`` sorts an exception from either client into what went wrong (unreachable, timed out, an HTTP
error, an invalid reply) so each caller words its own message without knowing the SDKs' exception types.

    >>> chat_failure(ConnectionError("refused")).kind
    'unreachable'

Deliberately left out: the prompts (each caller owns its own), health checks (``app.llm.backends``),
providers other than these two, tool calling and structured output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx
import ollama
import openai
from langchain.chat_models import init_chat_model
from langchain_core.language_models.chat_models import BaseChatModel

from core.settings import Settings

__all__ = ["PROVIDERS", "ChatFailure", "base_url", "chat_failure", "chat_model", "chat_url"]

Provider = Literal["openai", "ollama"]
PROVIDERS: tuple[Provider, ...] = ("openai", "ollama")


def base_url(settings: Settings, provider: str) -> str:
    """The configured server address for ``provider`` (for OpenAI-compatible servers it ends in /v1)."""
    if provider == "openai":
        return settings.llm.openai_base_url
    if provider == "ollama":
        return settings.llm.ollama_base_url
    raise ValueError(f"unknown chat provider {provider!r}: expected 'openai' or 'ollama'")


def chat_url(settings: Settings, provider: str) -> str:
    """The chat endpoint the client posts to, for messages that name it."""
    route = "/chat/completions" if provider == "openai" else "/api/chat"
    return base_url(settings, provider).rstrip("/") + route


def chat_model(
    settings: Settings, provider: str, *, streaming: bool = False, max_tokens: int | None = None
) -> BaseChatModel:
    """A LangChain chat model for ``provider`` ("openai" or "ollama"); makes no request.

    ``streaming`` makes the OpenAI-compatible client ask for Server-Sent Events even from ``invoke`` (Ollama
    always streams its NDJSON); ``max_tokens`` caps the reply (None: the server's default).
    """
    llm = settings.llm
    if provider == "openai":
        return init_chat_model(
            llm.openai_model,
            model_provider="openai",
            base_url=llm.openai_base_url,
            api_key=llm.openai_api_key,
            timeout=llm.timeout_s,
            max_retries=0,
            streaming=streaming,
            temperature=0.0,
            max_tokens=max_tokens,
        )
    if provider == "ollama":
        return init_chat_model(
            llm.ollama_model,
            model_provider="ollama",
            base_url=llm.ollama_base_url,
            temperature=0.0,
            num_predict=max_tokens,
            client_kwargs={"timeout": llm.timeout_s},  # handed to the ollama SDK's httpx client
        )
    raise ValueError(f"unknown chat provider {provider!r}: expected 'openai' or 'ollama'")


@dataclass(frozen=True)
class ChatFailure:
    """What went wrong talking to a chat server; ``detail`` is the server's own words, when it sent any."""

    kind: Literal["unreachable", "timeout", "http", "invalid"]
    status: int = 0
    detail: str = ""


def chat_failure(exc: BaseException) -> ChatFailure | None:
    """Sort an exception raised by either client; None when it is not a transport or server failure."""
    # A connection that could not even be opened in time is a server that is not there, not a slow one.
    if _caused_by(exc, httpx.ConnectTimeout):
        return ChatFailure("unreachable", detail=str(exc))
    # Timeouts before connection errors: the OpenAI SDK's timeout is a kind of connection error.
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException):
        return ChatFailure("timeout", detail=str(exc))
    # The ollama SDK turns a refused connection into the builtin ConnectionError.
    if isinstance(exc, openai.APIConnectionError | ConnectionError | httpx.TransportError):
        return ChatFailure("unreachable", detail=str(exc))
    if isinstance(exc, openai.APIStatusError):
        return ChatFailure("http", exc.status_code, exc.message)
    if isinstance(exc, ollama.ResponseError):
        return ChatFailure("http", exc.status_code, exc.error)
    if isinstance(exc, openai.APIError | httpx.HTTPError):
        return ChatFailure("invalid", detail=str(exc))
    return None


def _caused_by(exc: BaseException, kind: type[BaseException], depth: int = 8) -> bool:
    """Whether ``exc`` or an exception it was raised from (the SDKs wrap httpx's) is a ``kind``."""
    seen: BaseException | None = exc
    for _ in range(depth):
        if seen is None:
            return False
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
