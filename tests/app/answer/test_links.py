"""app.answer.links: deep links with section anchors and URL text fragments (pure, no network)."""

from __future__ import annotations

import doctest
from urllib.parse import unquote

import pytest

from app.answer import links
from app.answer.links import deep_link, encode_term, plain_blocks, section_anchor, slug, text_directive


def _terms(link: str) -> list[str]:
    """The decoded textStart/textEnd terms of a deep link."""
    directive = link.split(":~:text=", 1)[1]
    return [unquote(term) for term in directive.split(",")]


def test_doctests_pass() -> None:
    result = doctest.testmod(links)
    assert result.attempted >= 10 and result.failed == 0


def test_short_quote_is_one_term_of_plain_text() -> None:
    link = deep_link("https://example.test/page", "**Slurm** uses `partitions` [1].")
    assert link.startswith("https://example.test/page#:~:text=")
    assert _terms(link) == ["Slurm uses partitions."]


def test_long_quote_uses_start_and_end_words() -> None:
    words = " ".join(f"w{i}" for i in range(40))
    link = deep_link("https://example.test/p", words)
    assert _terms(link) == ["w0 w1 w2 w3", "w36 w37 w38 w39"]
    assert len(link) < 120


@pytest.mark.parametrize(("char", "encoded"), [("-", "%2D"), (",", "%2C"), ("&", "%26"), (" ", "%20"), ("#", "%23")])
def test_spec_reserved_characters_are_percent_encoded(char: str, encoded: str) -> None:
    term = encode_term(f"a{char}b")
    assert term == f"a{encoded}b"
    link = deep_link("https://example.test/", f"left{char}right")
    directive = link.split(":~:", 1)[1]
    assert char not in directive.removeprefix("text=") and encoded in directive


def test_table_rows_lose_pipes_header_and_separator() -> None:
    quote = "| Feature | Slurm | Kubernetes |\n|---|:---:|---|\n| Gang scheduling | native | via Kueue [2] |"
    assert plain_blocks(quote) == ["Gang scheduling", "native", "via Kueue"]
    link = deep_link("https://example.test/t", quote)
    assert _terms(link) == ["Gang scheduling", "via Kueue"]
    assert "|" not in unquote(link) and "Feature" not in unquote(link)


def test_list_bullets_headings_links_and_markers_are_removed() -> None:
    quote = "## Setup\n\n- Install [the plugin](https://x.test/p) first [3]\n1. Run `sbatch`\n> quoted _note_"
    assert plain_blocks(quote) == ["Setup", "Install the plugin first", "Run sbatch", "quoted note"]
    assert plain_blocks("use my_var_name here") == ["use my_var_name here"]  # intraword _ is not emphasis


def test_japanese_quote_uses_a_short_contiguous_run() -> None:
    short = "GPUを92%まで使い切った。"
    assert _terms(deep_link("https://example.test/ja", short)) == [short]
    long = (
        "Slurmは、HPC分野で広く使われているオープンソースのジョブスケジューラです。" * 2
        + "大規模な分散学習に向いています。"
    )
    start, end = _terms(deep_link("https://example.test/ja", long))
    assert long.startswith(start) and long.endswith(end)
    assert len(start) <= 16 and len(end) <= 16 and " " not in start
    assert end == "大規模な分散学習に向いています。"  # starts after the sentence break: a word boundary


def test_empty_quote_and_bad_urls() -> None:
    assert deep_link("https://example.test/a", "") == "https://example.test/a"
    assert deep_link("https://example.test/a", "| --- |") == "https://example.test/a"  # no text left
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "/relative", "", "https://exa mple.test/"):
        assert deep_link(bad, "x") == ""
    # An existing anchor is kept; an old text directive is replaced, not stacked.
    assert deep_link("https://example.test/a#intro", "hi") == "https://example.test/a#intro:~:text=hi"
    assert deep_link("https://example.test/a#:~:text=old", "new") == "https://example.test/a#:~:text=new"


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Quick Start", "quick-start"),
        ("3. Gang Scheduling (v1.35+)", "3-gang-scheduling-v135"),
        ("`kubectl` & Pods", "kubectl--pods"),
        ("What's new?", "whats-new"),
        ("snake_case and dash-ed", "snake_case-and-dash-ed"),
        ("日本語の見出し、テスト", "日本語の見出しテスト"),
        ("[Linked](https://x.test) heading", "linked-heading"),
    ],
)
def test_slug_follows_github_rules(heading: str, expected: str) -> None:
    assert slug(heading) == expected


@pytest.mark.parametrize(
    ("url", "anchored"),
    [
        ("https://github.com/NVIDIA/pyxis", True),
        ("https://github.com/NVIDIA/KAI-Scheduler/blob/main/docs/batch/README.md", True),
        ("https://github.com/kubeflow/mpi-operator/issues/503", False),
        ("https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/", True),
        ("https://kueue.sigs.k8s.io/docs/overview/", True),
        ("https://slurm.schedmd.com/gres.html", False),
        ("https://www.nttpc.co.jp/gpu/article/technical24.html", False),
    ],
)
def test_anchors_only_where_heading_ids_are_predictable(url: str, anchored: bool) -> None:
    anchor = section_anchor(url, "Guide > Using Device Plugins")
    assert anchor == ("using-device-plugins" if anchored else "")
    link = deep_link(url, "Plugins advertise GPUs.", "Guide > Using Device Plugins")
    assert ("#using-device-plugins:~:text=" in link) is anchored
    assert link.endswith(":~:text=Plugins%20advertise%20GPUs.")


def test_text_directive_single_block_short_and_long() -> None:
    ten = " ".join(["word"] * 10)
    assert text_directive(ten) == "text=" + encode_term(ten)
    eleven = " ".join(f"x{i}" for i in range(11))
    assert text_directive(eleven) == "text=x0%20x1%20x2%20x3,x7%20x8%20x9%20x10"


def test_code_lines_keep_their_characters_and_fences_are_dropped() -> None:
    quote = "```yaml\nkind: <Kind>\n  - name: *anchor\n```"
    assert plain_blocks(quote) == ["kind: <Kind>", "- name: *anchor"]


def test_structure_is_read_by_the_parser_not_by_line_patterns() -> None:
    quote = "> - quoted **item**\n> more of it\n\nTitle\n---\n\n| A | B |\n|---|---|\n| `x\\|y` | [z](https://z.test) |"
    assert plain_blocks(quote) == ["quoted item", "more of it", "Title", "x|y", "z"]
    assert plain_blocks("|---|---|") == []  # a delimiter row cut loose from its table
    assert plain_blocks("#1 is not a heading") == ["#1 is not a heading"]


def test_a_quote_cut_from_a_nested_list_reads_as_items() -> None:
    assert plain_blocks("        * deep item [1]\n    * next item") == ["deep item", "next item"]
