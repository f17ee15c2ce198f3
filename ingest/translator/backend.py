"""The chat backend ``ingest --translate`` talks to: one reply per request, through ``core.chat``'s client.

An OpenAI-compatible server (vLLM, llama.cpp server) or Ollama, as configured for answering, built by the same
``core.chat.chat_model`` the answer step uses. What can go wrong is sorted into this command's own errors:
nothing answers (``BackendUnreachable``, which stops the run) or one request failed (``TranslationFailed``,
which fails only the document it was for); both name the endpoint.

Deliberately left out: streaming to the terminal and retries (a failed section is retried by the caller,
with the problem named).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel

from core.chat import chat_failure, chat_model, chat_url
from core.settings import Settings

MACHINE = "machine translation"


class TranslateUsageError(ValueError):
    """The request cannot be carried out as asked (no backend, unknown id, ...); nothing was sent or written."""


class BackendUnreachable(RuntimeError):
    """The translation server did not answer at all; the message names its URL."""


class TranslationFailed(RuntimeError):
    """One document could not be translated; nothing was written for it."""


@dataclass(frozen=True)
class Backend:
    name: Literal["openai", "ollama"]
    url: str  # the chat endpoint, named in every error
    model: str
    timeout_s: float
    client: BaseChatModel = field(repr=False, compare=False)

    @property
    def translator(self) -> str:
        return f"{MACHINE} ({self.name} {self.model})"

    def chat(self, messages: list[dict[str, str]]) -> str:
        """The model's reply to ``messages``; BackendUnreachable when nothing answers, TranslationFailed on an error."""
        where = f"the {self.name} server at {self.url}"
        try:
            reply = self.client.invoke(messages)
        except Exception as exc:
            failure = chat_failure(exc)
            if failure is None:
                raise
            if failure.kind == "unreachable":
                raise BackendUnreachable(f"cannot reach {where} ({failure.detail})") from None
            if failure.kind == "timeout":
                raise TranslationFailed(f"{where} did not answer within {self.timeout_s:g} s") from None
            if failure.kind == "http":
                raise TranslationFailed(f"{where} answered HTTP {failure.status}: {failure.detail[:200]}") from None
            raise TranslationFailed(f"{where} sent an unexpected reply ({failure.detail[:200]})") from None
        return reply.text


def resolve_backend(settings: Settings, flag: str | None = None) -> Backend:
    """The ``--backend`` flag, else the configured answer backend when it is generative. Sends nothing."""
    name = flag or settings.answer.backend
    llm = settings.llm
    if name == "openai":
        return Backend("openai", chat_url(settings, name), llm.openai_model, llm.timeout_s, chat_model(settings, name))
    if name == "ollama":
        return Backend("ollama", chat_url(settings, name), llm.ollama_model, llm.timeout_s, chat_model(settings, name))
    raise TranslateUsageError(
        f"no translation backend: the answer backend is '{name}'; set ADVISOR_ANSWER_BACKEND=openai with "
        "ADVISOR_OPENAI_BASE_URL (and ADVISOR_OPENAI_MODEL), or ADVISOR_ANSWER_BACKEND=ollama "
        "(ADVISOR_OLLAMA_BASE_URL, ADVISOR_OLLAMA_MODEL), or pass --backend openai|ollama"
    )
