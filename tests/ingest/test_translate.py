"""`ingest --translate` over real HTTP against a loopback "translator" (OpenAI-compatible and Ollama routes).

The tests' fake LLM server (tests/support/fake_openai_server.py) answers through ``Translator.reply``, which
"translates" by swapping words through a small table, line by line, leaving code fences alone: the
structure survives unless a test asks it to drop list items. Documents are written into tmp_path.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import FakeLLMServer, RecordedRequest

from ingest.cli import main
from ingest.companions import link, structure_problem
from ingest.documents import Document, parse_document
from ingest.translator.writer import (
    COMPLETENESS,
    clean_reply,
    companion_id,
    front_matter,
    resolve_backend,
    run_translate,
    section_problem,
    split_sections,
)

EN_DOC = """---
id: "gateway-notes"
title: "Gateway Notes"
url: "https://example.test/gateway-notes"
language: "en"
license: "CC0-1.0"
---

Intro line before any heading.

# Gateway Notes

## Install

Install the gateway with one command.

- first step
  - nested detail
- second step

## Limits

| item | value |
|---|---|
| memory | 512 MB |

```sh
# not a heading
gatewayctl restart
```
"""

JA_DOC = """---
id: "scheduler-memo-ja"
title: "スケジューラ メモ"
url: "https://example.test/scheduler-memo"
language: "ja"
license: "CC0-1.0"
---

# スケジューラの覚え書き

## 概要

ジョブはキューに入る。

1. 投入
2. 実行
"""

WORDS = {
    "en": {"スケジューラの覚え書き": "Scheduler notes", "スケジューラ": "Scheduler", "メモ": "memo", "概要": "Overview",
           "ジョブ": "job ", "キュー": "queue ", "に入る": "enters", "投入": "submit", "実行": "run"},
    "ja": {"Gateway": "ゲートウェイ", "Notes": "ノート", "Install": "インストール", "Limits": "制限", "step": "手順",
           "memory": "メモリ", "Intro line": "導入の行", "first": "最初の", "second": "二番目の"},
}  # fmt: skip


def fake_translate(text: str, to: str) -> str:
    """Swap table words line by line; code fences pass through unchanged."""
    out, in_code = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code:
            for src, dst in WORDS[to].items():
                line = line.replace(src, dst)
        out.append(line)
    return "\n".join(out)


@dataclass
class Translator:
    """Replies of the loopback server; ``mode``: ok | break (drops list items) | break_once (only before the
    retry) | fenced."""

    mode: str = "ok"
    server: FakeLLMServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.base_url

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.server.requests if self.server is not None else []

    def reply(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        to = "ja" if "into Japanese" in messages[0]["content"] else "en"
        text = fake_translate(messages[1]["content"], to)
        retried = any(m["role"] == "assistant" for m in messages)
        if self.mode == "break" or (self.mode == "break_once" and not retried):
            text = "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*(-|\d\.) ", ln))
        if self.mode == "fenced":
            text = f"```markdown\n{text}\n```"
        return text


@pytest.fixture
def translator() -> Iterator[Translator]:
    """The tests' fake LLM server on loopback, answering every chat request with ``Translator.reply``."""
    state = Translator()
    with FakeLLMServer(reply=state.reply) as server:
        state.server = server
        yield state


@dataclass
class Env:
    corpus: Path
    translations: Path
    index: Path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, translator: Translator) -> Env:
    """Corpus with one English and one Japanese original; ADVISOR_* points at tmp_path and the translator."""
    import os

    for name in list(os.environ):
        if name.startswith("ADVISOR_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no developer .env
    e = Env(tmp_path / "corpus", tmp_path / "translations", tmp_path / "index")
    e.corpus.mkdir()
    (e.corpus / "gateway-notes.md").write_text(EN_DOC, encoding="utf-8")
    (e.corpus / "scheduler-memo-ja.md").write_text(JA_DOC, encoding="utf-8")
    for key, value in {
        "CORPUS_DIR": e.corpus,
        "TRANSLATIONS_DIR": e.translations,
        "INDEX_DIR": e.index,
        "DATA_DIR": tmp_path / "data",
        "EMBEDDING_BACKEND": "fake",
        "ANSWER_BACKEND": "openai",
        "OPENAI_BASE_URL": translator.url + "/v1",
        "OPENAI_MODEL": "tiny-mt",
        "OLLAMA_BASE_URL": translator.url,
        "OLLAMA_MODEL": "tiny-llama",
    }.items():
        monkeypatch.setenv(f"ADVISOR_{key}", str(value))
    return e


def original(env: Env, name: str) -> Document:
    return parse_document((env.corpus / name).read_bytes(), name)


def companion(path: Path) -> tuple[Document, dict[str, Any]]:
    """The companion as ingest parses it, and its raw front matter."""
    raw = path.read_bytes()
    return parse_document(raw, path.name), front_matter(raw.decode("utf-8"))


# --- pure helpers ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "count"),
    [
        ("", 0),
        ("no heading at all\n", 1),
        ("\n# 見出し\n本文。\n\n## 次\n- 項目\n", 3),
        ("# A\n```\n# not a heading\n```\n## B", 2),
        ("# A\r\ntext\r## B\rmore\r\n", 2),
        ("intro\n   ## Indented up to three spaces is a heading\ntext\n", 2),
        ("# A\n- # in a list item\n> # in a quote\n#hashtag\n#\nTitle\n---\n", 1),
    ],
)
def test_split_sections_joins_back_and_cuts_only_at_real_headings(body: str, count: int) -> None:
    pieces = split_sections(body)
    assert "".join(pieces) == body
    assert len(pieces) == count
    assert all(p.lstrip(" ").startswith("#") for p in pieces[1:])


