"""Finding the value each part asks for (pure): new values of the asked type, about what the question names,
stating what the part qualifies; a part no unit answers is missing."""

from __future__ import annotations

from app.answer.evidence import Evidence, idf_weights
from app.answer.locate import cover_parts, locate, part_query
from app.answer.question import analyse
from app.models import Passage
from core.text import content_tokens
from core.units import split_units

DOC = """Widgets are placed by rack. Apply this manifest:

```yaml
apiVersion: widgets.example.io/v1beta2
kind: WidgetFlavor
spec:
  topologyName: racks
```

One ring holds a maximum of 16 nodes. The controller restarts every night.
Set `--rack-label` to name the label that marks a rack.
"""


def _setup(question: str, names: set[str] | None = None):  # type: ignore[no-untyped-def]
    passages = [Passage(chunk_id="w#0", doc_id="w", title="Widgetd - Guide", section="Topology", text=DOC, score=1.0)]
    units = split_units(DOC, "text", 0)
    typed = analyse(question, names or {"Widgetd"})
    idf = {t: 1.0 for t in content_tokens(DOC + " " + question)}
    queries = [
        part_query(p, idf_weights(content_tokens(p.text), idf), idf_weights(content_tokens(p.attribute), idf), question,
                   [n for n in typed.focus.split(" · ") if n in (names or {"Widgetd"})],
                   [o.text for o in typed.parts if o is not p])
        for p in typed.parts
    ]  # fmt: skip
    return typed, queries, Evidence(units=units), passages


def test_a_value_in_a_yaml_line_is_found_with_its_document_kind() -> None:
    typed, queries, evidence, passages = _setup("What apiVersion does the Widgetd WidgetFlavor use?")
    located, missing = locate(typed, queries, "What apiVersion does the Widgetd WidgetFlavor use?", evidence, passages)
    assert [loc.span.text for loc in located] == ["widgets.example.io/v1beta2"] and missing == []
    assert located[0].unit.kind == "code_line"


def test_a_value_the_question_already_states_is_not_an_answer() -> None:
    question = "Which field does kind WidgetFlavor use for topologyName in Widgetd?"
    typed, queries, evidence, passages = _setup(question)
    located, _ = locate(typed, queries, question, evidence, passages)
    assert all(loc.span.text != "topologyName" for loc in located)


def test_a_bound_must_be_stated_and_count_what_is_asked() -> None:
    question = "What is the maximum number of nodes in one Widgetd ring?"
    typed, queries, evidence, passages = _setup(question)
    located, missing = locate(typed, queries, question, evidence, passages)
    assert [loc.span.text for loc in located] == ["maximum of 16 nodes"] and not missing
    question = "What is the maximum number of rings one Widgetd cluster can have?"
    typed, queries, evidence, passages = _setup(question)
    located, missing = locate(typed, queries, question, evidence, passages)
    assert located == [] and missing == [0]  # "16 nodes" counts nodes, not rings


def test_a_default_must_be_said_to_be_one() -> None:
    question = "What is the default restart interval of Widgetd?"
    typed, queries, evidence, passages = _setup(question)
    located, missing = locate(typed, queries, question, evidence, passages)
    assert located == [] and missing == [0]


def test_an_identifier_the_part_names_must_be_in_the_unit() -> None:
    question = "Which environment variable like WIDGETD_DATA_DIR sets where Widgetd stores data?"
    typed, queries, evidence, passages = _setup(question)
    located, missing = locate(typed, queries, question, evidence, passages)
    assert located == [] and missing == [0]


def test_each_part_is_covered_before_a_second_unit() -> None:
    question = "Which flag sets the rack label in Widgetd? Does the controller restart at night?"
    typed, queries, evidence, passages = _setup(question)
    located, _ = locate(typed, queries, question, evidence, passages)
    assert [loc.span.text for loc in located] == ["--rack-label"]
    covering = cover_parts(queries, located, evidence, passages)
    assert [u.text for u in covering] == ["The controller restarts every night."]
