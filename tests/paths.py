"""Where the tests' own files are: the fixture corpus and golden file written for them, and the project."""

from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
FIXTURES = TESTS_DIR / "fixtures"
FIXTURE_CORPUS = FIXTURES / "corpus"
PROJECT_ROOT = TESTS_DIR.parent
SHARED_DOCS = PROJECT_ROOT.parent / "shared" / "corpus" / "docs"
