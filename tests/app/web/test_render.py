"""app.web.render and the chat message it builds with app.web.answer_view: markers, sources, passages, status line,
errors (no server)."""

from __future__ import annotations

import re

import pytest

from app.models import Answer, Citation, OriginalQuote, Passage, Verdict
from app.web import render
from app.web.answer_view import answer_markdown, answer_plain
from core.contract import IndexInfo, IndexMeta

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
    allowed = {"sup", "a", "div", "b", "em", "code", "details", "summary", "blockquote", "br", "sub", "span", "small"}
    allowed |= {"p", "ul", "ol", "li", "strong", "table", "thead", "tbody", "tr", "th", "td", "pre"}  # rendered quotes
    for tag in re.findall(r"<\s*([a-zA-Z][a-zA-Z0-9]*)", html_text):
        assert tag.lower() in allowed, f"unexpected live tag <{tag}> in {html_text!r}"
    for tag in ("<script", "<img", "<svg"):
        assert tag not in html_text


def test_markers_become_links_to_source_anchors() -> None:
    ans = _answer("Alpha used 92% of GPUs [1]. Beta scales [2].", [_cite(1), _cite(2)])
    md = answer_markdown(ans, key="a3")
    assert '<sup class="cite"><a href="#src-a3-1"' in md
    assert '<a href="#src-a3-2"' in md
    assert 'id="src-a3-1"' in md and 'id="src-a3-2"' in md
    assert "[1]" in md and "Alpha used 92% of GPUs" in md


def test_unknown_marker_stays_plain_and_code_is_untouched() -> None:
    md = render.document_html("See [7] and `arr[1]` here [1].\n\n```\nx[1]\n```", [_cite(1)], "k")
    assert "See [7]" in md
    assert "<code>arr[1]</code>" in md and "x[1]" in md  # code kept verbatim
    assert md.count("<sup") == 1


def test_sources_section_has_title_section_link_and_expandable_quote() -> None:
    md = answer_markdown(_answer("Text [1]", [_cite(1)]), key="x")
    assert "**Sources**" in md and "出典" not in md  # one language at a time
    # The title deep-links to the quoted passage (a text fragment of its first and last lines).
    link = (
        '<a class="src-title" href="https://example.test/1#:~:text=Quoted%20text%201.,Second%20line." target="_blank"'
    )
    assert link in md and 'rel="noopener noreferrer">Title 1</a>' in md
    assert "<em>Costs › Nodes</em>" in md
    assert "<details><summary>" in md and "<p>Quoted text 1.<br>Second line.</p>" in md
    # Each source entry is one line: a blank line would end the HTML block in Markdown.
    entry = next(line for line in md.splitlines() if 'id="src-x-1"' in line)
    assert entry.endswith("</div>")


@pytest.mark.parametrize("payload", XSS)
def test_document_and_question_html_is_escaped(payload: str) -> None:
    cite = _cite(1, title=payload, section=payload, quote=payload, url="javascript:alert(1)")
    verdict = Verdict(value="slurm", summary=f"{payload} [1]", changes=[payload])
    md = answer_markdown(_answer(f"Evidence {payload} [1]", [cite], verdict=verdict), key="k")
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
    md = answer_markdown(ans, key="j", partial=True)
    assert "GPUを92%まで使い切った事例があります" in md and "ジョブスケジューラ比較メモ" in md
    unfinished = answer_markdown(_answer("", []), key="e", partial=True)
    assert "<p>…</p>" in unfinished and unfinished.endswith(render.NO_RATE)  # shown, but not to be rated


def test_refusal_is_said_once_and_flagged_is_noted() -> None:
    refused = answer_markdown(_answer("I cannot answer that from the knowledge base.", [], refused=True), key="r")
    assert refused.lower().count("cannot answer") == 1 and "does not support" not in refused
    assert "Sources" not in refused
    flagged = answer_markdown(_answer("X [1]", [_cite(1)], flagged=["X"]), key="f")
    assert "1 sentence(s) of the model's answer had no valid citation and were left out" in flagged


