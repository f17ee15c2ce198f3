"""app.web.answer_view: an answer's shape from its data — direct answer, quotes, why, sources (no server).

The answers here are built the way the pipeline builds them (its Markdown with its own framing lines, and
the typed fields: value line, lead, more), so each test can fail by showing a verdict or a value twice, by
reading the Markdown back, or by leaking a raw value.
"""

from __future__ import annotations

import re

import pytest
from fakes import FakeEmbeddings

from app.models import (
    Answer,
    Change,
    Citation,
    FacetReading,
    Finding,
    NotStated,
    QuestionPart,
    Quote,
    Rule,
    TypedQuestion,
    ValueLine,
    ValueSpan,
    Verdict,
    Vote,
)
from app.pipeline import Advisor
from app.web import answer_view
from app.web.render import NO_RATE
from core.settings import Settings

XSS = "<img src=x onerror=alert(1)>"


def _cite(n: int) -> Citation:
    return Citation(
        n=n, doc_id=f"doc-{n}", chunk_id=f"doc-{n}#0", title=f"Title {n}", url=f"https://example.test/{n}",
        section="Plans", quote=f"Quoted text {n}.",
    )  # fmt: skip


def _rule(rid: str, condition: str, verdict: str, source: str = "table", reason: str = "") -> Rule:
    return Rule(
        id=rid, doc_id="doc-1", chunk_id="doc-1#0", section="Plans > Scenarios", language="en", condition=condition,
        verdict=verdict, reason=reason, quote=f"| {condition} | {verdict} |", source=source,
    )  # fmt: skip


ON_PREM = _rule("r1", "Training on our own racks", "slurm", reason="Dense placement is faster")
TRAIN_ONLY = _rule("r2", "Only training, as fast as possible", "slurm")
VERDICT = Verdict(
    value="slurm",
    situation={
        "deployment": FacetReading(value="on_prem", span="our racks", label="on-prem"),
        "workload": FacetReading(value="training", span="no inference", negated=True, label="training only"),
    },
    read_as=["on-prem", "training only"],
    votes=[
        Vote(facet="deployment", value="on_prem", label="on-prem", platform="slurm", rule=ON_PREM, n=1),
        Vote(facet="workload", value="training", label="training only", platform="slurm", rule=TRAIN_ONLY, n=2),
    ],
    change_detail=[
        Change(
            facet="workload", value="training_and_serving", condition="if you also served the models", verdict="hybrid"
        ),
        Change(facet="deployment", value="cloud", condition="if you ran in the cloud", verdict="kubernetes"),
    ],
    changes=["if you also served the models → hybrid", "if you ran in the cloud → kubernetes"],
    summary="Verdict: Slurm — read as: on-prem · training only",
)
# What the pipeline writes for it: its own verdict lines, then the quotes under their heading.
SELECTION_TEXT = """**Verdict: Slurm** — read as: on-prem · training only
- on-prem → Slurm: Training on our own racks — Dense placement is faster [1]
- training only → Slurm: Only training, as fast as possible [2]
- What would change it: if you also served the models → hybrid; if you ran in the cloud → kubernetes
From the knowledge base:
- 7. Scenarios [1]
  - Scenario: Training on our own racks; Platform: Slurm
- Racks are cheaper over five years. [2]"""


def _quote(n: int, text: str, **kw: object) -> Quote:
    return Quote(n=n, doc_id=f"doc-{n}", chunk_id=f"doc-{n}#0", text=text, **kw)  # type: ignore[arg-type]


SELECTION_LEAD = [
    _quote(1, "7. Scenarios", kind="heading", followers=["Scenario: Training on our own racks; Platform: Slurm"]),
    _quote(2, "Racks are cheaper over five years."),
]


def _selection(**kw: object) -> Answer:
    base: dict[str, object] = {
        "question": "We train on our racks, no inference. Slurm or Kubernetes?",
        "answer": SELECTION_TEXT,
        "lead": SELECTION_LEAD,
        "verdict": VERDICT,
        "citations": [_cite(1), _cite(2)],
    }
    return Answer(**{**base, **kw})


def _between(text: str, *needles: str) -> None:
    """The needles appear in this order."""
    positions = [text.index(n) for n in needles]
    assert positions == sorted(positions), list(zip(needles, positions, strict=True))


