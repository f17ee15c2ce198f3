"""Where the tests' own files are: the fixture corpus and golden file written for them, and the project."""

from pathlib import Path

SUPPORT_DIR = Path(__file__).resolve().parent
TESTS_DIR = SUPPORT_DIR.parent
FIXTURES = TESTS_DIR / "fixtures"
FIXTURE_CORPUS = FIXTURES / "corpus"
PROJECT_ROOT = TESTS_DIR.parent
SHARED_DOCS = PROJECT_ROOT.parent / "shared" / "corpus" / "docs"
