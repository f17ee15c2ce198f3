"""Typed quotes: a unit becomes a Quote that every renderer reads (no Markdown parsed back)."""

from __future__ import annotations

import doctest

from app.answer import quotes
from app.answer.quotes import LEAD_QUOTES, bolded, going_on, lead_and_more, make_quote, quote_lines
from app.models import Passage
from core.units import split_units

DOC = """Enroot reads its settings from the environment.

| Setting | Default |
|---|---|
| ENROOT_DATA_PATH | ${XDG_DATA_HOME}/enroot |

```yaml
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: tas-flavor
```
"""


def _passage(text: str = DOC, language: str = "en") -> Passage:
    return Passage(chunk_id="d#0", doc_id="d", title="D", section="S", text=text, language=language)


def test_doctests() -> None:
    assert doctest.testmod(quotes).failed == 0


def test_a_quote_knows_its_span_in_the_chunk_and_its_values() -> None:
    p = _passage()
    units = split_units(p.text, "text", 0)
    row = next(u for u in units if u.kind == "row")
    q = make_quote(row, 2, p, units, values=[(0, "ENROOT_DATA_PATH", "key")], role="value")
    assert p.text[q.start : q.end] == "| ENROOT_DATA_PATH | ${XDG_DATA_HOME}/enroot |"
    assert q.markdown.startswith("| Setting | Default |")  # a row keeps its header: drawn as a table
    [span] = q.values
    assert q.text[span.start : span.end] == "ENROOT_DATA_PATH" and span.part == 0
    assert bolded(q).startswith("Setting: **ENROOT_DATA_PATH**")


def test_a_code_line_is_quoted_as_a_window_of_its_block() -> None:
    p = _passage()
    units = split_units(p.text, "text", 0)
    line = next(u for u in units if u.kind == "code_line" and "apiVersion" in u.text)
    q = make_quote(line, 1, p, units, values=[(0, "kueue.x-k8s.io/v1beta2", "api_version")])
    assert q.code_language == "yaml" and q.text.splitlines() == [
        "apiVersion: kueue.x-k8s.io/v1beta2",
        "kind: ResourceFlavor",
    ]
    assert quote_lines(q, "ja")[:2] == ["- コード例より [1]:", "  ```yaml"]


def test_lead_holds_at_most_three_quotes_and_the_rest_is_more() -> None:
    text = " ".join(f"Sentence number {i} says something." for i in range(6))
    p = _passage(text)
    units = split_units(text, "text", 0)
    made = [make_quote(u, i + 1, p, units) for i, u in enumerate(units)]
    lead_text, more_text, lead, more = lead_and_more(["**Answer:** x"], made, "en")
    assert len(lead) == LEAD_QUOTES and len(more) == len(made) - LEAD_QUOTES
    assert lead_text.splitlines()[:2] == ["**Answer:** x", "From the knowledge base:"]
    assert "Sentence number 3" in more_text and "Sentence number 3" not in lead_text


def test_related_quotes_are_labelled_as_not_an_answer() -> None:
    p = _passage("Kueue manages quotas.")
    units = split_units(p.text, "text", 0)
    text, _, lead, _ = lead_and_more(
        ["Not stated."], [make_quote(units[0], 1, p, units, role="related")], "ja", related=True
    )
    assert text.splitlines()[1] == "関連する記述（回答ではありません）:" and lead[0].role == "related"


def test_a_sentence_goes_on_with_the_next_on_its_line_and_a_lead_in_lists_what_it_announces() -> None:
    p = _passage("Kueue manages quotas. It does not replace kube-scheduler.")
    first, second = split_units(p.text, "text", 0)
    q = make_quote(first, 1, p, [first, second], attached=[second])
    assert quote_lines(q, "en") == ["- Kueue manages quotas. It does not replace kube-scheduler. [1]"]
    assert going_on(q) == ["It does not replace kube-scheduler."]
    ja = _passage("キューを管理する。kube-schedulerは置き換えない。", "ja")
    a, b = split_units(ja.text, "text", 0)
    assert quote_lines(make_quote(a, 2, ja, [a, b], attached=[b]), "ja") == [
        "- キューを管理する。kube-schedulerは置き換えない。 [2]"
    ]
    listed = _passage("It does two things:\n\n- admits jobs\n- holds quota")
    lead_in, *items = split_units(listed.text, "text", 0)
    assert quote_lines(make_quote(lead_in, 3, listed, [lead_in, *items], attached=items), "en") == [
        "- It does two things: [3]",
        "  - admits jobs",
        "  - holds quota",
    ]
    assert going_on(make_quote(lead_in, 3, listed, [lead_in, *items], attached=items)) == []


def test_a_sentence_of_a_parameter_list_carries_the_parameter_it_does_not_name() -> None:
    text = "PriorityCalcPeriod: The period of recalculation. The default value is 5 (minutes). PriorityMaxAge: The age."
    p = _passage(text)
    units = split_units(p.text, "text", 0)
    quoted = [make_quote(u, 1, p, units) for u in units]
    assert [q.about for q in quoted] == ["", "PriorityCalcPeriod", ""]
    assert quote_lines(quoted[1], "en") == ["- *PriorityCalcPeriod* — The default value is 5 (minutes). [1]"]
    # outside a parameter list a sentence is about nothing more than it says
    plain = _passage("Kueue manages quotas. The default is 5.")
    assert [make_quote(u, 1, plain, []).about for u in split_units(plain.text, "text", 0)] == ["", ""]


def test_a_code_quote_is_labelled_by_the_sentence_that_announces_its_block() -> None:
    text = (
        "Install the slurm-operator and its CRDs:\n\n```sh\nhelm install slurm-operator-crds oci://x/crds\n"
        "helm install slurm-operator oci://x/operator\n```\n\nThe chart is signed.\n\n```sh\nhelm verify x\n```"
    )
    p = _passage(text)
    units = split_units(p.text, "text", 0)
    line = next(u for u in units if u.kind == "code_line" and "operator-crds" in u.text)
    q = make_quote(line, 2, p, units)
    assert q.intro == "Install the slurm-operator and its CRDs:"
    assert quote_lines(q, "en")[:2] == ["- Install the slurm-operator and its CRDs: [2]", "  ```sh"]
    block = next(u for u in units if u.kind == "code")
    assert quote_lines(make_quote(block, 1, p, units), "ja")[0] == "- Install the slurm-operator and its CRDs: [1]"
    # a block after a sentence that announces nothing keeps the generic label
    other = next(u for u in units if u.kind == "code_line" and "verify" in u.text)
    q = make_quote(other, 3, p, units)
    assert q.intro == "" and quote_lines(q, "en")[0] == "- From the code example [3]:"
