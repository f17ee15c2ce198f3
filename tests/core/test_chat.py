"""core.chat: both chat clients come from init_chat_model with the settings' address and timeout; failures
from either SDK are sorted the same way. Builds models only (no request); tests/app/llm and tests/ingest
talk to the loopback fake server through them."""

from __future__ import annotations

import httpx
import ollama
import openai
import pytest
from langchain_ollama import ChatOllama
from langchain_openai import ChatOpenAI

from core.chat import chat_failure, chat_model, chat_url
from core.settings import Settings

SETTINGS = Settings().with_(
    openai_base_url="http://127.0.0.1:9/v1",
    openai_model="m-openai",
    openai_api_key="sk-test",
    ollama_base_url="http://127.0.0.1:9",
    ollama_model="llama3.1:8b",  # a colon in the name must not be read as "provider:model"
    llm_timeout_s=7.5,
)


def test_openai_compatible_model_from_settings() -> None:
    model = chat_model(SETTINGS, "openai", streaming=True, max_tokens=64)
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.openai_api_base, model.request_timeout) == (
        "m-openai",
        "http://127.0.0.1:9/v1",
        7.5,
    )
    assert model.openai_api_key is not None and model.openai_api_key.get_secret_value() == "sk-test"
    assert (model.max_retries, model.streaming, model.temperature, model.max_tokens) == (0, True, 0.0, 64)


def test_ollama_model_from_settings() -> None:
    model = chat_model(SETTINGS, "ollama")
    assert isinstance(model, ChatOllama)
    assert (model.model, model.base_url, model.temperature) == ("llama3.1:8b", "http://127.0.0.1:9", 0.0)
    assert model.client_kwargs == {"timeout": 7.5}


def test_unknown_provider_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="'extractive'"):
        chat_model(SETTINGS, "extractive")
    assert chat_url(SETTINGS, "openai") == "http://127.0.0.1:9/v1/chat/completions"
    assert chat_url(SETTINGS, "ollama") == "http://127.0.0.1:9/api/chat"


_REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def _connect_timeout() -> BaseException:
    try:
        raise openai.APITimeoutError(request=_REQUEST) from httpx.ConnectTimeout("connect", request=_REQUEST)
    except openai.APITimeoutError as exc:
        return exc


@pytest.mark.parametrize(
    ("exc", "kind", "status"),
    [
        (openai.APITimeoutError(request=_REQUEST), "timeout", 0),
        (httpx.ReadTimeout("read", request=_REQUEST), "timeout", 0),
        (_connect_timeout(), "unreachable", 0),
        (openai.APIConnectionError(request=_REQUEST), "unreachable", 0),
        (ConnectionError("refused"), "unreachable", 0),
        (httpx.RemoteProtocolError("peer closed", request=_REQUEST), "unreachable", 0),
        (
            openai.InternalServerError("boom", response=httpx.Response(500, request=_REQUEST), body=None),
            "http",
            500,
        ),
        (ollama.ResponseError("model not found", 404), "http", 404),
        (httpx.DecodingError("bad gzip", request=_REQUEST), "invalid", 0),
        (ValueError("not ours"), None, 0),
    ],
)
def test_chat_failure_sorts_both_sdks_errors(exc: BaseException, kind: str | None, status: int) -> None:
    failure = chat_failure(exc)
    assert (failure.kind if failure else None) == kind
    if failure is not None:
        assert failure.status == status