def test_a_selection_answer_has_one_verdict_line_with_read_as_and_each_votes_reason() -> None:
    md = answer_view.answer_markdown(_selection(), key="a2")
    assert md.count('class="verdict-line"') == 1 and md.count('class="verdict verdict-') == 1  # one badge
    assert md.count("Verdict") == 1 and "read as:" not in md  # the pipeline's own verdict line is not repeated
    line = re.search(r'<div class="verdict-line">.*?</div>', md)
    assert line is not None
    assert ">Slurm</span>" in line.group(0) and "Read as:" in line.group(0)
    assert '<span class="facet">on-prem</span> · <span class="facet">training only</span>' in line.group(0)
    votes = re.search(r'<ul class="votes">(.*?)</ul>', md)
    assert votes is not None and votes.group(1).count("<li>") == 2
    assert "on-prem → Slurm: Training on our own racks — Dense placement is faster" in votes.group(1)
    assert '<a href="#src-a2-1"' in votes.group(1) and '<a href="#src-a2-2"' in votes.group(1)  # each cited
    # Then the quotes, then why (collapsed), then the sources.
    _between(
        md, 'class="verdict-line"', "From the knowledge base", "Racks are cheaper", '<details class="why">', "Sources"
    )
    assert "<b>7. Scenarios</b>" in md and "<li>Scenario: Training on our own racks" in md  # heading, followers


def test_what_would_change_it_uses_human_labels_only_and_is_collapsed() -> None:
    md = answer_view.answer_markdown(_selection(), key="a2")
    why = md[md.index('<details class="why">') :]
    why = why[: why.index("</details>")]
    assert "If you also served the models → Hybrid — train on Slurm, serve on Kubernetes" in why
    assert "If you ran in the cloud → Kubernetes" in why
    assert "Training on our own racks</td><td>Slurm</td>" in why  # the rules behind it, as a table
    for raw in ("training_and_serving", "→ kubernetes", "→ hybrid", "on_prem"):
        assert raw not in md, raw
    assert "<details open" not in md  # collapsed until opened


def test_it_depends_names_the_deciding_facet() -> None:
    depends = VERDICT.model_copy(update={"value": "depends", "deciding": "workload", "deciding_label": "workload"})
    md = answer_view.answer_markdown(_selection(verdict=depends), key="d")
    assert "It depends" in md and "Depends on: <b>workload</b>" in md
    assert md.count('class="verdict-line"') == 1
    ja = answer_view.answer_markdown(
        _selection(verdict=depends.model_copy(update={"deciding_label": "ワークロード"}), language="ja"), key="d"
    )
    assert "決め手: <b>ワークロード</b>" in ja and "読み取った状況:" in ja and "判定:" in ja


def test_a_typed_answer_opens_with_each_value_in_bold_with_its_source() -> None:
    answer = Answer(
        question="How much memory does the control plane need, and which port?",
        answer="**Answer:** **512 MB** [1]\n**Not stated in the documents:** “which port”\n"
        "From the knowledge base:\n- The control plane needs **512 MB** of memory. [1]",
        question_info=TypedQuestion(
            focus="Gateway",
            answer_type="quantity",
            parts=[
                QuestionPart(text="How much memory", answer_type="quantity"),
                QuestionPart(text="which port?", answer_type="quantity"),
            ],
        ),
        findings=[Finding(part=0, value="512 MB", answer_type="quantity", n=1)],
        value_line=ValueLine(findings=[Finding(part=0, value="512 MB", answer_type="quantity", n=1)], confidence=0.9),
        lead=[
            _quote(
                1,
                "The control plane needs 512 MB of memory.",
                role="value",
                values=[ValueSpan(part=0, value="512 MB", answer_type="quantity", start=24, end=30)],
            )
        ],
        missing=["which port?"],
        citations=[_cite(1)],
    )
    md = answer_view.answer_markdown(answer, key="t")
    direct = re.search(r'<div class="direct-answer">.*?</div>', md)
    assert direct is not None
    assert 'Answer:</span> <strong class="value">512 MB</strong> <sup class="cite"><a href="#src-t-1"' in direct.group(
        0
    )
    assert md.count("Answer:") == 1  # the pipeline's "**Answer:**" line is not shown again
    assert 'class="missing"' in md and "Not stated in the documents:</b> “which port”" in md
    assert md.count("Not stated in the documents") == 1 and 'class="not-stated"' not in md
    _between(
        md,
        "direct-answer",
        "missing",
        "From the knowledge base",
        'needs <strong class="value">512 MB</strong> of memory',
    )
    plain = answer_view.answer_plain(answer)
    assert plain.startswith("**Answer:** **512 MB** [1]\n**Not stated in the documents:** “which port”\n")
    assert plain.count("512 MB") == 2  # the value, then its quote


