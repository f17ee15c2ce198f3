"""app.render: Answer → chat Markdown, sources, passages table, status line, errors (no server)."""

from __future__ import annotations

import re

import pytest

from app import render
from app.models import Answer, Citation, Passage
from ingest.store import IndexInfo, IndexMeta

XSS = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", '"><svg onload=alert(1)>']


def _cite(n: int, **kw: str) -> Citation:
    base = {
        "doc_id": f"doc-{n}",
        "chunk_id": f"doc-{n}#0",
        "title": f"Title {n}",
        "url": f"https://example.test/{n}",
        "section": "Costs › Nodes",
        "quote": f"Quoted text {n}.\nSecond line.",
    }
    base.update(kw)
    return Citation(n=n, **base)


def _answer(text: str, citations: list[Citation], **kw: object) -> Answer:
    return Answer(question="q", answer=text, citations=citations, **kw)


def _no_live_tags(html_text: str) -> None:
    """No tag outside the small set the renderer itself emits."""
    allowed = {"sup", "a", "div", "b", "em", "code", "details", "summary", "blockquote", "br", "sub"}
    for tag in re.findall(r"<\s*([a-zA-Z][a-zA-Z0-9]*)", html_text):
        assert tag.lower() in allowed, f"unexpected live tag <{tag}> in {html_text!r}"
    for tag in ("<script", "<img", "<svg"):
        assert tag not in html_text


def test_markers_become_links_to_source_anchors() -> None:
    ans = _answer("Alpha used 92% of GPUs [1]. Beta scales [2].", [_cite(1), _cite(2)])
    md = render.answer_markdown(ans, key="a3")
    assert '<sup class="cite"><a href="#src-a3-1"' in md
    assert '<a href="#src-a3-2"' in md
    assert 'id="src-a3-1"' in md and 'id="src-a3-2"' in md
    assert "[1]" in md and "Alpha used 92% of GPUs" in md


def test_unknown_marker_stays_plain_and_code_is_untouched() -> None:
    md = render.link_markers("See [7] and `arr[1]` here [1].", [_cite(1)], "k")
    assert "See [7]" in md
    assert "`arr[1]`" in md  # code span kept verbatim
    assert md.count("<sup") == 1


def test_sources_section_has_title_section_link_and_expandable_quote() -> None:
    md = render.answer_markdown(_answer("Text [1]", [_cite(1)]), key="x")
    assert "Sources · 出典" in md
    assert '<a href="https://example.test/1" target="_blank" rel="noopener noreferrer">Title 1</a>' in md
    assert "<em>Costs › Nodes</em>" in md
    assert "<details><summary>" in md and "Quoted text 1.<br>Second line." in md
    # Each source entry is one line: a blank line would end the HTML block in Markdown.
    entry = next(line for line in md.splitlines() if 'id="src-x-1"' in line)
    assert entry.endswith("</div>")


@pytest.mark.parametrize("payload", XSS)
def test_document_and_question_html_is_escaped(payload: str) -> None:
    cite = _cite(1, title=payload, section=payload, quote=payload, url="javascript:alert(1)")
    md = render.answer_markdown(_answer(f"Evidence {payload} [1]", [cite], verdict=payload), key="k")
    _no_live_tags(md)
    assert "javascript:" not in md
    assert "&lt;" in md
    q = render.question_markdown(f"Which one? {payload}")
    assert "<" not in q and "&lt;" in q


def test_escape_markdown_keeps_code_fences_and_markdown() -> None:
    src = (
        "**bold** <b>x</b>\n\n```yaml\nkind: <Gateway>\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n![img](http://x/y.png)"
    )
    out = render.escape_markdown(src)
    assert "**bold** &lt;b&gt;x&lt;/b&gt;" in out
    assert "kind: <Gateway>" in out  # inside a fence: the Markdown renderer escapes it
    assert "| 1 | 2 |" in out
    assert "![img]" not in out  # images are defused: no fetch triggered by a document


