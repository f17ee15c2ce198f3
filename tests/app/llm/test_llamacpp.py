"""The `openai` backend against a real llama.cpp runtime: xllamacpp serving SmolLM2-135M-Instruct (tests/support).

Behaviour, not quality: the answer streams in pieces; every sentence left in the final answer carries a
marker for a passage the model was given (uncited sentences are dropped) — or, when the model cited none, the
extractive answer comes with the plain ``llm_unsupported`` notice; a timeout and a dead server each give the
extractive answer with a plain notice and no internals (no stack trace, exception name, URL or setting).
The Advisor answers in this process over the fixture corpus's index; the server is a child process on loopback.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import pytest
from fakes import FakeEmbeddings
from llama_server import LlamaServer
from ports import free_port

from app.llm.backends import check_backend
from app.llm.citations import split_sentences
from app.models import MARKER, Answer
from app.pipeline import Advisor
from app.web.answer_view import answer_markdown
from core.settings import Settings
from ingest.indexer import run_ingest

QUESTION = "How often do minor releases ship?"
INTERNALS = re.compile(r"Traceback|Error\b|Exception|LLMUnavailable|ADVISOR_|http://|/v1|\.py\b")


@pytest.fixture
def indexed(settings: Settings) -> Settings:
    run_ingest(settings, FakeEmbeddings())
    return settings


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    server = LlamaServer(free_port())
    try:
        yield server
    finally:
        server.kill()


def _advisor(indexed: Settings, url: str, timeout: float = 120.0) -> Advisor:
    # 64 tokens: enough for a sentence or two with markers; a 2-core CPU writes ~10 tokens/s under load.
    return Advisor(indexed.with_(openai_base_url=url, openai_model="smollm2", llm_timeout_s=timeout, llm_max_tokens=64))


def _shown(answer: Answer) -> str:
    return answer_markdown(answer, key="t")


def test_health_check_sees_the_real_server(llama: LlamaServer, indexed: Settings) -> None:
    assert check_backend(indexed.with_(openai_base_url=llama.base_url), "openai").ok


def test_answer_streams_and_keeps_only_cited_sentences(llama: LlamaServer, indexed: Settings) -> None:
    answers = list(_advisor(indexed, llama.base_url).stream(QUESTION, backend="openai", k=3))
    partials, final = answers[:-1], answers[-1]
    texts = [a.answer for a in partials]
    assert len(texts) >= 3 and texts[-1], "the model's text arrives in pieces"
    assert all(b.startswith(a) for a, b in itertools.pairwise(texts)), "each piece extends the last"
    given = {p.chunk_id for p in final.passages}
    if final.notice is None:
        assert final.backend == "openai" and final.citations
        assert {c.chunk_id for c in final.citations} <= given  # every marker points at a passage it was given
        for sentence in split_sentences(final.answer):
            numbers = [int(n) for n in MARKER.findall(sentence)] if re.search(r"\w", sentence) else [1]
            assert numbers and all(1 <= n <= len(final.citations) for n in numbers), sentence
        for dropped in final.flagged:
            assert dropped not in final.answer
    else:  # SmolLM2-135M often cites nothing: then the documents answer, and the user is told so
        assert final.notice == "llm_unsupported" and final.backend == "extractive"
        assert "three times a year" in final.answer and final.citations
        assert "cited none of the passages" in _shown(final)


def test_a_timeout_gives_the_extractive_answer_with_a_plain_notice(llama: LlamaServer, indexed: Settings) -> None:
    final = list(_advisor(indexed, llama.base_url, timeout=0.005).stream(QUESTION, backend="openai", k=3))[-1]
    assert final.notice == "llm_timeout" and final.backend == "extractive"
    shown = _shown(final)
    assert "did not answer in time" in shown and "three times a year" in shown
    assert not INTERNALS.search(re.sub(r"https://example\.test\S*", "", shown)), shown


def test_a_dead_server_gives_the_extractive_answer_with_a_plain_notice(indexed: Settings) -> None:
    server = LlamaServer(free_port())
    url = server.base_url
    advisor = _advisor(indexed, url)
    assert check_backend(advisor.settings, "openai").ok  # alive
    server.kill()
    assert not check_backend(advisor.settings, "openai").ok  # dead
    final = list(advisor.stream(QUESTION, backend="openai", k=3))[-1]
    assert final.notice == "llm_unavailable" and final.backend == "extractive"
    shown = _shown(final)
    assert "not available right now" in shown and "three times a year" in shown
    assert not INTERNALS.search(re.sub(r"https://example\.test\S*", "", shown)), shown


def test_uncited_sentences_are_left_out_of_a_cited_answer(indexed: Settings) -> None:
    """Beside the real runtime (SmolLM2-135M seldom cites): a scripted server's answer citing one passage."""
    from fake_openai_server import FakeLLMServer

    chunks = ["Minor releases ship three times a year [1]. ", "Nobody knows why. ", "It is documented [9]."]
    with FakeLLMServer(chunks=chunks) as server:
        final = list(_advisor(indexed, server.openai_url).stream(QUESTION, backend="openai", k=3))[-1]
    assert final.notice is None and final.backend == "openai"
    assert final.answer == "Minor releases ship three times a year [1]."
    assert final.flagged == ["Nobody knows why.", "It is documented."] and len(final.citations) == 1
    assert "2 sentence(s) of the model's answer had no valid citation and were left out" in _shown(final)
