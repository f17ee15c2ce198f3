"""core.markdown: the one Markdown reader (pure): blocks with their source lines, inline text, table rows."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import markdown as md
from core.markdown import Block, code_block, inline_text, is_delimiter_row, is_link_only, parse, source, walk

DOC = """# Title

Intro line one
continued here.

- first item
  wrapped
  - nested item
- second item

   ```yaml
   a: 1
   ```

| Name | Value |
|---|:---:|
| `a\\|b` | **2** |
| c |

> quoted *text*
> - quoted item

    indented code

[ref]: https://example.test/ref

<div>
raw html
</div>

Setext title
------------

***
"""


def _kinds(blocks: tuple[Block, ...] | list[Block]) -> list[str]:
    return [b.kind for b in blocks]


def test_doctests_pass() -> None:
    result = doctest.testmod(md)
    assert result.attempted >= 5 and result.failed == 0


def test_top_level_blocks_in_order_with_their_lines() -> None:
    blocks = parse(DOC)
    assert _kinds(blocks) == [
        "heading",
        "paragraph",
        "list",
        "table",
        "quote",
        "code",
        "text",
        "html",
        "heading",
        "rule",
    ]
    assert [(b.start, b.end) for b in blocks][:4] == [(0, 1), (2, 4), (5, 13), (14, 18)]
    # every range is a verbatim slice: no trailing blank lines, nothing rewritten
    assert source(DOC, 2, 4) == "Intro line one\ncontinued here."
    assert source(DOC, blocks[2].start, blocks[2].end).endswith("   ```")


def test_headings_know_level_title_and_kind_of_underline() -> None:
    headings = [b for b in parse(DOC) if b.kind == "heading"]
    assert [(h.level, h.text, h.is_setext) for h in headings] == [(1, "Title", False), (2, "Setext title", True)]
    assert parse("## Using C# ##")[0].text == "Using C#"


def test_list_items_nest_with_depth_text_and_the_blocks_inside() -> None:
    items = parse(DOC)[2].children
    assert _kinds(items) == ["item", "item"]
    first, second = items
    assert (first.text, first.markup, first.level) == ("first item\nwrapped", "-", 0)
    nested = first.children[1].children[0]
    assert (nested.kind, nested.text, nested.level, nested.start) == ("item", "nested item", 1, 7)
    # the fence indented under the second item belongs to it
    assert _kinds(second.children) == ["paragraph", "code"]
    assert parse("3. third")[0].children[0].markup == "3."


def test_tables_give_header_and_rows_of_cells() -> None:
    table = parse(DOC)[3]
    # an escaped pipe stays in its cell; a short row is padded to the header's width
    assert table.cells == (("Name", "Value"), ("`a|b`", "**2**"), ("c", ""))


def test_code_blocks_keep_info_lines_and_where_the_code_starts() -> None:
    fenced = next(b for b in walk(parse(DOC)) if b.kind == "code" and b.markup)
    assert (fenced.language, fenced.code_lines, fenced.first_code_line) == ("yaml", ["a: 1"], 11)
    indented = parse(DOC)[5]
    assert (indented.markup, indented.code_lines, indented.first_code_line) == ("", ["indented code"], 22)
    blank_inside = parse("```\na\n\nb\n```")[0]
    assert blank_inside.code_lines == ["a", "", "b"]
    assert parse("```\n```")[0].code_lines == []


def test_quotes_hold_their_blocks_and_definitions_stay_as_text() -> None:
    quote = parse(DOC)[4]
    assert _kinds(quote.children) == ["paragraph", "list"]
    assert quote.children[0].text == "quoted *text*"
    definition = parse(DOC)[6]
    assert (definition.kind, definition.text) == ("text", "[ref]: https://example.test/ref")


def test_lines_end_where_commonmark_ends_them() -> None:
    text = "a\r\nb\rc\n# x\x0cy\u2028z"
    assert md.lines(text) == ["a", "b", "c", "# x\x0cy\u2028z"]
    heading = parse(text)[-1]
    assert heading.kind == "heading" and heading.start == 3
    assert source(text, 0, 2) == "a\r\nb"  # inner line endings kept as written


def test_code_block_reads_an_indented_fence_on_its_own() -> None:
    nested = "     ```sh\n     ls -l\n     ```"
    found = code_block(nested)
    assert found is not None and found.code_lines == ["ls -l"] and found.first_code_line == 1
    assert code_block("just prose") is None


def test_moved_blocks_keep_their_shape() -> None:
    listed = parse("- a\n  - b")[0].moved(10)
    item = listed.children[0]
    assert (listed.start, item.start, item.children[1].children[0].start) == (10, 10, 11)


@pytest.mark.parametrize(
    ("line", "delimiter"),
    [
        ("|---|---|", True),
        ("| :-- | --: | :-: |", True),
        ("--- | ---", True),
        ("|-|", True),
        ("---", False),  # a rule or a setext underline, not a table's
        ("- --", False),  # a list item
        ("| a | --- |", False),
        ("|---||---|", False),
        ("", False),
    ],
)
def test_one_rule_for_the_delimiter_row(line: str, delimiter: bool) -> None:
    assert is_delimiter_row(line) is delimiter


@pytest.mark.parametrize(
    ("markup", "links", "shown"),
    [
        ("Run `kubectl get pods` now", True, "Run kubectl get pods now"),
        ("The `__init__.py` and `**kwargs` stay", True, "The __init__.py and **kwargs stay"),
        ("**bold** and _em_ and ~~gone~~", True, "bold and em and gone"),
        ("snake_case_name and a*b", True, "snake_case_name and a*b"),
        ("see [docs](https://x.test/a) here", True, "see [docs](https://x.test/a) here"),
        ("see [docs](https://x.test/a) here", False, "see docs here"),
        ("![logo](l.png) <b>hi</b>", False, "logo hi"),
        ("cut **in the middle", True, "cut in the middle"),  # a sentence cut inside emphasis
        ("cut `in a span", True, "cut in a span"),
        ("a &amp; b \\* c", True, "a & b * c"),
        ("two\nlines", True, "two lines"),
        ("", True, ""),
    ],
)
def test_inline_text(markup: str, links: bool, shown: str) -> None:
    assert inline_text(markup, links=links) == shown


def test_a_bare_link_is_spotted() -> None:
    assert is_link_only("[Install](https://x.test/i)")
    assert is_link_only(" <https://x.test> ")
    assert not is_link_only("[a](https://x.test) and [b](https://y.test)")
    assert not is_link_only("plain words")


@settings(max_examples=200, deadline=None, database=None)
@given(text=st.text(alphabet=st.sampled_from("ab #|-`~>*1.\n :\t"), max_size=120))
def test_property_blocks_are_ordered_and_cover_every_non_blank_line(text: str) -> None:
    blocks = parse(text)
    lines = md.lines(text)
    covered: set[int] = set()
    last_end = 0
    for b in blocks:
        assert last_end <= b.start < b.end <= len(lines)
        last_end = b.end
        covered.update(range(b.start, b.end))
    assert all(n in covered for n, line in enumerate(lines) if line.strip())


def test_a_passage_cut_inside_a_nested_list_reads_as_that_list() -> None:
    text = "        * deep item\n\n    * shallower item\n        * nested again\n\n```\ncode\n```"
    blocks = md.parse_passage(text)
    assert [b.kind for b in blocks] == ["list", "list", "code"]  # the deeper item, then the shallower list
    items = [b for b in walk(blocks) if b.kind == "item"]
    assert [(i.text, i.level, i.start) for i in items] == [
        ("deep item", 0, 0),
        ("shallower item", 0, 2),
        ("nested again", 1, 3),
    ]
    assert [b.kind for b in md.parse_passage("    kubectl get pods")] == ["code"]  # code that is no list stays code


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Run `sinfo [1]` now [2].", ["`sinfo [1]`"]),
        ("Two ``a ` b`` ticks", ["``a ` b``"]),
        ("An `open tick stays text", []),
        ("Escaped \\`not code` here", []),
        ("- item `x`\n\n```\nblock [3]\n```\ntail", ["`x`", "```\nblock [3]\n```"]),
        ("```\nnever closed [4]", ["```\nnever closed [4]"]),
    ],
)
def test_split_code_finds_blocks_and_spans(text: str, code: list[str]) -> None:
    pieces = md.split_code(text)
    assert "".join(piece for piece, _ in pieces) == text
    assert [piece for piece, is_code in pieces if is_code] == code


@settings(max_examples=200, deadline=None, database=None)
@given(text=st.text(alphabet=st.sampled_from("a `\n>-[1]\\~"), max_size=80))
def test_property_split_code_joins_back(text: str) -> None:
    assert "".join(piece for piece, _ in md.split_code(text)) == text