@pytest.mark.parametrize(
    ("body", "sections"),
    [
        # a longer fence holds a shorter one: the inner ``` neither closes it nor opens another
        ("# A\n````md\n```\n# in code\n```\n````\n## B\n", ["# A", "## B"]),
        # backticks in a fence's info string make it a code span, not a fence that never closes
        ("# A\n```x``` is inline code\n## B\n", ["# A", "## B"]),
        # four spaces make an indented code block, not a fence: the heading after it is a heading
        ("# A\n\n    ```\n# B\n", ["# A", "# B"]),
        # an HTML block runs to its closing tag
        ("# A\n<pre>\n# in pre\n</pre>\n\n## B\n", ["# A", "## B"]),
    ],
)
def test_split_sections_reads_code_and_html_as_the_parser_does(body: str, sections: list[str]) -> None:
    pieces = split_sections(body)
    assert "".join(pieces) == body
    assert [p.split("\n")[0] for p in pieces] == sections


def test_section_problem_checks_lists_before_the_first_heading_too() -> None:
    assert section_problem("- a\n- b\n", "- x\n- y\n") is None
    assert section_problem("- a\n", "- x\n- y\n") is not None
    assert section_problem("## A\n\n- a\n", "## X\n\n- x\n") is None
    assert "level" in (section_problem("### A\n", "## X\n") or "")


def test_clean_reply_unwraps_a_fence_only_when_the_section_is_not_code() -> None:
    assert clean_reply("```markdown\n## A\ntext\n```\n", "## X\ntext") == "## A\ntext"
    assert clean_reply("```\ncode\n```", "```\ncode\n```") == "```\ncode\n```"
    assert clean_reply("~~~md\n## A\n```sh\nls\n```\n~~~", "## X\n```sh\nls\n```") == "## A\n```sh\nls\n```"


@pytest.mark.parametrize(
    ("reply", "original", "expected"),
    [
        # the wrapper's own fence characters inside it: the section's code block survives the unwrapping
        ("```markdown\n## A\n\n```sh\nls\n```\n```", "## X\n\n```sh\nls\n```", "## A\n\n```sh\nls\n```"),
        # a section that starts with code (but is more than code) is unwrapped too
        ("```\n```sh\nls\n```\n\n一覧。\n```", "```sh\nls\n```\n\nLists them.", "```sh\nls\n```\n\n一覧。"),
        # a section that is one code block, wrapped once more
        ("````md\n```\ncode\n```\n````", "```\ncode\n```", "```\ncode\n```"),
    ],
)
def test_clean_reply_unwraps_a_wrapper_around_code(reply: str, original: str, expected: str) -> None:
    assert clean_reply(reply, original) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "```md\n## A\n```\n\ntext\n\n```\ncode\n```",  # opens and closes with code blocks, holds none
        "```markdown\n## A\ntext",  # a fence left open: the reply may be cut short
        "```yaml\nkey: value\n```",  # code, not a wrapper
        "```\n## A\n```sh",  # the last line opens a fence, it closes none
    ],
)
def test_clean_reply_leaves_a_reply_that_is_not_one_wrapper_alone(reply: str) -> None:
    assert clean_reply(reply, "## X\ntext") == reply


