"""core.units: evidence units read through core.markdown, code lines as evidence (pure, no models)."""

from __future__ import annotations

import doctest

import pytest

from core import units as units_module
from core.units import (
    Unit,
    code_language,
    code_lines_shown,
    code_window,
    flag_entries,
    is_quotable_line,
    is_table_separator,
    split_units,
    transcript_language,
    unit_embedding_text,
    unit_embedding_texts,
    unit_keys,
    yaml_key_paths,
)

MANIFEST = f"""Create a Topology object like this:

```yaml
# the cluster layout
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: "default"
spec:
  levels:
  - nodeLabel: "cloud.provider.com/topology-block"{"   "}

  - nodeLabel: "kubernetes.io/hostname"
```

After the manifest comes prose."""


def _lines(units: list[Unit]) -> list[Unit]:
    return [u for u in units if u.kind == "code_line"]


def test_doctests_pass() -> None:
    result = doctest.testmod(units_module)
    assert result.attempted >= 3 and result.failed == 0


def test_every_line_of_a_code_block_is_a_unit_next_to_the_whole_block() -> None:
    units = split_units(MANIFEST)
    code = next(u for u in units if u.kind == "code")
    lines = _lines(units)
    assert code.quote.startswith("```yaml") and code.quote.endswith("```")  # how-to answers quote it whole
    assert [u.text for u in lines] == [
        "apiVersion: kueue.x-k8s.io/v1beta2",
        "kind: Topology",
        "metadata:",
        '  name: "default"',
        "spec:",
        "  levels:",
        '  - nodeLabel: "cloud.provider.com/topology-block"',  # trailing spaces dropped
        '  - nodeLabel: "kubernetes.io/hostname"',
    ]
    assert [u.line for u in lines] == [1, 2, 3, 4, 5, 6, 7, 9]  # the comment (0) and the blank line (8) are skipped
    assert {u.block for u in lines} == {code.block}  # findable from the block's lead-in, like the block
    assert all(u.quote in MANIFEST for u in lines)
    assert lines[6].quote.endswith("   ")  # the quote is the line as written


def test_a_code_line_knows_its_lead_in_language_and_yaml_keys() -> None:
    lines = _lines(split_units(MANIFEST))
    assert lines[0].context == "Create a Topology object like this: | lang: yaml | keys: apiVersion"
    assert lines[3].context.endswith("| keys: metadata > name")
    assert lines[7].context.endswith("| keys: spec > levels > nodeLabel")
    assert unit_keys(lines[7]) == "spec > levels > nodeLabel"
    assert code_language(lines[0]) == "yaml"


def test_the_lead_in_of_a_code_block_inside_a_list_item_is_the_item() -> None:
    text = "1. Submit the job:\n\n   ```bash\n   #!/bin/bash\n   #SBATCH --gres=gpu:4\n   srun train.py\n   ```"
    units = split_units(text)
    lines = _lines(units)
    assert [u.text for u in lines] == ["#SBATCH --gres=gpu:4", "srun train.py"]  # a directive is no comment
    assert all(u.context == "Submit the job: | lang: bash" for u in lines)
    assert lines[0].quote == "   #SBATCH --gres=gpu:4"
    item = next(u for u in units if u.kind == "item")
    assert lines[0].block == item.block + 1  # the item's block is followed by its code


def test_no_lead_in_across_a_table_or_at_the_start_of_a_passage() -> None:
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n\n```\nmake install\n```"
    assert _lines(split_units(table))[0].context == ""
    assert _lines(split_units("```sh\nmake\n```"))[0].context == "lang: sh"


@pytest.mark.parametrize(
    ("line", "quotable"),
    [
        ("kind: Topology", True),
        ("#SBATCH --nodes=2", True),
        ("#include <stdio.h>", True),
        ("--gres=gpu:4", True),
        ("# a comment", False),
        ("#", False),
        ("#!/bin/bash", False),
        ("  // a comment", False),
        ("-- a comment", False),
        ("<!-- note -->", False),
        ("}", False),
        ("  ]);", False),
        ("---", False),
        ("   ", False),
    ],
)
def test_which_code_lines_hold_something(line: str, quotable: bool) -> None:
    assert is_quotable_line(line) is quotable


