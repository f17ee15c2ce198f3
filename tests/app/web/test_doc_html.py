"""app.web.doc_html: document Markdown rendered as safe one-line HTML, links resolved, quoted blocks marked."""

from __future__ import annotations

import pytest

from app.web.doc_html import complete_table, plain, quote_hit, resolve_link, to_html

SOURCE = "https://example.test/docs/walrus/placement"


def test_tables_lists_and_code_render_on_one_line() -> None:
    html = to_html("| Scenario | Platform |\n|---|---|\n| On-prem | **Slurm** |\n\n- one\n- two\n\n```\na\n\nb\n```")
    assert "<th>Scenario</th><th>Platform</th>" in html and "<td><strong>Slurm</strong></td>" in html
    assert '<div class="table-wrap" tabindex="0"><table>' in html  # a wide table scrolls in its wrapper
    assert "<ul><li>one</li><li>two</li></ul>" in html and "- one" not in html  # no leading "- "
    assert "<pre><code>a&#10;&#10;b&#10;</code></pre>" in html  # code keeps its lines...
    assert "\n" not in html  # ...and the whole block is one line, safe inside a Markdown HTML block


def test_header_less_table_rows_still_render_as_a_table() -> None:
    assert complete_table("| Elastic | Kubernetes |").splitlines()[:2] == ["| | |", "|---|---|"]
    assert complete_table("plain text") == "plain text"
    assert "<td>Elastic</td><td>Kubernetes</td>" in to_html("| Elastic | Kubernetes |")


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("#node-topology-information", f"{SOURCE}#node-topology-information"),
        ("../setup/install.md", "https://example.test/docs/setup/install.md"),
        ("https://other.test/x", "https://other.test/x"),
        ("javascript:alert(1)", None),
        ("data:text/html,x", None),
        ("file:///etc/passwd", None),
    ],
)
def test_links_resolve_against_the_source(href: str, expected: str | None) -> None:
    assert resolve_link(href, SOURCE) == expected


def test_relative_links_without_a_source_url_and_unsafe_links_keep_only_their_text() -> None:
    assert resolve_link("#x", "") is None and resolve_link("#x", "javascript:void(0)") is None
    html = to_html("See [topology](#topo), [bad](javascript:alert(1)) and [ok](../a.md).", SOURCE)
    assert f'<a href="{SOURCE}#topo" target="_blank" rel="noopener noreferrer">topology</a>' in html
    assert 'href="https://example.test/docs/a.md"' in html
    assert "javascript:" not in html.replace("[bad](javascript:alert(1))", "")
    assert to_html("[local](#x)").count("href") == 0  # nowhere to go: text only


def test_document_html_and_images_stay_inert() -> None:
    html = to_html('<script>alert(1)</script> <img src=x onerror=alert(2)> ![pic](https://x.test/p.png) "q"')
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html


def test_quoted_blocks_are_marked_as_hits() -> None:
    section = (
        "Intro paragraph that is not quoted at all.\n\n"
        "| Scenario | Platform |\n|---|---|\n| On-prem training | Slurm |\n| Cloud-first, elastic | **Kubernetes** |\n\n"
        "1. Minor releases ship three times a year.\n2. Each minor release is supported for fourteen months."
    )
    quote = "| Scenario | Platform |\n|---|---|\n| Cloud-first, elastic | Kubernetes |\n- Minor releases ship three times a year."
    html = to_html(section, hit=quote_hit(quote))
    assert '<tr class="hit"><td>Cloud-first, elastic</td>' in html  # the quoted row...
    assert "<tr><td>On-prem training</td>" in html  # ...not its neighbour
    assert '<li class="hit">Minor releases ship three times a year.</li>' in html
    assert "<li>Each minor release" in html and '<p class="hit">Intro' not in html
    assert "<th>Scenario</th>" in html and '<tr class="hit"><th>' not in html  # the header row is not a hit


def test_a_short_block_is_not_a_hit_just_because_the_quote_mentions_it() -> None:
    hit = quote_hit("Slurm suits a fixed on-premises fleet of GPUs.")
    assert not hit("Slurm") and hit("Slurm suits a fixed on-premises fleet of GPUs.")
    assert hit("Overall, Slurm suits a fixed on-premises fleet of GPUs. Kubernetes suits elastic ones.")
    assert plain("- **Bold** `code` [link](x)") == "bold code link"


def test_only_the_quoted_lines_of_a_code_block_are_marked() -> None:
    section = "Intro.\n\n```yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\nspec:\n  parallelism: 2\n```"
    html = to_html(section, hit=quote_hit("```yaml\nkind: Job\nmetadata:\n```"))
    assert '<span class="hit">kind: Job&#10;metadata:</span>' in html  # the two quoted lines, as one band
    assert '<pre class="hit"' not in html and "apiVersion: batch/v1&#10;<span" in html
    whole = to_html(section, hit=quote_hit(section.split("\n\n", 1)[1]))
    assert 'class="hit language-yaml"' in whole and '<span class="hit">' not in whole  # all of it: the block


def test_only_the_quoted_sentences_of_a_paragraph_are_marked() -> None:
    section = (
        "Overall, Slurm suits a fixed on-premises fleet of GPUs. Kubernetes suits elastic ones.\n\n"
        "- The scheduler backfills <small> jobs first. It never preempts them."
    )
    html = to_html(section, hit=quote_hit("Slurm suits a fixed on-premises fleet of GPUs.", "It never preempts them."))
    assert '<p>Overall, <span class="hit">Slurm suits a fixed on-premises fleet of GPUs.</span> Kubernetes' in html
    assert (
        '<li>The scheduler backfills &lt;small&gt; jobs first. <span class="hit">It never preempts them.</span></li>'
        in html
    )
    assert '<p class="hit">' not in html and "<li class" not in html
    whole = to_html(
        section,
        hit=quote_hit("Overall, Slurm suits a fixed on-premises fleet of GPUs.\nKubernetes suits elastic ones."),
    )
    assert '<p class="hit">Overall' in whole and "<span" not in whole  # every sentence quoted: the paragraph
    # a quote that crosses the paragraph's markup (a link, emphasis) marks the paragraph as a whole
    crossing = to_html(
        "Intro. Slurm suits a *fixed* fleet of GPU nodes. More.",
        hit=quote_hit("Slurm suits a fixed fleet of GPU nodes."),
    )
    assert '<p class="hit">' in crossing and '<span class="hit">' not in crossing
    alone = to_html(
        "Slurm suits a fixed on-premises fleet of GPUs.",
        hit=quote_hit("Slurm suits a fixed on-premises fleet of GPUs."),
    )
    assert alone == '<p class="hit">Slurm suits a fixed on-premises fleet of GPUs.</p>'  # all of it: the block