NEAR_MISS = Answer(
    question="What is the default port of the gateway's admin API?",
    answer="**Not stated in the documents** about Gateway: none of them gives the value asked for — “…”.\n"
    "Related, but not an answer:\n- Install the gateway with one command. [1]\n- Logs live in one place. [2]",
    lead=[
        _quote(1, "Install the gateway with one command.", role="related"),
        _quote(2, "Logs live in one place.", role="related"),
    ],
    refused=True,
    not_stated=NotStated(asked="What is the default port of the gateway's admin API?", focus="Gateway"),
    citations=[_cite(1), _cite(2)],
)


def test_a_not_stated_answer_has_its_own_callout_then_related_passages_below_it() -> None:
    md = answer_view.answer_markdown(NEAR_MISS, key="n")
    callout = re.search(r'<div class="not-stated" role="note">.*?</div></div>', md)
    assert callout is not None
    assert "Not stated in the documents" in callout.group(0)
    assert "You asked:</b> “What is the default port of the gateway&#x27;s admin API?”" in callout.group(0)
    assert "About:</b> Gateway" in callout.group(0)
    assert "none of them gives" not in md  # the pipeline's own sentence is not repeated
    related = re.search(r'<div class="related"><div class="related-head">Related, but not an answer</div>.*?</div>', md)
    assert related is not None and "Install the gateway with one command." in md
    _between(md, 'class="not-stated"', 'class="related"', "Install the gateway", "Sources")
    for absent in ("verdict-line", "direct-answer", "From the knowledge base", 'class="verdict'):
        assert absent not in md, absent
    plain = answer_view.answer_plain(NEAR_MISS)
    assert plain.startswith("**Not stated in the documents** — You asked: “What is the default port")
    assert "· About: Gateway\n\nRelated, but not an answer:\n- Install the gateway" in plain


def test_a_japanese_question_gets_japanese_framing_in_an_english_ui() -> None:
    ja = NEAR_MISS.model_copy(
        update={"language": "ja", "not_stated": NotStated(asked="管理APIのポートは？", focus="Gateway")}
    )
    md = answer_view.answer_markdown(ja, key="j", lang="en")
    assert "資料には記載がありません" in md and "質問:</b> 「管理APIのポートは？」" in md and "対象:</b> Gateway" in md
    assert "関連する記述（回答ではありません）" in md and "出典" in md
    assert "Not stated" not in md and "Related" not in md and "Sources" not in md


def test_the_lead_first_the_rest_folded_rows_as_tables_against_labelled_originals_on_request() -> None:
    row = _quote(
        1, "Scenario: Cloud-first, elastic; Platform: Kubernetes", kind="row", role="against",
        markdown="| Scenario | Platform |\n|---|---|\n| Cloud-first, elastic | Kubernetes |",
    )  # fmt: skip
    translated = _quote(2, "Racks are cheaper.", translation_of="doc-ja", original="ラックの方が安い。")
    more = [_quote(2, f"Further sentence {i}.") for i in range(4)]
    answer = _selection(lead=[SELECTION_LEAD[0], row, translated], more=more, more_text="- ignored [2]")
    md = answer_view.answer_markdown(answer, key="m")
    lead = md[: md.index('<details class="more">')]
    assert lead.count('<li class="q') == 3  # at most three quotes first
    assert '<li class="q kind-row against">' in lead
    assert "<table>" in lead and "<td>Cloud-first, elastic</td>" in lead and "Scenario: Cloud-first" not in lead
    assert "argues against the verdict" in lead  # not listed as support
    assert '<details class="original-of"><summary>Original</summary>' in lead and "ラックの方が安い。" in lead
    folded = md[md.index('<details class="more">') :]
    assert "<summary>More from the documents (4)</summary>" in folded and folded.count("Further sentence") == 4
    assert "ignored" not in md  # the fields, not the Markdown
    plain = answer_view.answer_plain(answer)
    _between(plain, "From the knowledge base:", "(argues against the verdict) [1]", "More from the documents:")
    assert "| Cloud-first, elastic | Kubernetes |" in plain