def test_japanese_text_and_partial_answer() -> None:
    ans = _answer("GPUを92%まで使い切った事例があります [1]", [_cite(1, title="ジョブスケジューラ比較メモ")])
    md = render.answer_markdown(ans, key="j", partial=True)
    assert "GPUを92%まで使い切った事例があります" in md and "ジョブスケジューラ比較メモ" in md
    assert render.answer_markdown(_answer("", []), key="e", partial=True).strip() == "…"


def test_refused_and_flagged_and_verdict() -> None:
    refused = render.answer_markdown(_answer("I can't answer that.", [], refused=True), key="r")
    assert "does not support an answer" in refused and "Sources" not in refused
    flagged = render.answer_markdown(_answer("X [1]", [_cite(1)], flagged=["X"]), key="f")
    assert "1 sentence(s) had no valid citation" in flagged
    with_verdict = render.answer_markdown(_answer("Because [1]", [_cite(1)], verdict="Slurm"), key="v")
    assert "**Verdict · 判定:** Slurm" in with_verdict
    already = render.answer_markdown(_answer("**Verdict: Slurm** [1]", [_cite(1)], verdict="Slurm"), key="v")
    assert "判定" not in already


def test_final_answer_shows_backend_and_latency() -> None:
    fast = render.answer_markdown(_answer("x", [], latency_ms=42.4, backend="ollama"), key="l")
    assert fast.endswith("<sub>ollama · 42 ms</sub>")
    assert "1.5 s" in render.answer_markdown(_answer("x", [], latency_ms=1500.0), key="l")
    assert "<sub>" not in render.answer_markdown(_answer("x", [], latency_ms=10.0), key="l", partial=True)


def test_passages_table_lists_scores_and_escapes_cells() -> None:
    passages = [
        Passage(chunk_id="a#0", doc_id="a", title="A | <b>", section="S", text="x" * 500, score=0.5, dense=0.81),
        Passage(chunk_id="b#0", doc_id="b", title="B", text="表 | 行", score=0.25, lexical=3.2),
    ]
    table = render.passages_markdown(passages)
    lines = table.splitlines()
    assert len(lines) == 4
    assert all(line.count("|") == lines[0].count("|") for line in lines)  # pipes in cells escaped
    assert "0.5000" in table and "0.810" in table and "3.20" in table and "–" in table
    assert "<b>" not in table and "…" in table
    assert "No passages" in render.passages_markdown([])


def test_status_line_states() -> None:
    info = IndexInfo(
        generation="advisor-g1",
        meta=IndexMeta(embedder="fake:128", chunker="v1", chunk_size=300, chunk_min=60),
        documents=2,
        chunks=9,
        updated_at="2026-11-29T10:00:00Z",
    )
    line = render.status_line(info)
    assert "**2** documents" in line and "**9** chunks" in line and "fake:128" in line
    assert "2026-11-29 10:00:00 UTC" in line
    assert "run `ingest`" in render.status_line(None)
    assert "Loading" in render.status_line(info, loading=True)
    assert "&lt;x&gt;" in render.status_error("server <x> down")


def test_error_messages() -> None:
    msg = render.question_error("Your question is too long.", 2000)
    assert "2000" in msg and msg.startswith("⚠️")
    assert msg.count("2000") == 2  # the limit, in both languages
    assert render.question_error("longer than 2000 characters", 2000).count("2000") == 1
    assert "(limit" not in render.question_error("the limit is 2,000.", 2000)
    assert "run `ingest`" in render.index_error("no index; run `ingest`")
    internal = render.internal_error(RuntimeError("/secret/path leaked"))
    assert "RuntimeError" in internal and "/secret/path" not in internal


def test_safe_url() -> None:
    assert render.safe_url("https://example.test/a?b=1") == "https://example.test/a?b=1"
    for bad in ("javascript:alert(1)", "/file=/etc/passwd", "data:text/html,x", 'https://x"onmouseover=1'):
        assert render.safe_url(bad) is None
