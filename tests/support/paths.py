"""Where the tests' own files are: the fixture corpus and golden file written for them, and the project."""

from pathlib import Path

from core.settings import Settings

SUPPORT_DIR = Path(__file__).resolve().parent
TESTS_DIR = SUPPORT_DIR.parent
FIXTURES = TESTS_DIR / "fixtures"
FIXTURE_CORPUS = FIXTURES / "corpus"
PROJECT_ROOT = TESTS_DIR.parent
SHARED_DOCS = PROJECT_ROOT.parent / "shared" / "corpus" / "docs"


def fixture_settings(root: Path, corpus: Path | None = None, **overrides: object) -> Settings:
    """Settings for a test's own folder ``root``: an embedded index, the fake embedder, small chunks, and the
    given corpus (default ``root/corpus``); never the developer's ``.env`` or the project's translations."""
    values: dict[str, object] = {
        "corpus_dir": corpus or root / "corpus",
        "translations_dir": root / "translations",
        "index_dir": root / "index",
        "data_dir": root / "data",
        "embedding_backend": "fake",
        "chunk_size": 300,
        "chunk_min": 60,
        # The answerable model is fitted on the real corpus and the real embedder; on a toy corpus with the fake
        # embedder its probabilities mean little, so these tests pin a bar (the one chosen on the first, 144-case
        # dev split) instead of the current dev choice. evals measures the fitted bar on the real corpus.
        "answerable_bar": 0.75,
    }
    return Settings().with_(**{**values, **overrides})
