"""The Japanese → English term bridge reads the real JMdict database (jamdict-data, shipped on PyPI)."""

from __future__ import annotations

from app.retrieval.bridge import compound_glosses, english_words, glosses, text_bridge


def test_a_common_word_comes_before_a_rare_homograph() -> None:
    # 数 is かず/すう ("number", marked common) and しばしば ("often"): the common entry leads
    assert glosses("数")[0] == "number"
    assert "often" in glosses("数")


def test_every_homograph_contributes_its_first_sense() -> None:
    assert "example" in glosses("例")  # れい, beside the common ためし ("custom")
    assert "table" in glosses("表")  # ひょう, beside the common おもて ("surface")
    assert "queue" in glosses("キュー")  # beside "cue"


def test_a_word_the_dictionary_lacks_has_no_glosses() -> None:
    assert glosses("ぬぬぬぬ") == ()
    assert glosses("") == ()


def test_only_japanese_content_tokens_are_bridged() -> None:
    assert english_words("w:保守")[0] == "maintenance"
    assert english_words("scheduler") == []


def test_a_compound_the_dictionary_knows_glosses_each_of_its_words() -> None:
    # Sudachi splits 読み取り専用 into 読み取り + 専用; read word by word they gloss "reading", "exclusive use"
    found = compound_glosses("逆に読み取り専用にするのは？")
    assert "read-only" in found["w:読み取る"]
    assert "read-only" in found["w:専用"]
    assert "w:逆" not in found


def test_the_bridge_of_a_text_adds_its_compounds_to_each_words_glosses() -> None:
    bridge = text_bridge("エントリポイントを実行させるのは？")
    assert "entry point" in bridge("w:ポイント")
    assert bridge("w:ポイント")[0] == english_words("w:ポイント")[0]
    assert text_bridge("How is it run?")("w:ポイント") == english_words("w:ポイント")
