"""app.answer.counting: whether a quantity counts what the question counts."""

from __future__ import annotations

from app.answer.counting import count_spans, counts


def test_counts_compares_what_is_counted() -> None:
    assert counts("16 nodes can", "nodes") and not counts("16 nodes can", "rings")
    assert counts("3層まで", "層") and not counts("80%", "gb") and counts("up to 3", "rings")


def test_machines_nodes_and_servers_count_the_same_thing_even_past_a_modifier() -> None:
    assert counts("1 management node", "machines") and counts("3 control-plane nodes", "servers")
    assert counts("3台", "machines") and counts("16 hosts", "nodes")
    assert not counts("2 GPUs per node", "nodes")  # the number counts GPUs
    assert not counts("4 racks of 8", "machines")


def test_count_spans_take_the_number_with_what_it_counts() -> None:
    assert [s.text for s in count_spans("The cluster keeps 17 entries and seven MIG slices.", "entries")] == [
        "17 entries"
    ]
    assert [s.text for s in count_spans("It needs 1 management node.", "machines")] == ["1 management node"]
    assert [s.text for s in count_spans("We run 3 servers.", "台")] == ["3 servers"] and count_spans("x", "") == []