@pytest.mark.parametrize(
    ("doc_id", "to", "expected"),
    [("article-ja", "en", "article-en"), ("gateway", "ja", "gateway-ja"), ("a-en", "ja", "a-ja")],
)
def test_companion_id(doc_id: str, to: str, expected: str) -> None:
    assert companion_id(doc_id, to) == expected


# --- the command, over HTTP -----------------------------------------------------------------------------------


def test_writes_a_linked_companion_that_keeps_the_structure(
    env: Env, translator: Translator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--translate", "--no-ingest", "gateway-notes"]) == 0
    path = env.translations / "gateway-notes-ja.md"
    doc, meta = companion(path)
    orig = original(env, "gateway-notes.md")
    assert doc.id == "gateway-notes-ja" and doc.language == "ja" and doc.url == orig.url
    assert doc.translation_of == meta["translation_of"] == "gateway-notes"
    assert doc.source_sha256 == meta["source_sha256"] == orig.body_sha256
    assert meta["translator"] == "machine translation (openai tiny-mt)"
    assert meta["completeness"] == COMPLETENESS
    assert meta["license"] == "CC0-1.0; translation of that document"
    assert doc.title == "ゲートウェイ ノート（日本語訳）"
    assert structure_problem(doc.body, orig.body) is None
    assert "インストール" in doc.body and "gatewayctl restart" in doc.body and "Install" not in doc.body
    linked = link([orig, doc])
    assert linked.problems == [] and linked.stale == []
    assert linked.documents[1].section_map["インストール"] == "Install"
    # One request per non-empty section (intro, H1, Install, Limits), no title request: the title is the H1.
    assert len(translator.requests) == 4
    first = translator.requests[0]
    body = first.body
    assert first.path == "/v1/chat/completions" and body["model"] == "tiny-mt" and body["temperature"] == 0
    assert first.headers["authorization"] == "Bearer not-needed"
    assert "into Japanese" in body["messages"][0]["content"] and "structure exactly" in body["messages"][0]["content"]
    assert "translate: 1 written, 0 up to date, 0 failed" in capsys.readouterr().out
    assert [p.name for p in env.translations.iterdir()] == ["gateway-notes-ja.md"]  # no temporary file left


def test_second_run_skips_and_a_changed_original_is_rewritten(
    env: Env, translator: Translator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--translate", "--no-ingest", "--to", "en"]) == 0  # every original not in English
    path = env.translations / "scheduler-memo-en.md"
    first, meta = companion(path)
    assert meta["source_sha256"] == original(env, "scheduler-memo-ja.md").body_sha256
    assert first.title == "Scheduler memo (English translation)"  # title differs from the H1: asked for
    assert not (env.translations / "gateway-notes-en.md").exists()  # already English
    capsys.readouterr()

    sent = len(translator.requests)
    assert main(["--translate", "--no-ingest", "--to", "en"]) == 0
    assert len(translator.requests) == sent
    assert "0 written, 1 up to date, 0 failed" in capsys.readouterr().out

    changed = JA_DOC.replace("ジョブはキューに入る。", "ジョブはキューに入る。投入は一度。")  # same structure
    (env.corpus / "scheduler-memo-ja.md").write_text(changed, encoding="utf-8")
    orig = original(env, "scheduler-memo-ja.md")
    assert link([orig, first]).stale == ["scheduler-memo-en"]
    assert main(["--translate", "--no-ingest", "scheduler-memo-ja"]) == 0
    second, meta = companion(path)
    assert meta["source_sha256"] == orig.body_sha256
    assert "submitは一度" in second.body and link([orig, second]).stale == []
    assert "1 written, 0 up to date, 0 failed" in capsys.readouterr().out


def test_a_model_that_breaks_the_structure_fails_the_document_and_writes_nothing(
    env: Env, translator: Translator, capsys: pytest.CaptureFixture[str]
) -> None:
    translator.mode = "break"
    assert main(["--translate", "--no-ingest", "gateway-notes"]) == 1
    err = capsys.readouterr().err
    assert "failed: gateway-notes-ja: section 3 'Install' came back with a different structure twice" in err
    assert not env.translations.exists()  # not even a temporary file
    retries = [r.body for r in translator.requests if any(m["role"] == "assistant" for m in r.messages)]
    assert len(retries) == 1 and "list item" in retries[0]["messages"][-1]["content"]


def test_a_structure_slip_is_retried_once(env: Env, translator: Translator) -> None:
    translator.mode = "break_once"
    assert main(["--translate", "--no-ingest", "gateway-notes"]) == 0
    doc, _ = companion(env.translations / "gateway-notes-ja.md")
    assert structure_problem(doc.body, original(env, "gateway-notes.md").body) is None


def test_ollama_backend_and_a_fenced_reply(env: Env, translator: Translator) -> None:
    translator.mode = "fenced"
    assert main(["--translate", "--no-ingest", "--backend", "ollama", "scheduler-memo-ja"]) == 0
    doc, meta = companion(env.translations / "scheduler-memo-en.md")
    assert meta["translator"] == "machine translation (ollama tiny-llama)"
    assert "```" not in doc.body and "## Overview" in doc.body
    first = translator.requests[0]
    assert first.path == "/api/chat" and first.body["model"] == "tiny-llama"
    assert first.body["options"]["temperature"] == 0


def test_without_a_backend_it_says_how_to_configure_one(
    env: Env, translator: Translator, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ADVISOR_ANSWER_BACKEND", "extractive")
    assert main(["--translate", "gateway-notes"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "no translation backend" in err and "ADVISOR_ANSWER_BACKEND=openai" in err
    assert "ADVISOR_OPENAI_BASE_URL" in err and "ollama" in err
    assert not env.translations.exists() and not env.index.exists() and translator.requests == []


def test_an_unreachable_server_is_named_and_nothing_is_written(
    env: Env, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("ADVISOR_OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    assert main(["--translate", "gateway-notes"]) == 1
    lines = [
        ln for ln in capsys.readouterr().err.splitlines() if ln.strip() and "section/s" not in ln
    ]  # not the progress bar
    assert len(lines) == 1 and f"http://127.0.0.1:{port}/v1/chat/completions" in lines[0]
    assert not env.translations.exists() and not env.index.exists()


def test_only_named_documents_are_translated_and_bad_requests_are_refused(
    env: Env, translator: Translator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--translate", "--no-ingest", "scheduler-memo-ja"]) == 0
    assert [p.name for p in env.translations.iterdir()] == ["scheduler-memo-en.md"]
    assert main(["--translate", "--no-ingest"]) == 2  # neither ids nor --to
    assert main(["--translate", "--no-ingest", "no-such-doc"]) == 2
    assert main(["--translate", "--no-ingest", "scheduler-memo-en"]) == 2  # a translation, not an original
    assert main(["--translate", "--no-ingest", "--to", "en", "gateway-notes"]) == 2  # already English
    err = capsys.readouterr().err
    assert "no original document 'no-such-doc'" in err and "'scheduler-memo-en' is a translation" in err
    with pytest.raises(SystemExit):
        main(["gateway-notes"])  # DOC_ID without --translate


def test_a_stale_human_translation_is_kept(
    env: Env, translator: Translator, capsys: pytest.CaptureFixture[str]
) -> None:
    env.translations.mkdir()
    human = env.translations / "scheduler-memo-en.md"
    text = (
        '---\nid: "scheduler-memo-en"\nlanguage: "en"\ntranslation_of: "scheduler-memo-ja"\n'
        f'source_sha256: "{"0" * 64}"\ntranslator: "the maintainers"\n---\n\n# Notes\n\n## Overview\n\nJobs queue.\n\n'
        "1. submit\n2. run\n"
    )
    human.write_text(text, encoding="utf-8")
    assert main(["--translate", "--no-ingest", "scheduler-memo-ja"]) == 0
    assert human.read_text(encoding="utf-8") == text and translator.requests == []
    assert "kept: scheduler-memo-en: scheduler-memo-en.md is stale but was translated by a person" in (
        capsys.readouterr().err
    )


def test_translating_then_ingesting(env: Env, translator: Translator, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--translate", "scheduler-memo-ja"]) == 0
    out = capsys.readouterr().out
    assert "translate: 1 written" in out
    assert "ingest: 3 added, 0 updated" in out  # both originals and the new companion, linked and indexed


def test_run_translate_with_settings(env: Env, translator: Translator) -> None:
    from core.settings import load_settings

    settings = load_settings(env_file=None).with_(corpus_dir=env.corpus, translations_dir=env.translations)
    backend = resolve_backend(settings)
    report = run_translate(settings, backend, ["gateway-notes", "scheduler-memo-ja"])
    assert [(o.companion_id, o.status) for o in report.outcomes] == [
        ("gateway-notes-ja", "written"),
        ("scheduler-memo-en", "written"),
    ]


def test_json_output_stays_one_object(env: Env, translator: Translator, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--translate", "--json", "scheduler-memo-ja"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["docs_added"] == 3
    assert "translate: 1 written" in captured.err
