"""Tokenisation, glossary expansion, fusion and follow-up resolution (pure)."""

from __future__ import annotations

import pytest

from app.retrieval.fusion import rrf, rrf_complete
from app.retrieval.glossary import Glossary, load_glossary
from core.text import char_bigrams, content_tokens, detect_language, ends_as_statement, question_language, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("a", ["a"]),
        ("🙂", []),
        ("学習", ["w:学習"]),
        ("Schedulers", ["scheduler"]),
        ("ＧＰＵ利用率", ["gpu", "w:利用率"]),
        ("ワーカノードを追加した", ["w:ワーカー", "w:ノード", "w:追加", "w:為る"]),
        ("Kubernetes 1.31 nodes", ["kubernete", "1.31", "node"]),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_char_bigrams_need_no_dictionary() -> None:
    assert char_bigrams("GPU利用率") == ["gpu", "利用", "用率"]
    assert char_bigrams("学") == ["学"]


def test_content_tokens_drop_function_words() -> None:
    tokens = content_tokens("Which is better for the control plane?")
    assert "which" not in tokens and "the" not in tokens
    assert {"control", "plane"} <= set(tokens)


@pytest.mark.parametrize(
    ("text", "lang"),
    [("GPU利用率はどちらが高い？", "ja"), ("Which one uses more GPU?", "en"), ("Slurmの構築は?", "ja"), ("", "en")],
)
def test_detect_language(text: str, lang: str) -> None:
    assert detect_language(text) == lang


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        # a short Japanese turn that is mostly a Latin name: the particle says Japanese
        ("KAI Schedulerは？", "ja"),
        ("MultiKueueだと？", "ja"),
        ("GPU利用率はどちらが高い？", "ja"),
        ("And for KAI Scheduler?", "en"),
        ("", "en"),
    ],
)
def test_question_language(text: str, lang: str) -> None:
    assert question_language(text) == lang


def test_glossary_expands_both_ways() -> None:
    g = Glossary([["コントロールプレーン", "control plane"], ["推論", "inference"]])
    assert g.expansions("How big is the control plane?") == ["コントロールプレーン"]
    assert g.expansions("推論にも使える？") == ["inference"]
    assert g.expansions("nothing relevant") == []
    # Latin terms match whole phrases on word boundaries: 'plane' alone is not 'control plane'
    assert g.expansions("a plane ticket") == []
    assert g.expansions("remote controlplane") == []


def test_shipped_glossary_loads_and_covers_core_terms() -> None:
    g = load_glossary()
    assert len(g.groups) > 50
    assert "gpu利用率" in g.expansions("What GPU utilization does Slurm reach?")
    assert "control plane" in g.expansions("コントロールプレーンの資源は？")


def test_rrf_prefers_items_ranked_by_both() -> None:
    fused = rrf([["a", "b", "c"], ["c", "b", "d"]])
    assert {item for item, _ in fused[:2]} == {"b", "c"}
    assert {item for item, _ in fused} == {"a", "b", "c", "d"}
    scores = dict(fused)
    assert scores["b"] > scores["a"] and scores["b"] > scores["d"]


def test_rrf_weights() -> None:
    fused = dict(rrf([["a"], ["b"]], weights=[2.0, 1.0]))
    assert fused["a"] > fused["b"]


def test_rrf_complete_does_not_punish_a_candidate_outside_one_top_list() -> None:
    # "x" is BM25's best but outside the dense top list; plain RRF ranks it below "a" and "b", which
    # both lists rank mediocrely. Scored by both retrievers, it is ranked where its scores put it.
    dense_top = {"a": 0.80, "b": 0.79, "c": 0.78}
    lexical_top = {"x": 9.0, "a": 1.0, "b": 0.9}
    plain = [c for c, _ in rrf([list(dense_top), list(lexical_top)], weights=[1.0, 0.6])]
    assert plain == ["a", "b", "c", "x"]
    dense_all = {**dense_top, "x": 0.795}  # the exact cosine of x: second by dense
    lexical_all = {**lexical_top, "c": 0.0}
    complete = [c for c, _ in rrf_complete([dense_all, lexical_all], weights=[1.0, 0.6])]
    assert complete == ["a", "x", "b", "c"]


def test_content_runs_are_adjacent_japanese_content_words() -> None:
    from core.text import content_runs

    runs = content_runs("逆に読み取り専用にするのは？ and more")
    assert [surface for surface, _ in runs[1]] == ["読み取り", "専用"]
    assert runs[1][0][1] == "w:読み取る"  # the token is the normalised form, as tokenize gives it
    assert content_runs("only English here") == []


def test_a_text_ends_as_a_statement_with_a_full_stop_in_either_script() -> None:
    assert ends_as_statement("オンプレ、スループット重視。") and ends_as_statement("64 nodes, fixed. ")
    assert ends_as_statement("台数は固定です！") and ends_as_statement("Fixed fleet．")  # full-width forms
    assert not ends_as_statement("どっち？") and not ends_as_statement("Which platform?")
    assert not ends_as_statement("推奨ノード数の上限は何台")