def test_a_selection_question_without_a_deciding_fact_asks_for_the_facts() -> None:
    needs = ["where it runs", "GPU fleet", "workload"]
    answer = Answer(
        question="Slurm or Kubernetes?",
        answer="**To recommend a platform I need your situation:** tell me about where it runs, GPU fleet, workload\n"
        "From the knowledge base:\n- Both are workload managers. [1]",
        needs=needs,
        citations=[_cite(1)],
    )
    md = answer_view.answer_markdown(answer, key="s")
    assert "To recommend a platform, tell me: <b>where it runs</b>, <b>GPU fleet</b>, <b>workload</b>" in md
    assert "I need your situation" not in md and "verdict-line" not in md
    ja = answer.model_copy(update={"language": "ja", "needs": ["実行環境", "GPU台数"]})
    assert "プラットフォームを推奨するには、次の点を教えてください: <b>実行環境</b>、<b>GPU台数</b>" in (
        answer_view.answer_markdown(ja, key="s")
    )
    assert "To recommend a platform, tell me: where it runs, GPU fleet, workload" in answer_view.answer_plain(answer)


def test_an_llm_answer_is_shown_whole_under_the_verdict_line() -> None:
    votes = [v.model_copy(update={"n": None}) for v in VERDICT.votes]
    answer = _selection(
        answer="Slurm suits a fixed on-prem fleet [1].",
        backend="openai",
        verdict=VERDICT.model_copy(update={"votes": votes}),
    )
    md = answer_view.answer_markdown(answer, key="l")
    assert md.count('class="verdict-line"') == 1 and "Slurm suits a fixed on-prem fleet" in md
    assert "From the knowledge base" not in md  # free text, not the pipeline's quotes
    assert "<li>on-prem → Slurm: Training on our own racks — Dense placement is faster</li>" in md  # uncited vote


def test_the_export_text_says_the_same_once() -> None:
    plain = answer_view.answer_plain(_selection())
    assert plain.count("Verdict") == 1 and "<" not in plain
    assert plain.startswith("**Verdict: Slurm** — Read as: on-prem · training only\n")
    assert "- on-prem → Slurm: Training on our own racks — Dense placement is faster [1]\n" in plain
    _between(plain, "Verdict", "From the knowledge base:", "Racks are cheaper", "What would change it:", "Sources:")
    assert "- If you ran in the cloud → Kubernetes" in plain
    assert "- Training on our own racks → Slurm (Plans > Scenarios) [1]" in plain
    for raw in ("training_and_serving", "→ kubernetes", "on_prem"):
        assert raw not in plain, raw
    assert "[1] Title 1 — Plans — https://example.test/1" in plain


def test_a_streaming_answer_is_unrated_and_an_empty_one_shows_progress() -> None:
    partial = answer_view.answer_markdown(Answer(question="q", answer=""), key="p", partial=True)
    assert "…" in partial and partial.endswith(NO_RATE)
    final = answer_view.answer_markdown(Answer(question="q", answer="Done [1].", citations=[_cite(1)]), key="p")
    assert final.endswith("ms</sub>") and NO_RATE not in final


@pytest.mark.parametrize("field", ["asked", "focus", "value", "label", "rule", "needs"])
def test_every_field_is_escaped(field: str) -> None:
    ns = NotStated(asked=XSS if field == "asked" else "a", focus=XSS if field == "focus" else "f")
    rule = _rule("x", XSS if field == "rule" else "c", "slurm")
    vote = Vote(facet="deployment", value="on_prem", label=XSS if field == "label" else "on-prem", platform="slurm",
                rule=rule, n=1)  # fmt: skip
    answer = Answer(
        question="q", answer="From the knowledge base:\n- x [1]", not_stated=ns,
        verdict=Verdict(value="slurm", votes=[vote], read_as=[XSS if field == "label" else "on-prem"]),
        findings=[Finding(part=0, value=XSS if field == "value" else "v", answer_type="name", n=1)],
        needs=[XSS if field == "needs" else "where"], citations=[_cite(1)],
    )  # fmt: skip
    html_part = answer_view.answer_markdown(answer, key="x")
    assert "<img" not in html_part and "&lt;img src=x onerror=alert(1)&gt;" in html_part


