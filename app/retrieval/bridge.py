"""A term bridge from Japanese words to English ones, from the JMdict dictionary (pure lookups, offline).

Evidence scoring counts the question's concepts a unit covers. Across scripts that is near zero: "保守"
never occurs in an English sentence about maintenance. The bridge gives each Japanese content word its
dictionary glosses ("保守" → maintenance, "ポリシー" → policy, "伸縮" → elasticity), so an English unit can
cover a Japanese question's concept, and BM25 can find English passages for a Japanese question. JMdict
ships in the ``jamdict-data`` package as SQLite; only indexed lookups are made, a fraction of a
millisecond per word, cached.

Deliberately left out: translating sentences (no translation model ships offline) and English → Japanese
(English questions about the Japanese article read its English translation companion).

    >>> english_words("w:保守")[:1]
    ['maintenance']
"""

from __future__ import annotations

import re
import sqlite3
import threading
from functools import lru_cache

SENSES = 2  # a word's first senses carry its common meanings; later ones add noise
GLOSSES = 3  # glosses per sense
MAX_GLOSS_WORDS = 3  # "expansion and contraction" is a definition, not a term
_PAREN = re.compile(r"\([^)]*\)")
_local = threading.local()


def _db() -> sqlite3.Connection | None:
    conn = getattr(_local, "conn", None)
    if conn is None:
        try:
            import jamdict_data

            conn = sqlite3.connect(f"file:{jamdict_data.JAMDICT_DB_PATH}?mode=ro", uri=True, check_same_thread=False)
        except Exception:  # the dictionary is optional: without it the bridge is empty
            return None
        _local.conn = conn
    return conn


@lru_cache(maxsize=16_384)
def glosses(word: str) -> tuple[str, ...]:
    """English glosses of a Japanese headword (kanji or kana spelling), most common senses first."""
    db = _db()
    if db is None or not word:
        return ()
    row = (
        db.execute("SELECT idseq FROM Kanji WHERE text=? LIMIT 1", (word,)).fetchone()
        or db.execute("SELECT idseq FROM Kana WHERE text=? LIMIT 1", (word,)).fetchone()
    )
    if row is None:
        return ()
    out: list[str] = []
    for (sid,) in db.execute("SELECT ID FROM Sense WHERE idseq=? ORDER BY ID LIMIT ?", (row[0], SENSES)).fetchall():
        # "+lang" keeps SQLite on the sid index (the lang index would scan every English gloss)
        for (text,) in db.execute("SELECT text FROM SenseGloss WHERE sid=? AND +lang='eng' LIMIT ?", (sid, GLOSSES)):
            gloss = " ".join(_PAREN.sub(" ", text).split())
            if gloss and len(gloss.split()) <= MAX_GLOSS_WORDS:
                out.append(gloss)
    return tuple(dict.fromkeys(out))


def english_words(token: str) -> list[str]:
    """The glosses of a Japanese content token (``w:`` + normalised form); empty for other tokens."""
    return list(glosses(token[2:])) if token.startswith("w:") else []
