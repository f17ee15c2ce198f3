"""Properties of the structure-aware chunker (pure, no models).

No text is lost; tables, list items and code blocks stay whole when they fit; long blocks are cut only
at row, line or sentence boundaries; every chunk respects ``max_chars`` and the ``fits`` predicate;
sections carry the heading path. Hypothesis throws arbitrary Unicode (control characters included),
huge lines and deep lists at it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import FIXTURE_CORPUS

from core.settings import Settings
from core.text import split_sentences
from ingest.chunking import RawChunk, chunk_markdown, headings, parse_blocks
from ingest.documents import parse_document
from ingest.indexer import chunk_document, embed_text

FIXTURES = FIXTURE_CORPUS
# No example database: tests must not write into the working tree.
FAST = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# --- an oracle for "no text lost", written from the CommonMark rules, not from the chunker's code --------
# Lines end at \n, \r\n or \r (a form feed or U+2028 is text); an ATX heading has at most three spaces of
# indentation; a fence opens with at most three spaces, three or more backticks (no backtick in its info
# string) or tildes, and closes with a run of the same character at least as long and nothing after it.
# Containers are not modelled: a fence inside a list item is not one the generators below can write.
_LINE_END = re.compile(r"\r\n|\r|\n")
_FENCE = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def squash(text: str) -> str:
    """The text without any whitespace: chunking may re-flow whitespace, never other characters."""
    return "".join(ch for ch in text if not ch.isspace())


def closes(line: str, fence: str) -> bool:
    return bool(re.fullmatch(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", line))


def body_without_headings(body: str) -> str:
    """The body minus its heading lines (headings travel as ``section``); '# x' inside code is text."""
    kept: list[str] = []
    fence: str | None = None
    for line in _LINE_END.split(body):
        if fence is not None:
            if closes(line, fence):
                fence = None
        elif opening := _FENCE.match(line):
            fence = opening.group(1)
        elif _HEADING_LINE.match(line):
            continue
        kept.append(line)
    return "\n".join(kept)


def is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)


def assert_no_text_lost(body: str, chunks: list[RawChunk]) -> None:
    """Every non-space character of the body (minus headings) appears in the chunks, in order.

    A subsequence rather than equality because a cut table or code block repeats its header or fence.
    """
    source = squash(body_without_headings(body))
    joined = "".join(squash(c.text) for c in chunks)
    assert is_subsequence(source, joined), f"text lost: {source[:200]!r} vs {joined[:200]!r}"


def assert_within_limits(chunks: list[RawChunk], max_chars: int, fits: Callable[[str], bool] | None = None) -> None:
    for chunk in chunks:
        assert chunk.text.strip(), "a chunk of pure whitespace"
        assert len(chunk.text) <= max_chars, f"{len(chunk.text)} > {max_chars}: {chunk.text[:80]!r}"
        if fits is not None:
            assert fits(chunk.text), f"chunk fails `fits`: {chunk.text[:80]!r}"


def fake_tokens(text: str) -> int:
    """A stand-in token counter: ASCII words count one each, every other visible character one."""
    return len(re.findall(r"[A-Za-z0-9]+|\S", text))


# --- sections ---------------------------------------------------------------------------------------


def test_fixture_documents_keep_their_section_titles() -> None:
    ja = parse_document((FIXTURES / "scheduler-ja.md").read_bytes(), "scheduler-ja.md")
    en = parse_document((FIXTURES / "gateway-en.md").read_bytes(), "gateway-en.md")
    ja_chunks = chunk_markdown(ja.body, 300, 60)
    en_chunks = chunk_markdown(en.body, 300, 60)
    assert [c.section for c in ja_chunks] == ["1. 概要", "2. 費用", "3. 推奨"]
    assert [c.section for c in en_chunks] == ["Installing", "Upgrades", "Troubleshooting"]
    for doc, chunks in ((ja, ja_chunks), (en, en_chunks)):
        assert_no_text_lost(doc.body, chunks)
        assert_within_limits(chunks, 300)


def test_heading_paths_nest_and_the_single_h1_is_dropped() -> None:
    body = "# Doc\n\nintro\n\n## A\n\ntext a\n\n### B\n\ntext b\n\n## C\n\ntext c\n"
    chunks = chunk_markdown(body, 500, 0)
    assert [(c.section, c.text) for c in chunks] == [
        ("", "intro"),
        ("A", "text a"),
        ("A > B", "text b"),
        ("C", "text c"),
    ]
    kept = chunk_markdown(body, 500, 0, drop_single_h1=False)
    assert [c.section for c in kept] == ["Doc", "Doc > A", "Doc > A > B", "Doc > C"]
    two_h1 = chunk_markdown("# One\n\nx\n\n# Two\n\ny\n", 500, 0)
    assert [c.section for c in two_h1] == ["One", "Two"]


def test_sections_are_never_mixed_even_when_tiny() -> None:
    chunks = chunk_markdown("## 2. 費用\n\n安い。\n\n## Upgrades\n\nOften.\n", 600, 500)
    assert [(c.section, c.text) for c in chunks] == [("2. 費用", "安い。"), ("Upgrades", "Often.")]


def test_hash_in_a_title_and_hashes_in_code_are_not_headings() -> None:
    body = "## Using C#\n\nFast.\n\n```sh\n# install it\nmake\n```\n\n### Done ###\n\nEnd.\n"
    assert headings(body) == [(2, "Using C#"), (3, "Done")]
    chunks = chunk_markdown(body, 500, 100)
    assert [c.section for c in chunks] == ["Using C#", "Using C# > Done"]
    assert "# install it" in chunks[0].text
    assert_no_text_lost(body, chunks)


def test_a_tilde_fence_inside_a_backtick_block_does_not_hide_the_h1() -> None:
    # The H1 count must use the same fence rules as the parser, or the only H1 shows up in every path.
    body = "# Title\n\n```\n~~~\n```\n\n## Part\n\ntext\n"
    assert [c.section for c in chunk_markdown(body, 500, 0)] == ["", "Part"]


def test_a_setext_underline_and_an_empty_heading_stay_text() -> None:
    # sections come from ATX headings with a title; "text\n---" in a converted page is more often a rule
    body = "## A\n\nLine above\n---\n\n#\n\nafter\n"
    assert headings(body) == [(2, "A")]
    chunks = chunk_markdown(body, 500, 0)
    assert [c.section for c in chunks] == ["A"]
    assert "Line above\n---" in chunks[0].text and "#" in chunks[0].text
    assert_no_text_lost(body, chunks)


def test_blocks_are_verbatim_slices_of_the_body() -> None:
    body = "Intro\r\nsecond line\r\n\r\n- item\r\n  more\r\n\r\n[ref]: https://x.test\r\n"
    blocks = parse_blocks(body)
    assert [(b.kind, b.text) for b in blocks] == [
        ("text", "Intro\r\nsecond line"),
        ("list", "- item\r\n  more"),
        ("text", "[ref]: https://x.test"),  # a link definition is kept, as text
    ]
    assert all(b.text in body for b in blocks)


# --- tables -----------------------------------------------------------------------------------------

HEADER = "| name | value |"
SEP = "|---|---|"


def table(rows: list[str]) -> str:
    return "\n".join([HEADER, SEP, *rows])


def assert_table_cut_cleanly(rows: list[str], chunks: list[RawChunk]) -> None:
    """Each row appears whole, once, in order; every chunk holding rows starts them with header + separator."""
    seen: list[str] = []
    for chunk in chunks:
        lines = chunk.text.split("\n")
        row_positions = [i for i, line in enumerate(lines) if line in rows]
        if not row_positions:
            continue
        first = row_positions[0]
        assert first >= 2 and lines[first - 2] == HEADER and lines[first - 1] == SEP, chunk.text
        seen.extend(lines[i] for i in row_positions)
    assert seen == rows


def test_a_small_table_stays_whole_with_its_text() -> None:
    rows = [f"| r{i} | {i * 7} |" for i in range(4)]
    body = "## 2. 費用\n\n" + table(rows) + "\n\n保守はAlphaのほうが簡単です。\n"
    chunks = chunk_markdown(body, 300, 60)
    assert len(chunks) == 1 and chunks[0].kind == "table"
    assert chunks[0].text.startswith(table(rows))


def test_a_long_table_is_cut_between_rows_with_the_header_repeated() -> None:
    rows = [f"| row {i:02d} | value {i * 13} |" for i in range(40)]
    body = "Intro sentence.\n\n" + table(rows) + "\n\nAfter the table.\n"
    chunks = chunk_markdown(body, 200, 40)
    assert len([c for c in chunks if c.kind == "table"]) >= 4  # the cut really happened
    assert_table_cut_cleanly(rows, chunks)
    assert_within_limits(chunks, 200)
    assert_no_text_lost(body, chunks)


def test_a_wide_padded_table_drops_its_padding_so_every_piece_has_header_and_rows() -> None:
    cols = [f"Column{i}" for i in range(12)]
    header = "| Feature" + " " * 60 + " | " + " | ".join(c.ljust(14) for c in cols) + " |"
    sep = "|" + "-" * 69 + "|" + "|".join("-" * 16 for _ in cols) + "|"
    rows = [
        f"| Feature number {n}" + " " * 50 + " | " + " | ".join("+".ljust(14) for _ in cols) + " |" for n in range(6)
    ]
    table = "\n".join([header, sep, *rows])
    assert len(header) + len(sep) > 400  # the padded header alone would fill a chunk
    chunks = chunk_markdown(table, max_chars=400, min_chars=50)
    assert len(chunks) > 1
    for c in chunks:
        lines = c.text.split("\n")
        assert lines[0].startswith("| Feature | Column0 | Column1")
        assert lines[1].startswith("|---|---|")
        assert len(lines) >= 3 and all(line.startswith("| Feature number") for line in lines[2:])
    found = [line for c in chunks for line in c.text.split("\n")[2:]]
    assert [line.split(" | ")[0] for line in found] == [f"| Feature number {n}" for n in range(6)]


_CELL = st.text(alphabet=st.sampled_from("abc xyz0123 日本語。"), min_size=1, max_size=25)


@FAST
@given(cells=st.lists(_CELL, min_size=1, max_size=30), slack=st.integers(0, 300))
def test_property_table_rows_never_split(cells: list[str], slack: int) -> None:
    rows = [f"| r{i} | {cell.strip() or 'x'} |" for i, cell in enumerate(cells)]
    max_chars = len(HEADER) + len(SEP) + max(len(r) for r in rows) + 2 + slack
    body = "## T\n\n" + table(rows) + "\n"
    chunks = chunk_markdown(body, max_chars, 10)
    assert_table_cut_cleanly(rows, chunks)
    assert_within_limits(chunks, max_chars)


# --- lists and code ---------------------------------------------------------------------------------


def test_list_items_stay_whole_when_they_fit() -> None:
    items = [
        f"- item {i}: " + " ".join(["word"] * (3 + (i * 7) % 20)) + ("\n  continued here." if i % 3 == 0 else "")
        for i in range(25)
    ]
    body = "## Steps\n\n" + "\n".join(items) + "\n"
    chunks = chunk_markdown(body, 180, 40)
    assert len(chunks) > 3
    for item in items:
        assert sum(item in c.text for c in chunks) == 1, item
    assert_within_limits(chunks, 180)


def test_nested_sub_items_belong_to_their_parent_item() -> None:
    body = "1. Parent one\n   - child a\n   - child b\n2. Parent two\n"
    blocks = parse_blocks(body)
    assert [b.text for b in blocks] == ["1. Parent one\n   - child a\n   - child b", "2. Parent two"]
    assert all(b.kind == "list" for b in blocks)


def test_a_code_block_that_fits_stays_whole() -> None:
    code = "```yaml\napiVersion: v1\nkind: Gateway\nspec:\n  replicas: 3\n```"
    body = "Text before. " * 15 + "\n\n" + code + "\n\n" + "Text after. " * 15
    chunks = chunk_markdown(body, 250, 60)
    holding = [c for c in chunks if code in c.text]
    assert len(holding) == 1 and holding[0].kind == "code"
    assert_within_limits(chunks, 250)


def test_a_paragraph_announcing_a_code_block_goes_into_its_chunk() -> None:
    # the code block starts a chunk of its own; the paragraph that announces it must not stay behind
    lead_in = "To disable it, the kubelet must be started with the following flags:"
    code = "```\n--feature-gates=KubeletPodResourcesGet=false\n```"
    body = "The endpoint is enabled by default. " * 5 + "\n\n" + lead_in + "\n\n" + code
    chunks = chunk_markdown(body, 300, 60)
    holding = [c for c in chunks if code in c.text]
    assert len(holding) == 1 and holding[0].text.startswith(lead_in)
    assert all(not c.text.rstrip().endswith(":") for c in chunks)
    assert_within_limits(chunks, 300)


@pytest.mark.parametrize(
    ("after", "kind"),
    [
        ("| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 8, "table"),
        ("\n".join(f"- item {n} of the list, written long enough to need a chunk" for n in (1, 2)), "list"),
        ("```\n" + "run a step\n" * 8 + "```", "code"),
    ],
)
def test_an_announcement_in_either_language_travels_with_its_block(after: str, kind: str) -> None:
    for lead_in in ("Some example configurations are shown below.", "設定例は次のとおりです："):
        body = "本文の段落です。" * 15 + "\n\n" + lead_in + "\n\n" + after
        chunks = chunk_markdown(body, 200, 60)
        holding = next(c for c in chunks if after.splitlines()[0] in c.text)
        assert lead_in in holding.text and holding.kind == kind, (lead_in, [c.text for c in chunks])


def test_an_announcement_that_does_not_fit_with_its_block_stays_where_it_is() -> None:
    lead_in = "Here is the whole manifest:"
    code = "```yaml\n" + "\n".join(f"key{i}: value{i}" for i in range(12)) + "\n```"
    body = "Intro sentence. " * 10 + "\n\n" + lead_in + "\n\n" + code
    chunks = chunk_markdown(body, len(code) + 5, 60)
    assert any(c.text.endswith(lead_in) for c in chunks)
    assert any(c.text == code for c in chunks)
    assert_within_limits(chunks, len(code) + 5)


def test_a_paragraph_that_announces_nothing_stays_in_its_chunk() -> None:
    code = "```\n" + "\n".join(f"run step {i}" for i in range(8)) + "\n```"
    body = "Plain words. " * 12 + "\n\nIt is fast.\n\n" + code
    chunks = chunk_markdown(body, 300, 60)
    assert [c.text for c in chunks][1:] == [code] and chunks[0].text.endswith("It is fast.")


def test_an_oversized_code_block_is_cut_between_lines_with_fences_repeated() -> None:
    lines = [f"echo step-{i:03d}" for i in range(60)]
    body = "```bash\n" + "\n".join(lines) + "\n```\n"
    chunks = chunk_markdown(body, 150, 0)
    assert len(chunks) > 3
    inner: list[str] = []
    for chunk in chunks:
        parts = chunk.text.split("\n")
        assert parts[0] == "```bash" and parts[-1] == "```", chunk.text
        inner.extend(parts[1:-1])
    assert inner == lines
    assert_within_limits(chunks, 150)


def test_a_list_step_keeps_its_command() -> None:
    body = (
        "Set it up as follows:\n\n"
        '1. Create the wrapper script\n\n   ```\n   #!/bin/bash\n   exec runc "$@"\n   ```\n'
        "2. Make it executable\n\n   ```\n   chmod +x /opt/run\n   ```\n"
    )
    blocks = parse_blocks(body)
    assert [b.kind for b in blocks] == ["text", "list", "list"]
    assert blocks[1].text.startswith("1. Create") and blocks[1].text.endswith("   ```")
    chunks = chunk_markdown(body, 90, 10)
    holding = [c for c in chunks if "chmod +x" in c.text]
    assert len(holding) == 1 and "2. Make it executable" in holding[0].text


def test_an_oversized_step_is_cut_around_its_code_with_fences_kept() -> None:
    code = [f"   echo step-{i:02d}" for i in range(30)]
    body = "1. Run these commands in order:\n\n   ```sh\n" + "\n".join(code) + "\n   ```\n\n   Then check the log.\n"
    chunks = chunk_markdown(body, 160, 0)
    assert chunks[0].kind == "list" and chunks[0].text == "1. Run these commands in order:"
    pieces = [c.text.split("\n") for c in chunks if c.kind == "code"]
    assert len(pieces) > 2
    inner: list[str] = []
    for lines in pieces:  # each piece opens and closes its fence; the last one packs the text after it
        assert lines[0] == "   ```sh" and "   ```" in lines
        inner.extend(lines[1 : lines.index("   ```")])
    assert inner == code
    assert chunks[-1].text.endswith("   ```\n\n   Then check the log.")
    assert_no_text_lost(body, chunks)
    assert_within_limits(chunks, 160)


def test_an_indented_code_block_is_code_and_is_cut_without_fences() -> None:
    lines = [f"    line {i:02d} of the listing" for i in range(12)]
    body = "Text before.\n\n" + "\n".join(lines) + "\n"
    assert [b.kind for b in parse_blocks(body)] == ["text", "code"]
    chunks = chunk_markdown(body, 120, 0)
    code = [c for c in chunks if c.kind == "code"]
    assert len(code) > 1 and [line for c in code for line in c.text.split("\n")] == lines


# --- sentences --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("", []),
        ("一文だけ", ["一文だけ"]),
        ("速い。安い！本当？", ["速い。", "安い！", "本当？"]),
        ("GPUを使う。速い！ Next one. Done", ["GPUを使う。", "速い！", " Next one. ", "Done"]),
        ("Version 1.2 is out. Really!", ["Version 1.2 is out. ", "Really!"]),
        ("Run workloads (e.g. AI/ML inference). Next.", ["Run workloads (e.g. AI/ML inference). ", "Next."]),
        ("Pick one, i.e. YES, NO or FORCE:2. Done", ["Pick one, i.e. YES, NO or FORCE:2. ", "Done"]),
        ("Slurm vs. Kubernetes.", ["Slurm vs. Kubernetes."]),
        ("Logs, caches, etc. are kept. Then", ["Logs, caches, etc. are kept. ", "Then"]),
        ("Logs, caches, etc. Then", ["Logs, caches, etc. ", "Then"]),
        ("Keep the age.G. Next", ["Keep the age.G. ", "Next"]),
        ("😀。😀", ["😀。", "😀"]),
    ],
)
def test_split_sentences_keeps_every_character(text: str, pieces: list[str]) -> None:
    assert split_sentences(text) == pieces
    assert "".join(split_sentences(text)) == text


_JA = st.text(alphabet=st.sampled_from("あいうえおかきくけこ日本語学習基盤通信設定GPU"), min_size=3, max_size=40)
_JA_SENTENCE = st.tuples(_JA, st.sampled_from("。！？")).map("".join)


@FAST
@given(sentences=st.lists(_JA_SENTENCE, min_size=2, max_size=40), extra=st.integers(0, 120))
def test_property_a_long_japanese_paragraph_splits_only_after_sentence_marks(sentences: list[str], extra: int) -> None:
    paragraph = "".join(sentences)
    max_chars = max(len(s) for s in sentences) + extra
    chunks = chunk_markdown(paragraph, max_chars, 0)
    assert squash("".join(c.text for c in chunks)) == paragraph
    for chunk in chunks:
        assert chunk.text.rstrip()[-1] in "。！？", chunk.text
    assert_within_limits(chunks, max_chars)
    if len(paragraph) > max_chars:
        assert len(chunks) > 1


def test_a_long_japanese_paragraph_is_cut_at_sentence_ends() -> None:
    paragraph = "".join(f"第{i}の設定は通信の速さに効きます{'。！？'[i % 3]}" for i in range(30))
    chunks = chunk_markdown(paragraph, 100, 0)
    assert len(chunks) >= 5
    assert "".join(c.text for c in chunks) == paragraph
    assert all(c.text[-1] in "。！？" for c in chunks)


def test_a_sentence_longer_than_the_limit_is_cut_without_losing_text() -> None:
    body = "あ" * 1000 + "。"
    chunks = chunk_markdown(body, 120, 0)
    assert "".join(c.text for c in chunks) == body
    assert_within_limits(chunks, 120)


# --- the fits predicate (token limits) --------------------------------------------------------------


def test_every_chunk_passes_a_token_counter_tighter_than_max_chars() -> None:
    doc = parse_document((FIXTURES / "scheduler-ja.md").read_bytes(), "scheduler-ja.md")
    body = doc.body + "\n\n## 4. 補足\n\n" + "長い説明文です。" * 60 + "\n"

    def fits(text: str) -> bool:
        return fake_tokens(text) <= 40

    chunks = chunk_markdown(body, 10_000, 0, fits)
    assert len(chunks) > len(chunk_markdown(body, 10_000, 0))  # the predicate, not max_chars, cut them
    assert_within_limits(chunks, 10_000, fits)
    assert_no_text_lost(body, chunks)


def test_fits_judges_the_section_prefix_together_with_the_chunk() -> None:
    section = "A very long section heading " * 3
    body = f"## {section.strip()}\n\n" + "word " * 200

    def fits(text: str) -> bool:
        return fake_tokens(text) <= 50

    def prefix(sec: str) -> str:
        return f"Title — {sec}\n"

    chunks = chunk_markdown(body, 10_000, 0, fits, prefix=prefix)
    assert all(fits(prefix(c.section) + c.text) for c in chunks)
    assert_no_text_lost(body, chunks)


def test_chunk_document_keeps_the_embedded_text_within_the_model_limit(tmp_path: Path) -> None:
    # What the model sees is embed_text(chunk): title + section path + text, so all of it must fit.
    raw = (
        "---\nid: long-sections\ntitle: Distributed training platform comparison notes\n---\n\n"
        "## Scheduling > gang scheduling and topology-aware placement on large clusters\n\n"
        + "Jobs wait until every worker can start. "
        * 40
    ).encode()
    doc = parse_document(raw, "long-sections.md")
    settings = Settings().with_(corpus_dir=tmp_path, index_dir=tmp_path / "i", chunk_size=2000)

    def fits(text: str) -> bool:
        return fake_tokens(text) <= 64

    chunks = chunk_document(doc, settings, fits)
    assert len(chunks) > 1
    assert all(fits(embed_text(c)) for c in chunks), [fake_tokens(embed_text(c)) for c in chunks]


# --- robustness: tiny, odd and huge inputs ----------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    ["", " ", "\n\n", "a", "😀", "日本語", "#", "# ", "|", "```", "- ", ">", "\x00", "\u2028", "👩‍👩‍👧‍👦" * 3],
)
def test_tiny_inputs(body: str) -> None:
    chunks = chunk_markdown(body, 100, 20)
    assert_no_text_lost(body, chunks)
    assert_within_limits(chunks, 100)
    if not body.strip():
        assert chunks == []


def test_a_cut_never_leaves_a_whitespace_chunk() -> None:
    # Found by hypothesis: the hard cut of 'aaaa...## ## ' left a chunk holding one space.
    chunks = chunk_markdown("aaaaaaaaaaaaa- ## ## ", 20, 10)
    assert [c.text for c in chunks] == ["aaaaaaaaaaaaa- ## ##"]


def test_a_huge_single_line_is_cut_to_the_limit() -> None:
    line = ("GPU利用率 0123456789 abcdef " * 8000).replace(" ", "")  # ~200k chars, no sentence end
    chunks = chunk_markdown(line, 600, 120)
    assert "".join(c.text for c in chunks) == line
    assert len(chunks) == -(-len(line) // 600)
    assert_within_limits(chunks, 600)


_MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            "a",
            "b ",
            "日本",
            "。",
            ". ",
            "!",
            "?",
            "#",
            "## ",
            "|",
            "| a | b |",
            "|---|---|",
            "-",
            "- ",
            "  - ",
            "1. ",
            "* ",
            ">",
            "```",
            "~~~",
            "`",
            "\n",
            "\n\n",
            "\t",
            "\r",
            "\x0b",
            "\x1c",
            "\u2028",
            "\x00",
            "😀",
        ]
    ),
    max_size=150,
).map("".join)


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=_MARKDOWNISH, max_chars=st.integers(10, 200), min_chars=st.integers(0, 100))
def test_property_markdownish_noise_loses_nothing(body: str, max_chars: int, min_chars: int) -> None:
    chunks = chunk_markdown(body, max_chars, min_chars)
    assert_no_text_lost(body, chunks)
    assert_within_limits(chunks, max_chars)


@FAST
@given(body=st.text(max_size=2000), max_chars=st.integers(1, 400))
def test_property_arbitrary_unicode_never_crashes_or_loses_text(body: str, max_chars: int) -> None:
    chunks = chunk_markdown(body, max_chars, 0)
    assert_no_text_lost(body, chunks)
    assert_within_limits(chunks, max_chars)


@FAST
@given(
    body=st.text(alphabet=st.characters(codec="utf-8"), max_size=500),
    limit=st.integers(5, 60),
)
def test_property_any_text_passes_a_token_predicate(body: str, limit: int) -> None:
    def fits(text: str) -> bool:
        return fake_tokens(text) <= limit

    chunks = chunk_markdown(body, 10_000, 0, fits)
    assert_no_text_lost(body, chunks)
    assert_within_limits(chunks, 10_000, fits)


@FAST
@given(
    length=st.integers(1_000, 60_000),
    char=st.sampled_from(["x", "あ", "😀", " ", "|", "\x07"]),
    max_chars=st.integers(50, 800),
)
def test_property_huge_single_lines(length: int, char: str, max_chars: int) -> None:
    body = ("start" + char * length + "end").replace("\n", "")
    chunks = chunk_markdown(body, max_chars, 0)
    assert_no_text_lost(body, chunks)
    assert_within_limits(chunks, max_chars)


@FAST
@given(
    depths=st.lists(st.integers(0, 40), min_size=1, max_size=60),
    marker=st.sampled_from(["-", "*", "1."]),
    max_chars=st.integers(40, 400),
)
def test_property_deeply_nested_lists(depths: list[int], marker: str, max_chars: int) -> None:
    lines = [f"{'  ' * d}{marker} item {i} at depth {d}" for i, d in enumerate(depths)]
    body = "## Nested\n\n" + "\n".join(lines) + "\n"
    chunks = chunk_markdown(body, max_chars, 20)
    assert_no_text_lost(body, chunks)
    assert_within_limits(chunks, max_chars)
    assert {c.section for c in chunks} == {"Nested"}
    for line in lines:  # short items stay whole
        if len(line) <= max_chars:
            assert any(line.strip() in c.text for c in chunks), line


@FAST
@given(
    titles=st.lists(
        st.text(alphabet=st.sampled_from("abc 日本 2.費用"), min_size=1, max_size=12), min_size=1, max_size=8
    ),
    levels=st.lists(st.integers(2, 4), min_size=8, max_size=8),
)
def test_property_every_heading_with_text_under_it_names_a_section(titles: list[str], levels: list[int]) -> None:
    titles = [t.strip() or "x" for t in titles]
    body = "".join(f"{'#' * levels[i]} {t}\n\nbody {i} text.\n\n" for i, t in enumerate(titles))
    chunks = chunk_markdown(body, 300, 0)
    sections = [c.section for c in chunks]
    for i, title in enumerate(titles):
        holding = [c for c in chunks if f"body {i} text." in c.text]
        assert len(holding) == 1
        assert holding[0].section.split(" > ")[-1] == title, (title, sections)
    assert_no_text_lost(body, chunks)
