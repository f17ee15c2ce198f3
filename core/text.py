"""Language-aware text helpers (pure): normalisation, language detection and lexical tokens.

Latin words are NFKC-normalised, lower-cased and lightly stemmed. Japanese has no spaces, so it is
segmented with Sudachi (its dictionary ships on PyPI as sudachidict_core; nothing is downloaded) and
only content words are kept, in their normalised form (ワーカ → ワーカー, 出 → 出る). Measured on the
golden set, words beat character bigrams for BM25 (fact@3 .53 vs .42). ``char_bigrams`` remains as a
dictionary-free tokenisation for text overlap.

    >>> tokenize("GPU利用率はどちら? Schedulers")
    ['gpu', 'scheduler', 'w:利用率']
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

__all__ = [
    "content_tokens",
    "detect_language",
    "join_sentences",
    "normalize",
    "question_language",
    "split_sentences",
    "tokenize",
]

_LATIN = re.compile(r"[a-z0-9]+(?:[._+-][a-z0-9]+)*")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaffー々〆]+")

# Function words that carry no topic; dropped so that overlap measures content, not grammar.
EN_STOPWORDS = frozenset(
    """
    a an the and or but if then than so of to in on at by for with from into onto over under about as is are
    was were be been being do does did doing have has had having it its it's this that these those there here
    what which who whom whose when where why how i we you they he she me us them my our your their his her
    can could should would will shall may might must not no yes just also only very more most much many some
    any each every all both either neither one two use using used vs versus between among than per via like
    get got make makes made let lets want need needs tell me please say says said according does
    """.split()  # noqa: SIM905 - a word list reads better as text
)
# Generic Japanese words (normalised forms) that say nothing about the topic.
JA_STOPWORDS = frozenset(
    "w:" + w
    for w in """
    何 其々 事 為る 成る 居る 有る 出来る 言う 思う 物 様 方 所 時 中 上 下 前 後 度 場合 際 為 的 等 無い 良い 良く 違う 使う 分かる 教える 知る 出る 入る 見る 来る 行く
    呉れる 貰う 欲しい 頂く 下さる 御 ござる 此れ 其れ 彼れ 本当 一体 結局 一番 沢山 位 程 辺り 具合 感じ 話 件 点 面 側
    """.split()  # noqa: SIM905
)


def normalize(text: str) -> str:
    """NFKC (full-width → half-width, compatibility forms) and lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def ends_as_statement(text: str) -> bool:
    """Whether ``text`` ends as a statement does (a full stop), not as a question: "スループット重視。"."""
    return normalize(text).rstrip().endswith((".", "。", "!"))


def _stem(word: str) -> str:
    """Tiny English suffix stripper: enough to match 'schedulers'/'scheduler', 'nodes'/'node'."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_CONTENT_POS = ("名詞", "動詞", "形容詞", "形状詞", "副詞", "接頭辞", "接尾辞")


@lru_cache(maxsize=1)
def _dictionary() -> Any:
    from sudachipy import Dictionary

    return Dictionary(dict="core")


_local = threading.local()


def _sudachi() -> Any:
    """This thread's tokenizer: a Sudachi tokenizer is not re-entrant ("already in use" under load)."""
    tokenizer = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        tokenizer = _local.tokenizer = _dictionary().tokenizer()
    return tokenizer


def _morphemes(text: str) -> list[tuple[str, str]]:
    """Each Sudachi morpheme (mode B) of ``text`` as (surface, token): the token is ``w:`` + the normalised
    form for a Japanese content word, "" for anything else (particles, punctuation, Latin words)."""
    from sudachipy import SplitMode

    out = []
    for m in _sudachi().tokenize(text, SplitMode.B):
        surface = m.surface()
        content = bool(_CJK_RUN.search(surface)) and m.part_of_speech()[0] in _CONTENT_POS
        out.append((surface, f"w:{m.normalized_form()}" if content else ""))
    return out


def japanese_words(text: str) -> list[str]:
    """Content words of Japanese text (Sudachi, mode B, normalised forms); Latin words are skipped."""
    return [token for _, token in _morphemes(text) if token]


def content_runs(text: str) -> list[list[tuple[str, str]]]:
    """Runs of adjacent Japanese content words, each word as (surface, token): "読み取り専用にする" gives
    [[("読み取り", "w:読み取る"), ("専用", "w:専用")], [("する", "w:為る")]] (a compound the dictionary may
    know as one word)."""
    runs: list[list[tuple[str, str]]] = [[]]
    for surface, token in _morphemes(normalize(text)):
        if token and _CJK_RUN.fullmatch(surface):
            runs[-1].append((surface, token))
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if r]


@lru_cache(maxsize=65_536)
def _tokens(text: str) -> tuple[str, ...]:
    norm = normalize(text)
    latin = [(m.start(), _stem(m.group())) for m in _LATIN.finditer(norm)]
    if not _CJK_RUN.search(norm):
        return tuple(tok for _, tok in latin)
    return tuple(tok for _, tok in latin) + tuple(japanese_words(norm))