def test_verdict_is_rendered_from_the_verdict_object() -> None:
    verdict = Verdict(value="kubernetes", read_as=["cloud"], changes=["a fixed fleet would favour Slurm [1]"])
    md = answer_markdown(_answer("Because [2]", [_cite(1), _cite(2), _cite(3)], verdict=verdict, backend="openai"), "v")
    assert '<span class="verdict verdict-kubernetes">Kubernetes</span>' in md
    assert "What would change it" in md and "A fixed fleet would favour Slurm" in md
    ja = answer_markdown(
        _answer("理由 [2]", [_cite(2)], verdict=verdict, language="ja", backend="openai"), "v", lang="en"
    )
    assert "判定" in ja and "判定が変わる条件" in ja and "Verdict" not in ja  # the question's language frames it


def test_markers_in_order_and_stray_bullets_dropped() -> None:
    assert render.order_markers("a [3] [1] b [2][2]") == "a [1] [3] b [2]"
    assert render.tidy("- one [1]\n-\n## Heading\n* \ntext") == "- one [1]\n## Heading\ntext"
    md = render.cited_html("x [3] [1]", [_cite(1), _cite(3)], "k")
    assert md.index("#src-k-1") < md.index("#src-k-3")


def test_translation_and_paraphrased_badges() -> None:
    original = OriginalQuote(
        doc_id="orig-en", section="Costs", quote="The original words.", link="https://o.test/#:~:text=x"
    )
    translated = _cite(1, translation_of="orig-en").model_copy(update={"verbatim": False, "original": original})
    md = render.sources_markdown([translated], "t")
    assert "translation" in md and "paraphrased" not in md
    assert "The original words." in md and 'href="https://o.test/#:~:text=x"' in md
    stale = translated.model_copy(update={"stale": True})
    assert "out of date" in render.sources_markdown([stale], "t")
    notes = _cite(2).model_copy(update={"verbatim": False})
    md = render.sources_markdown([notes], "t")
    assert "paraphrased notes" in md and "translation" not in md
    assert ":~:text=" not in md  # the notes' wording is not on the page: no text fragment


def test_pipeline_link_is_preferred_and_unsafe_links_ignored() -> None:
    cite = _cite(1).model_copy(update={"link": "https://example.test/1#:~:text=given"})
    assert 'href="https://example.test/1#:~:text=given"' in render.sources_markdown([cite], "k")
    bad = _cite(1).model_copy(update={"link": "javascript:alert(1)"})
    assert "javascript:" not in render.sources_markdown([bad], "k")


def test_plain_copy_text_has_markers_and_source_list() -> None:
    ans = _answer("GPUs at 92% [1].", [_cite(1)], verdict=Verdict(value="slurm", read_as=["on-prem"]), backend="x")
    plain = answer_plain(ans)
    assert "<" not in plain and "GPUs at 92% [1]." in plain
    assert plain.startswith("**Verdict: Slurm** — Read as: on-prem\n")
    assert "[1] Title 1 — Costs › Nodes — https://example.test/1#:~:text=" in plain
    message = render.with_copy_text("<b>x</b>", plain)
    encoded = re.search(r"<!--plain:([A-Za-z0-9+/=]+)-->$", message)
    assert encoded is not None
    import base64

    assert base64.b64decode(encoded.group(1)).decode("utf-8") == plain


def test_final_answer_shows_backend_and_latency() -> None:
    fast = answer_markdown(_answer("x", [], latency_ms=42.4, backend="ollama"), key="l")
    assert fast.endswith("<sub>Ollama · 42 ms</sub>")
    assert "1.5 s" in answer_markdown(_answer("x", [], latency_ms=1500.0), key="l")
    assert "<sub>" not in answer_markdown(_answer("x", [], latency_ms=10.0), key="l", partial=True)


