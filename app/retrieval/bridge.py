"""A term bridge from Japanese words to English ones, from the JMdict dictionary (pure lookups, offline).

Evidence scoring counts the question's concepts a unit covers. Across scripts that is near zero: "保守"
never occurs in an English sentence about maintenance. The bridge gives each Japanese content word its
dictionary glosses ("保守" → maintenance, "ポリシー" → policy, "伸縮" → elasticity), so an English unit can
cover a Japanese question's concept, and BM25 can find English passages for a Japanese question. A spelling
that is several words gives each one's first sense, the common word first ("例": custom, and example); a
compound the tokenizer splits gives its words its own glosses too ("読み取り" + "専用": read-only). JMdict
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
from collections.abc import Callable
from functools import lru_cache

from core.text import content_runs

SENSES = 2  # a word's first senses carry its common meanings; later ones add noise
GLOSSES = 3  # glosses per sense
ENTRIES = 3  # homographs read: the common ones, then the others in dictionary order
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
    """English glosses of a Japanese headword (kanji or kana spelling), most common senses first.

    A spelling can be several words ("例" is れい, an example, and ためし, a custom; "キュー" is a cue and a
    queue): the entries marked common come first, the first of them gives its first senses, each other entry
    its first sense."""
    db = _db()
    if db is None or not word:
        return ()
    entries = _entries(db, "Kanji", "KJP", word) or _entries(db, "Kana", "KNP", word)
    out: list[str] = []
    for n, idseq in enumerate(entries):
        senses = SENSES if n == 0 else 1
        for (sid,) in db.execute("SELECT ID FROM Sense WHERE idseq=? ORDER BY ID LIMIT ?", (idseq, senses)).fetchall():
            # "+lang" keeps SQLite on the sid index (the lang index would scan every English gloss)
            for (text,) in db.execute(
                "SELECT text FROM SenseGloss WHERE sid=? AND +lang='eng' LIMIT ?", (sid, GLOSSES)
            ):
                gloss = " ".join(_PAREN.sub(" ", text).split())
                if gloss and len(gloss.split()) <= MAX_GLOSS_WORDS:
                    out.append(gloss)
    return tuple(dict.fromkeys(out))


def _entries(db: sqlite3.Connection, table: str, priority: str, word: str) -> list[int]:
    """The dictionary entries spelled ``word``: those with a priority mark (a common word) first."""
    rows = db.execute(
        f"SELECT s.idseq FROM {table} s WHERE s.text=? "  # table names: constants of this module
        f"ORDER BY EXISTS(SELECT 1 FROM {priority} p WHERE p.kid=s.ID) DESC, s.idseq LIMIT ?",
        (word, ENTRIES),
    ).fetchall()
    return list(dict.fromkeys(r[0] for r in rows))


def english_words(token: str) -> list[str]:
    """The glosses of a Japanese content token (``w:`` + normalised form); empty for other tokens."""
    return list(glosses(token[2:])) if token.startswith("w:") else []


COMPOUND_WORDS = 3  # the longest run of words read as one dictionary word


@lru_cache(maxsize=4_096)
def compound_glosses(text: str) -> dict[str, tuple[str, ...]]:
    """For each word of a compound the dictionary knows as one word ("読み取り" + "専用" = 読み取り専用,
    "read-only"), the compound's glosses: read word by word, its parts gloss as "reading" and "exclusive use"."""
    out: dict[str, list[str]] = {}
    for run in content_runs(text):
        for size in range(COMPOUND_WORDS, 1, -1):
            for start in range(len(run) - size + 1):
                words = run[start : start + size]
                found = glosses("".join(surface for surface, _ in words))
                for _, token in words:
                    out.setdefault(token, []).extend(found)
    return {token: tuple(dict.fromkeys(found)) for token, found in out.items() if found}


def text_bridge(text: str) -> Callable[[str], list[str]]:
    """The bridge for the words of ``text``: a word's own glosses, then those of a compound it is part of."""
    compounds = compound_glosses(text) if not text.isascii() else {}
    return lambda token: [*english_words(token), *compounds.get(token, ())]
