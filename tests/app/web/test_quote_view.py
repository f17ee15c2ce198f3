"""Issue 27, item 2: the rows a heading (or a lead-in sentence) brings along are drawn as one table."""

from __future__ import annotations

import re

from app.models import Quote
from app.web.quote_view import quote_html, quote_text

HEADER = "| Item | Slurm | Kubernetes |\n|---|---|---|"
ROWS = ["| Scheduler | sbatch | kube-scheduler |", "| Cost | <b>low</b> | medium |"]


def _heading(**kw: object) -> Quote:
    rows = [f"Item: {r.split('|')[1].strip()}; Slurm: …" for r in ROWS]
    return Quote(
        n=1,
        doc_id="d",
        chunk_id="d#0",
        kind="heading",
        text="7. Comparison",
        followers=[*rows, "A note after the table."],
        follower_kinds=["row", "row", "item"],
        follower_markdown=[f"{HEADER}\n{ROWS[0]}", f"{HEADER}\n{ROWS[1]}", "A note after the table."],
        **kw,  # type: ignore[arg-type]
    )


def test_the_rows_under_a_heading_are_one_table_with_the_header_once() -> None:
    html = quote_html(_heading(), [], "a1", "en")
    assert html.count("<table") == 1 and html.count("<thead>") == 1
    assert len(re.findall(r"<th\b", html)) == 3  # the header once
    assert html.count("<tr>") == 3  # the header and both rows
    assert "Item: Scheduler" not in html  # not "Label: value; …" bullets
    assert "<td>sbatch</td>" in html and "kube-scheduler" in html
    assert "<b>low</b>" not in html  # the cells are escaped like any document Markdown
    assert "<li>A note after the table.</li>" in html  # what is not a row stays a short list
    assert html.index("<table") < html.index("A note after")  # in the document's order


def test_a_row_without_its_markdown_stays_a_line() -> None:
    quote = _heading().model_copy(update={"follower_markdown": []})
    html = quote_html(quote, [], "a1", "en")
    assert "<table" not in html and "<li>Item: Scheduler; Slurm: …</li>" in html


def test_the_copied_text_has_the_same_table() -> None:
    lines = quote_text(_heading(), "en")
    assert lines[0] == "- 7. Comparison [1]"
    assert lines[1:5] == ["  | Item | Slurm | Kubernetes |", "  |---|---|---|", f"  {ROWS[0]}", f"  {ROWS[1]}"]
    assert lines[5] == "  - A note after the table."


def _sentence(followers: list[str], kinds: list[str]) -> Quote:
    return Quote(
        n=2, doc_id="d", chunk_id="d#1", kind="sentence", text="Kueue manages quotas.",
        followers=followers, follower_kinds=kinds, follower_markdown=followers,
    )  # fmt: skip


def test_a_sentence_goes_on_in_its_line_and_a_lead_in_shows_what_it_announces() -> None:
    going_on = _sentence(["It does not replace kube-scheduler."], ["sentence"])
    html = quote_html(going_on, [], "a1", "en")
    assert "Kueue manages quotas. It does not replace kube-scheduler." in html and "<ul>" not in html
    assert quote_text(going_on, "en") == ["- Kueue manages quotas. It does not replace kube-scheduler. [2]"]
    lead_in = _sentence(["admits jobs", "kubectl apply -f queue.yaml"], ["item", "code"])
    html = quote_html(lead_in, [], "a1", "en")
    assert "<li>admits jobs</li>" in html and "<code" in html and "kubectl apply -f queue.yaml" in html
    assert quote_text(lead_in, "en") == [
        "- Kueue manages quotas. [2]", "  - admits jobs", "  kubectl apply -f queue.yaml",
    ]  # fmt: skip


def test_a_sentence_of_a_parameter_list_says_which_parameter_it_is_about() -> None:
    q = Quote(
        n=1, doc_id="d", chunk_id="d#0", kind="sentence", text="The default value is 5 (minutes).", about="CalcPeriod"
    )
    html = quote_html(q, [], "a1", "en")
    assert '<span class="about">CalcPeriod</span> — The default value is 5 (minutes).' in html
    assert quote_text(q, "en") == ["- CalcPeriod — The default value is 5 (minutes). [1]"]


def test_a_code_quote_shows_the_sentence_that_announces_it_above_the_code() -> None:
    q = Quote(
        n=2,
        doc_id="d",
        chunk_id="d#0",
        kind="code_line",
        text="helm install slurm-operator",
        markdown="helm install slurm-operator",
        code_language="sh",
        intro="Install the <slurm-operator> and its CRDs:",
    )
    html = quote_html(q, [], "a1", "en")
    assert html.index("Install the &lt;slurm-operator&gt; and its CRDs:") < html.index("<pre")
    assert quote_text(q, "en")[0] == "- Install the <slurm-operator> and its CRDs: [2]"
    assert quote_text(q.model_copy(update={"intro": ""}), "en")[0] == "- [2]"