def test_passages_panel_renders_markdown_links_and_explains_scores() -> None:
    passages = [
        Passage(
            chunk_id="a#0", doc_id="a", title="A | <b>", url="https://example.test/a", section="S",
            text="Use `kubectl` and **Kueue**.\n\n| k | v |\n|---|---|\n| 1 | 2 |\n" + "word " * 200,
            score=0.5, dense=0.81,
        ),
        Passage(chunk_id="b#0", doc_id="b", title="B", text="表 | 行", score=0.25, lexical=3.2, verbatim=False),
    ]  # fmt: skip
    md = render.passages_markdown(passages)
    assert "Relevance" in md and "semantic similarity" in md and "BM25" in md  # the scores are explained
    assert "0.5000" in md and "0.810" in md and "3.20" in md and "–" in md
    assert "&#96;" not in md and "<code>kubectl</code>" in md and "<strong>Kueue</strong>" in md  # rendered
    assert "<th>k</th>" in md and "<td>1</td>" in md  # tables as tables
    assert "word " * 199 + "word" in md and "word…" not in md  # the whole passage, not a truncated cell
    assert '<a href="https://example.test/a#:~:text=' in md  # the source is a deep link
    assert "A | &lt;b&gt;" in md and "<b>A" not in md
    assert "paraphrased" in md
    assert "No passages" in render.passages_markdown([])
    _no_live_tags(md.replace("<small>", "").replace("</small>", ""))


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
    assert "stale" not in line
    stale = info.model_copy(update={"translations_stale": ["slurm-vs-k8s-article-en"]})
    assert render.status_line(stale).endswith("· ⚠️ 1 translation is stale: slurm-vs-k8s-article-en")
    unaligned = stale.model_copy(update={"translations_unaligned": {"slurm-vs-k8s-article-en": ["9. 追記", "<b>"]}})
    assert render.status_line(unaligned).endswith(
        "1 translation is stale: slurm-vs-k8s-article-en; 2 of its sections are not indexed until it is "
        "re-translated (9. 追記, &lt;b&gt;)"
    )
    one = stale.model_copy(update={"translations_unaligned": {"slurm-vs-k8s-article-en": ["9. 追記"]}})
    assert "; 1 of its sections is not indexed until it is re-translated (9. 追記)" in render.status_line(one)
    two = unaligned.model_copy(update={"translations_stale": ["slurm-vs-k8s-article-en", "b-en"]})
    assert "2 translations are stale: slurm-vs-k8s-article-en, b-en; 2 of their sections" in render.status_line(two)
    ja = render.status_line(unaligned, lang="ja")
    assert "文書 **2** 件" in ja and "古い翻訳が 1 件あります" in ja and "再翻訳するまで 2 セクション" in ja
    assert "documents" not in ja


def test_error_messages() -> None:
    msg = render.question_error("Your question is too long.", 2000)
    assert "2000" in msg and msg.startswith("⚠️")
    assert msg.count("2000") == 1 and "limit" in msg
    assert "上限 2000 文字" in render.question_error("長すぎます。", 2000, lang="ja")
    assert render.question_error("longer than 2000 characters", 2000).count("2000") == 1
    assert "(limit" not in render.question_error("the limit is 2,000.", 2000)
    assert "run `ingest`" in render.index_error("no index; run `ingest`")
    internal = render.internal_error()
    assert "went wrong" in internal and "RuntimeError" not in internal and "/secret/path" not in internal
    llm = render.llm_error()
    assert "not reachable" in llm and "Extractive" in llm and "vllm" not in llm and "http" not in llm


def test_safe_url() -> None:
    assert render.safe_url("https://example.test/a?b=1") == "https://example.test/a?b=1"
    for bad in ("javascript:alert(1)", "/file=/etc/passwd", "data:text/html,x", 'https://x"onmouseover=1'):
        assert render.safe_url(bad) is None
