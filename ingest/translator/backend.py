"""The chat backend ``ingest --translate`` talks to: one request at a time, over plain httpx.

An OpenAI-compatible server (vLLM, llama.cpp server) or Ollama, as configured for answering. Ingest must not
import the app (data flows one way), so this is a small client of its own rather than ``app.llm.backends``.

Deliberately left out: streaming and retries (a failed section is retried by the caller, with the problem named).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import httpx

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
    url: str
    model: str
    api_key: str
    timeout_s: float

    @property
    def translator(self) -> str:
        return f"{MACHINE} ({self.name} {self.model})"

    def chat(self, client: httpx.Client, messages: list[dict[str, str]]) -> str:
        """The model's reply to ``messages``; BackendUnreachable when nothing answers, TranslationFailed on an error."""
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "stream": False}
        headers = {}
        if self.name == "openai":
            payload["temperature"] = 0
            headers["Authorization"] = f"Bearer {self.api_key}"
        else:
            payload["options"] = {"temperature": 0}
        try:
            response = client.post(self.url, json=payload, headers=headers, timeout=self.timeout_s)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise BackendUnreachable(f"cannot reach the {self.name} server at {self.url} ({exc})") from None
        except httpx.HTTPError as exc:
            raise TranslationFailed(f"the {self.name} server at {self.url} did not answer: {exc!r}") from None
        if response.status_code != 200:
            raise TranslationFailed(
                f"the {self.name} server at {self.url} answered HTTP {response.status_code}: {response.text[:200]}"
            )
        try:
            data = response.json()
            content = data["choices"][0]["message"]["content"] if self.name == "openai" else data["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise TranslationFailed(f"the {self.name} server at {self.url} sent an unexpected reply") from None
        return str(content or "")


def resolve_backend(settings: Settings, flag: str | None = None) -> Backend:
    """The ``--backend`` flag, else the configured answer backend when it is generative."""
    name = flag or settings.answer.backend
    llm = settings.llm
    if name == "openai":
        url = llm.openai_base_url.rstrip("/") + "/chat/completions"
        return Backend("openai", url, llm.openai_model, llm.openai_api_key.get_secret_value(), llm.timeout_s)
    if name == "ollama":
        return Backend("ollama", llm.ollama_base_url.rstrip("/") + "/api/chat", llm.ollama_model, "", llm.timeout_s)
    raise TranslateUsageError(
        f"no translation backend: the answer backend is '{name}'; set ADVISOR_ANSWER_BACKEND=openai with "
        "ADVISOR_OPENAI_BASE_URL (and ADVISOR_OPENAI_MODEL), or ADVISOR_ANSWER_BACKEND=ollama "
        "(ADVISOR_OLLAMA_BASE_URL, ADVISOR_OLLAMA_MODEL), or pass --backend openai|ollama"
    )