def test_the_pipelines_answers_are_shown_without_their_framing_twice(indexed: Settings) -> None:
    """The real pipeline's answers: drawn from their typed fields, never from their Markdown."""
    # the value line as the rules find it: the fitted selector shows one only when it is confident (its own tests
    # are in tests/app/answer), and this test is about drawing one
    advisor = Advisor(indexed.with_(answer_selector=False), FakeEmbeddings())
    typed = advisor.ask("How much memory does the gateway control plane need?")
    assert typed.findings, typed.answer
    md = answer_view.answer_markdown(typed, key="a1")
    assert md.count("Answer:") == 1 and "From the knowledge base:" not in md and "From the knowledge base" in md
    shown = md[: md.index("**Sources**")]
    assert shown.count("512 MB") == 2  # the direct answer, and the quote that holds it
    near = advisor.ask("What is the default port of the gateway's admin API?")
    assert near.not_stated is not None, near.answer
    md = answer_view.answer_markdown(near, key="a2")
    assert md.count("Not stated in the documents") == 1 and md.count("Related, but not an answer") == 1
    assert 'class="related"' in md and "<sup" in md[md.index('class="related"') :]


def test_situations_voting_through_one_rule_share_one_reason_line() -> None:
    """Issue 27, item 9: "学習と推論 → Kubernetes: X [1]" and "基盤はひとつ → Kubernetes: X [1]" were the same line."""
    serve = _rule("r3", "LLM学習後、同一基盤で推論サービスも運用", "kubernetes", reason="CI/CD との統合が容易")
    cloud = _rule("r4", "クラウド主体でノードを頻繁に伸縮", "kubernetes")
    verdict = Verdict(
        value="kubernetes",
        read_as=["クラウド", "学習と推論", "基盤はひとつ"],
        votes=[
            Vote(facet="deployment", value="cloud", label="クラウド", platform="kubernetes", rule=cloud, n=2),
            Vote(facet="workload", value="training_and_serving", label="学習と推論", platform="kubernetes", rule=serve, n=1),
            Vote(facet="one_platform", value="yes", label="基盤はひとつ", platform="kubernetes", rule=serve, n=1),
        ],
    )  # fmt: skip
    answer = Answer(
        question="クラウドで学習と推論を同じ基盤で運用したい。どちらがよいですか？", answer="", backend="extractive",
        verdict=verdict, citations=[_cite(1), _cite(2)],
    )  # fmt: skip
    html = answer_view.answer_markdown(answer, key="a1", lang="ja")
    lines = re.findall(r"<li>(.*?)</li>", html[html.index('class="votes"') :].split("</ul>")[0])
    assert len(lines) == 2, lines  # one line per rule
    assert lines[1].startswith("学習と推論 · 基盤はひとつ → Kubernetes: LLM学習後、同一基盤で推論サービスも運用"), lines
    plain = answer_view.answer_plain(answer, "ja")
    assert plain.count("LLM学習後、同一基盤で推論サービスも運用 — CI/CD") == 1, plain  # the copy says it once too
    assert "- 学習と推論 · 基盤はひとつ → Kubernetes:" in plain


def test_a_rewritten_follow_up_shows_how_it_was_read_in_the_question_language() -> None:
    followup = NEAR_MISS.model_copy(
        update={"question": "And Volcano?", "resolved_question": "Which port does the Volcano admin API use?"}
    )
    md = answer_view.answer_markdown(followup, key="f", lang="ja")
    assert 'class="read-question"><b>Read as:</b> Which port does the Volcano admin API use?</div>' in md
    assert "_Read as: Which port does the Volcano admin API use?_" in answer_view.answer_plain(followup)
    ja = followup.model_copy(update={"language": "ja", "question": "Volcanoは？"})
    assert "質問の読み取り:</b> Which port" in answer_view.answer_markdown(ja, key="g", lang="en")
    # a question read as typed (spaces aside) shows no such line
    same = followup.model_copy(update={"resolved_question": " And  Volcano? "})
    assert "read-question" not in answer_view.answer_markdown(same, key="h")
    assert "Read as" not in answer_view.answer_plain(same)