def test_yaml_key_paths_follow_indentation_and_sequences() -> None:
    lines = [
        "apiVersion: batch/v1",
        "spec:",
        "  template:",
        "    metadata:",
        "      annotations:",
        '        kueue.x-k8s.io/podset-required-topology: "rack"',
        "    containers:",
        "    - name: main",
        "      image: busybox",
        "    - name: side",
        "  command: |",
        "    echo hi",
        "---",
        "kind: Job",
    ]
    assert yaml_key_paths(lines) == [
        "apiVersion",
        "spec",
        "spec > template",
        "spec > template > metadata",
        "spec > template > metadata > annotations",
        "spec > template > metadata > annotations > kueue.x-k8s.io/podset-required-topology",
        "spec > template > containers",
        "spec > template > containers > name",
        "spec > template > containers > image",
        "spec > template > containers > name",
        "spec > command",
        "spec > command",  # a block scalar's line belongs to its key
        "",
        "kind",
    ]


def test_an_unlabelled_block_of_keys_reads_as_yaml_and_a_command_does_not() -> None:
    yaml = _lines(split_units("```\nspec:\n  queueName: gpu\n```"))
    assert yaml[1].context == "lang: yaml | keys: spec > queueName"
    shell = _lines(split_units("```\nexport A=1\nsrun hostname\n```"))
    assert [u.context for u in shell] == ["", ""]


def test_code_window_quotes_the_line_with_its_neighbours() -> None:
    units = split_units(MANIFEST)
    lines = _lines(units)
    assert code_window(lines[3], units) == 'metadata:\n  name: "default"\nspec:'
    # the comment above the first line is context too; blank lines do not use up the window
    assert code_window(lines[0], units) == "# the cluster layout\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology"
    assert code_window(lines[7], units, before=1, after=0) == (
        '- nodeLabel: "cloud.provider.com/topology-block"\n- nodeLabel: "kubernetes.io/hostname"'
    )
    assert code_window(lines[4], units, before=0, after=0) == "spec:"
    # without the block's own unit, its line units are used
    without_block = [u for u in units if u.kind != "code"]
    assert code_window(lines[3], without_block) == 'metadata:\n  name: "default"\nspec:'
    sentence = units[0]
    assert code_window(sentence, units) == sentence.quote


def test_a_code_quote_shows_its_window_or_its_whole_block() -> None:
    units = split_units(MANIFEST)
    lines = _lines(units)
    code = next(u for u in units if u.kind == "code")
    # the lines code_window quotes for 'name: "default"': metadata, name, spec
    assert [u.text.strip() for u in code_lines_shown(lines[3], units)] == ["metadata:", 'name: "default"', "spec:"]
    assert code_lines_shown(code, units) == lines
    assert code_lines_shown(units[0], units) == []


def test_inline_code_stays_visible_without_its_backticks() -> None:
    [unit] = split_units("Set `ENROOT_DATA_PATH` in `__init__.py`, pass `**kwargs` and **read** _this_.")
    assert unit.text == "Set ENROOT_DATA_PATH in __init__.py, pass **kwargs and read this."
    assert unit.quote.startswith("Set `ENROOT_DATA_PATH`")


def test_a_parent_item_that_states_something_is_evidence_a_label_is_not() -> None:
    text = (
        "- Strengths of Slurm\n"
        "  - mature gang scheduling\n"
        "- Over-quota share: resources left after every deserved quota are shared by priority and weight.\n"
        "  - computed per level of the queue tree\n"
    )
    units = split_units(text)
    texts = [u.text for u in units]
    assert "Strengths of Slurm" not in texts
    assert texts[1].startswith("Over-quota share:")
    assert units[0].context == "Strengths of Slurm"


def test_nested_items_of_a_loose_list_keep_their_parent() -> None:
    text = "* Frequently customized settings of an application\n\n    * Image: repository and tag\n\n    * Resources"
    items = [u for u in split_units(text) if u.kind == "item"]
    assert [(u.text, u.context) for u in items][1] == (
        "Image: repository and tag",
        "Frequently customized settings of an application",
    )


def test_a_passage_cut_from_a_deep_list_is_read_as_items_not_code() -> None:
    text = "        * can give the author some control over the data\n\n    * Push: late binding of policies"
    units = split_units(text)
    assert [u.kind for u in units] == ["item", "item"]
    assert units[0].quote == "* can give the author some control over the data"


def test_table_rows_are_labelled_by_their_header() -> None:
    text = "|  | Slurm | K8s |\n|---|:---:|---|\n| Gang | `a\\|b` | via **Kueue** |\n| Only one |"
    rows = [u for u in split_units(text) if u.kind == "row"]
    assert [u.text for u in rows] == ["Gang; Slurm: a|b; K8s: via Kueue", "Only one"]
    assert rows[0].quote.split("\n")[1] == "|---|:---:|---|"