def tokenize(text: str) -> list[str]:
    """Lexical tokens: stemmed Latin words, then Japanese content words (``w:`` + normalised form)."""
    return list(_tokens(text))


def char_bigrams(text: str) -> list[str]:
    """Latin words plus CJK character bigrams: a dictionary-free tokenisation (used for text overlap)."""
    norm = normalize(text)
    tokens: list[tuple[int, str]] = [(m.start(), _stem(m.group())) for m in _LATIN.finditer(norm)]
    for run in _CJK_RUN.finditer(norm):
        chars = run.group()
        if len(chars) == 1:
            tokens.append((run.start(), chars))
        else:
            tokens.extend((run.start() + i, chars[i : i + 2]) for i in range(len(chars) - 1))
    tokens.sort(key=lambda pair: pair[0])
    return [tok for _, tok in tokens]


# Stopwords as the tokenizer leaves them: the suffix stripper turns "does" into "doe" and "this" into "thi".
_EN_STOP_TOKENS = EN_STOPWORDS | frozenset(_stem(w) for w in EN_STOPWORDS)


def content_tokens(text: str) -> list[str]:
    """Tokens without English stopwords and generic Japanese words (for overlap and coverage)."""
    return list(_content_tokens(text))


@lru_cache(maxsize=65536)
def _content_tokens(text: str) -> tuple[str, ...]:
    # the same units and questions are read again and again (every part, every candidate feature): tokenise once
    return tuple(t for t in tokenize(text) if t not in _EN_STOP_TOKENS and t not in JA_STOPWORDS and len(t) > 1)


# A sentence ends at Japanese full stops/marks (no space needed) or at .!? followed by a space, except after an
# abbreviation that a sentence goes on from: "(e.g. AI/ML inference)" cut there leaves two halves that each
# say nothing. "etc." ends a sentence unless a lower-case word goes on after it.
_JAPANESE_ENDS = ("。", "！", "？")
_SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])\s+(?=\S)")
_ABBREVIATION = re.compile(r"(?:^|[^\w.])(?:e\.g|i\.e|vs|cf|viz|approx|incl|resp)\.$", re.IGNORECASE)
_ETC = re.compile(r"(?:^|[^\w.])etc\.$", re.IGNORECASE)
_ABBREVIATION_SPAN = len(" approx.")  # the longest abbreviation and the character before it


def detect_language(text: str) -> str:
    """'ja' when kana or kanji make up a noticeable share of the letters, else 'en'.

    >>> detect_language("GPU利用率はどちらが高い？"), detect_language("Which is faster?")
    ('ja', 'en')
    """
    cjk = sum(1 for ch in text if "\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff")
    letters = sum(1 for ch in text if ch.isalpha())
    return "ja" if letters and cjk / letters > 0.15 else "en"


def question_language(text: str) -> str:
    """The language of a question: 'ja' when it has hiragana (Japanese grammar: particles, verb endings),
    else as ``detect_language``. A short Japanese turn is mostly a Latin name ("KAI Schedulerは？"), which
    the letter share reads as English; documents keep ``detect_language``.

    >>> question_language("KAI Schedulerは？"), detect_language("KAI Schedulerは？"), question_language("And Kueue?")
    ('ja', 'en', 'en')
    """
    return "ja" if any("\u3040" <= ch <= "\u309f" for ch in text) else detect_language(text)


def split_sentences(text: str) -> list[str]:
    """Split at sentence ends, keeping every character (pieces concatenate back to ``text``).

    >>> split_sentences("GPUを使う。速い！ Next one. Done")
    ['GPUを使う。', '速い！', ' Next one. ', 'Done']
    >>> split_sentences("Run workloads (e.g. AI/ML inference). Next, etc. and more.")
    ['Run workloads (e.g. AI/ML inference). ', 'Next, etc. and more.']
    """
    pieces: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        before = text[max(start, match.start() - _ABBREVIATION_SPAN) : match.start()]
        if _ABBREVIATION.search(before) or (_ETC.search(before) and text[end : end + 1].islower()):
            continue
        if end > start:
            pieces.append(text[start:end])
            start = end
    if start < len(text):
        pieces.append(text[start:])
    return [p for p in pieces if p]


def join_sentences(sentences: Sequence[str]) -> str:
    """Sentences of one paragraph as one text: a space after a Latin sentence, none after a Japanese one.

    >>> join_sentences(["It runs.", "It stops."]), join_sentences(["速い。", "安い。"])
    ('It runs. It stops.', '速い。安い。')
    """
    out = ""
    for sentence in (s.strip() for s in sentences):
        if sentence:
            out += sentence if not out or out.endswith(_JAPANESE_ENDS) else f" {sentence}"
    return out
