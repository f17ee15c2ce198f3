"""Language-aware text helpers (pure): normalisation, language detection and lexical tokens.

Japanese has no spaces, so runs of kana/kanji become character bigrams (plus the single character for
one-character runs); Latin words are lower-cased, NFKC-normalised and lightly stemmed. No dictionary
download is needed and the same tokens serve BM25, evidence scoring and eval overlap.

    >>> tokenize("GPU利用率はどちら? Schedulers")
    ['gpu', '利用', '用率', '率は', 'はど', 'どち', 'ちら', 'scheduler']
"""

from __future__ import annotations

import re
import unicodedata

from ingest.documents import detect_language

__all__ = ["content_tokens", "detect_language", "normalize", "tokenize"]

_LATIN = re.compile(r"[a-z0-9]+(?:[._+-][a-z0-9]+)*")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaffー々〆]+")

# Function words that carry no topic; dropped so that overlap measures content, not grammar.
EN_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "so",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "it",
        "its",
        "it's",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "i",
        "we",
        "you",
        "they",
        "he",
        "she",
        "me",
        "us",
        "them",
        "my",
        "our",
        "your",
        "their",
        "his",
        "her",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "not",
        "no",
        "yes",
        "just",
        "also",
        "only",
        "very",
        "more",
        "most",
        "much",
        "many",
        "some",
        "any",
        "each",
        "every",
        "all",
        "both",
        "either",
        "neither",
        "one",
        "two",
        "use",
        "using",
        "used",
        "vs",
        "versus",
        "between",
        "among",
        "than",
        "per",
        "via",
        "like",
        "get",
        "got",
        "make",
        "makes",
        "made",
        "let",
        "lets",
        "want",
        "need",
        "needs",
        "tell",
        "me",
        "please",
        "say",
        "says",
        "said",
        "according",
        "does",
    ]
)
JA_STOP_BIGRAMS = frozenset(
    [
        "です",
        "ます",
        "ある",
        "いる",
        "する",
        "した",
        "して",
        "から",
        "まで",
        "より",
        "ため",
        "こと",
        "もの",
        "よう",
        "どち",
        "ちら",
        "どっ",
        "っち",
        "ですか",
        "ますか",
        "には",
        "では",
        "とは",
        "のは",
        "への",
        "での",
        "との",
        "でき",
        "きる",
        "れる",
        "られ",
        "なる",
        "なり",
    ]
)


def normalize(text: str) -> str:
    """NFKC (full-width → half-width, compatibility forms) and lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def _stem(word: str) -> str:
    """Tiny English suffix stripper: enough to match 'schedulers'/'scheduler', 'nodes'/'node'."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Lexical tokens: stemmed Latin words and CJK character bigrams, in text order."""
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


def content_tokens(text: str) -> list[str]:
    """Tokens without English stopwords and grammatical Japanese bigrams (for overlap and coverage)."""
    return [
        t for t in tokenize(text) if (t not in EN_STOPWORDS and t not in JA_STOP_BIGRAMS and len(t) > 1) or _is_kanji(t)
    ]


def _is_kanji(token: str) -> bool:
    return len(token) == 1 and "\u4e00" <= token <= "\u9fff"