def test_table_separator_is_the_parsers_rule() -> None:
    assert is_table_separator("| --- | :-: |") and not is_table_separator("---")


def test_definitions_rules_and_links_alone_are_not_evidence() -> None:
    text = "[Install](https://x.test/install)\n\n---\n\n[ref]: https://x.test/ref\n\nReal words here."
    assert [u.text for u in split_units(text)] == ["Real words here."]


def test_a_usage_blocks_option_is_scored_with_its_description_and_the_description_with_its_flag() -> None:
    text = (
        "Options:\n\n```\n  --container-writable    make the filesystem writable\n"
        "  --container-unshare=NS[,NS...]\n                          create new namespaces.\n"
        "                          Supported: net, ipc, uts.\n  -v, --verbose\n```\n"
    )
    lines = {u.text.strip(): u.context for u in split_units(text) if u.kind == "code_line"}
    entry = "entry: --container-unshare=NS[,NS...] create new namespaces. Supported: net, ipc, uts."
    assert lines["--container-unshare=NS[,NS...]"].endswith(entry)
    assert lines["Supported: net, ipc, uts."].endswith(entry)
    assert "entry:" not in lines["--container-writable    make the filesystem writable"]  # one line: itself
    assert flag_entries(["- name: a", "  image: b"]) == ["", ""]  # a YAML list is not an option list


def test_a_shell_block_with_prompts_is_a_transcript() -> None:
    session = ["$ srun --mpi=list", "MPI plugin types are...", "\tpmix"]
    assert transcript_language("", session) == "console"
    assert transcript_language("console", ["srun --mpi=list"]) == "shell"  # no prompt: every line is a command
    assert transcript_language("bash", ["srun -N2 hostname"]) == "bash"
    assert transcript_language("yaml", ["$ not: a prompt"]) == "yaml"


def test_the_embedded_units_of_a_passage_are_its_units_and_the_heading_of_its_opening_table() -> None:
    table = "| Release | Date |\n|---|---|\n| 1.0 | 2024-03 |\n| 1.1 | 2024-09 |"
    texts = unit_embedding_texts(table, "table", "Guide > Releases")
    assert texts[0] == "Guide > Releases\nReleases"  # the heading the answer step quotes with its rows
    assert texts[1:] == [unit_embedding_text(u, "Guide > Releases") for u in split_units(table, "table")]
    prose = unit_embedding_texts("Releases ship twice a year. Each is supported for a year.", "text", "Guide")
    assert prose == ["Guide\nReleases ship twice a year.", "Guide\nEach is supported for a year."]
    assert len(unit_embedding_text(Unit(0, "x" * 5000, "", "code"), "S")) == units_module.UNIT_EMBED_CHARS


REFERENCE = (
    "These options set the plugin up. FooPeriod: How often usage is recalculated. The default value is 5 (minutes). "
    "ResetPeriod: When usage is cleared. The default is NONE. - NONE: Never clear usage. The default value. "
    "- DAILY: Cleared every day. FavorSmall: A boolean. The default setting is NO."
)


def test_the_sentences_of_a_definition_paragraph_carry_the_term_they_are_about() -> None:
    units = split_units(REFERENCE)
    keys = {u.text: unit_keys(u) for u in units}
    assert keys["These options set the plugin up."] == ""
    assert keys["The default value is 5 (minutes)."] == "FooPeriod"
    assert keys["The default is NONE."] == "ResetPeriod"
    assert keys["- NONE: Never clear usage."] == keys["The default value."] == "ResetPeriod > NONE"
    assert keys["- DAILY: Cleared every day."] == "ResetPeriod > DAILY"
    assert keys["The default setting is NO."] == "FavorSmall"  # a new term closes the value list above it
    default = next(u for u in units if u.text == "The default value is 5 (minutes).")
    assert (
        unit_embedding_text(default, "Configuration") == "Configuration › FooPeriod\nThe default value is 5 (minutes)."
    )


@pytest.mark.parametrize(
    "paragraph",
    [
        "NOTE: Restart the daemon after a change. It reads the file once.",  # one label is not a definition list
        "Slurm: a workload manager. It schedules jobs.",  # a plain word followed by a colon is no term
    ],
)
def test_a_paragraph_with_fewer_than_two_terms_carries_no_keys(paragraph: str) -> None:
    assert [unit_keys(u) for u in split_units(paragraph)] == ["", ""]
