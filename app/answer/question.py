"""Question analysis (pure): a question → its focus, its parts and the kind of answer each part wants.

The classic non-neural QA step. Cue phrases in both languages (``question.toml``) say what kind of
answer a clause asks for (an apiVersion, a flag, a default, a quantity…); a question with several such
clauses ("…which apiVersion, and which field…", "…と、…は？") is split into parts, each typed by its most
specific cue. The focus is what the question is about: product names the corpus documents and the
identifiers the user typed (``ResourceFlavor``, ``slurm.conf``).

    >>> q = analyse("What apiVersion do Kueue Topology objects use, and which label key marks a rack?", {"Kueue"})
    >>> [p.answer_type for p in q.parts], q.focus
    (['api_version', 'key'], 'Kueue · apiVersion · Topology')

Deliberately left out: parsing (a dependency parse would add a model for little gain on questions this
short) and anything keyed on particular questions: cues are general wording.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import cast

from app.models import VALUE_TYPES, AnswerType, Qualifier, QuestionPart, TypedQuestion
from core.text import content_tokens, ends_as_statement, normalize

LEXICON_PATH = Path(__file__).with_name("question.toml")


@dataclass(frozen=True)
class Lexicon:
    order: tuple[str, ...]
    types: dict[str, tuple[re.Pattern[str], ...]]
    qualifiers: dict[str, tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]]
    cue_words: frozenset[str]


@lru_cache(maxsize=2)
def lexicon(path: Path = LEXICON_PATH) -> Lexicon:
    with path.open("rb") as fh:
        data = tomllib.load(fh)

    def compiled(patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p) for p in patterns)

    types = {name: compiled([*cues.get("en", []), *cues.get("ja", [])]) for name, cues in data["types"].items()}
    qualifiers = {name: (compiled(q["question"]), compiled(q["unit"])) for name, q in data["qualifiers"].items()}
    words = [*data["cue_words"]["en"], *data["cue_words"]["ja"]]
    cue_tokens = {t for w in words for t in content_tokens(w)} | {w.lower() for w in words}
    return Lexicon(tuple(data["order"]), types, qualifiers, frozenset(cue_tokens))


def cued_types(text: str, lex: Lexicon | None = None) -> list[str]:
    """Answer types whose cues occur in ``text``, most specific first (the lexicon's order)."""
    lex = lex or lexicon()
    norm = normalize(text).strip()
    return [name for name in lex.order if any(p.search(norm) for p in lex.types[name])]


def qualifiers_of(text: str, lex: Lexicon | None = None) -> list[Qualifier]:
    """What the part bounds or qualifies: a limit, a default, a percentage, money, a time."""
    lex = lex or lexicon()
    norm = normalize(text)
    return [cast(Qualifier, name) for name, (asked, _) in lex.qualifiers.items() if any(p.search(norm) for p in asked)]


def unit_has_qualifier(qualifier: str, text: str, lex: Lexicon | None = None) -> bool:
    """Does a unit's text state the kind of value a qualifier asks for ("up to", "by default", "%")?"""
    lex = lex or lexicon()
    norm = normalize(text)
    return any(p.search(norm) for p in lex.qualifiers[qualifier][1])


# Where one asked thing ends and the next begins: sentence ends, "; ", ", and", "and also", "、" or "と、"
# between clauses, "また", "あと", "それと". A plain "and" / "と" only splits between two cued clauses.
_HARD = re.compile(r"(?<=[?？。!！])\s*|;\s+|\n+")
_SOFT = re.compile(
    r",?\s+(?:and|also|plus|as well as)\s+(?:also\s+)?|,\s+|と?、\s*|(?:また|あと|それと|それから)、?|と(?!、)"
)
_PLURAL = re.compile(
    # a word after "that", "who" or "it" is its verb ("the label that names a rack"), not a plural noun
    r"(?<!\bthat )(?<!\bwho )(?<!\bit )\b(flags|options|lines|settings|fields|keys|annotations|labels|parameters|variables|commands|values|names"
    r"|components|resources|plugins|steps|sysctls|entries)\b|(どんな|どの|何).{0,8}(たち|ら|一覧)|それぞれ|全部|すべて|流れ|手順"
)


def _clauses(question: str) -> list[str]:
    out: list[str] = []
    for sentence in _HARD.split(question):
        if not sentence.strip():
            continue
        pieces: list[str] = []
        last = 0
        for m in _SOFT.finditer(sentence):
            left, right = sentence[last : m.start()], sentence[m.end() :]
            # split only between two clauses that each ask for something (a yes/no opening like "is it…" is
            # no clause of its own); a bare "と" only right after an asked thing ("apiVersionと…")
            if m.group() == "と" and not _ends_with_cue(left):
                continue
            if _asks(left) and _asks(right):
                pieces.append(sentence[last : m.start()])
                last = m.end()
        pieces.append(sentence[last:])
        out.extend(p.strip(" ,、") for p in pieces if p.strip(" ,、"))
    return out


def _asks(text: str) -> bool:
    return any(t != "yes_no" for t in cued_types(text))


def _ends_with_cue(text: str) -> bool:
    tail = normalize(text)[-14:]
    lex = lexicon()
    return any(p.search(tail) and p.search(tail).end() == len(tail) for name in lex.order for p in lex.types[name])  # type: ignore[union-attr]


def _merged(typed: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Neighbouring clauses asking for the same type are one part ("if I leave X out, what is its default")."""
    out: list[tuple[str, str]] = []
    for clause, kind in typed:
        if out and out[-1][1] == kind:
            out[-1] = (f"{out[-1][0]} {clause}", kind)
        else:
            out.append((clause, kind))
    return out


# The asked noun of a clause: right after "which/what" (a few words may sit between: "which Kubernetes
# release"), or at the end of a Japanese clause ("…のapiVersionは？", "…環境変数ってある？").
_WH = re.compile(r"\b(which|what|what's|whats)\b((?:\s+[\w.'/-]+){0,4})\s*$")
_ASIDE = re.compile(
    r"[（(][^）)]{0,60}[）)]"
)  # "環境変数（PYXIS_DEFAULT_IMAGEみたいなもの）ってある？": the aside is not the ending
_WH_START = (
    "which",
    "what",
    "how",
    "when",
    "where",
    "who",
    "in which",
    "何",
    "どの",
    "どこ",
    "どれ",
    "いつ",
    "いくつ",
    "誰",
)
_JA_END = re.compile(r"^.{0,3}(は|って|を|が|の名前)?.{0,6}[？?]?\s*$")
# A clause ending in a condition ("コストを下げたいなら？") states a case; a value word in it is not what it asks.
_IF = re.compile(r"(なら|たら|れば)[？?]?\s*$")


# An existence question asks for the thing it names: "is there an env var that…", "環境変数ってある？".
_EXISTS = re.compile(r"^\s*(is there|are there|does .{1,40} have|do (we|you|i) have)\b|(って|は)(ある|あります|ない)")
_WH_ANY = re.compile(r"\b(which|what|how|when|where|who)\b|何|どの|どこ|どれ|いつ|いくつ|どう")
# An English question that is only a noun phrase ("And its default?", "PriorityFavorSmall default?") asks for
# the noun it ends on, as a Japanese clause ending in its noun does. A verb or a conjunction ("Is it on by
# default?", "if nodes have…, does…") makes it a sentence, and a preposition or "to" before the noun a modifier
# of something else ("a command to install the released version?").
_VERB = re.compile(
    r"\b(is|are|was|were|be|do|does|did|can|could|will|would|should|shall|may|might|must|has|have|had|if|when"
    r"|get|gets|set|use|uses|run|runs|need|needs|want)\b|[:;?]"
)
_BEFORE_HEAD = re.compile(r"\b(in|on|at|to|for|of|with|from|after|before|under|over|into|about|than)\b")


def _asked_noun(clause: str, pattern: re.Pattern[str], alone: bool = False) -> int:
    """How directly a cue of this type is what the clause asks for: 3 when the cue is the clause's first
    question word ("how often", "何台"; not the embedded "how long" of "which setting caps how long…"), 2
    right after one ("which … release"), ending a Japanese clause ("…のapiVersionは？") or ending an English
    question that is ``alone`` a noun phrase ("And its default?") unless that clause is a condition
    ("コストを下げたいなら？"), 1 in a wh- or existence question that mentions it, 0 when only mentioned ("we
    want max utilisation", "the default scheduler")."""
    norm = _ASIDE.sub("", normalize(clause))
    rank = 0
    for m in pattern.finditer(norm):
        if m.group().startswith(_WH_START) and not _WH_ANY.search(norm[: m.start()]):
            return 3
        tail = norm[m.end() :]
        ends = _JA_END.match(tail) if not norm.isascii() else alone and _noun_phrase_ends_with(norm, m)
        if _WH.search(norm[: m.start()]) or (ends and not _IF.search(tail)):
            rank = max(rank, 2)
        elif _WH_ANY.search(norm[: m.start()]) or _EXISTS.search(norm):
            rank = max(rank, 1)
    return rank


def _noun_phrase_ends_with(norm: str, cue: re.Match[str]) -> bool:
    """Whether the English question ``norm`` is a noun phrase that ends with ``cue`` ("And its default?")."""
    head = re.split(r"[.!?]\s", norm[: cue.start()])[-1]  # the asking sentence, up to the cue
    return (
        not norm[cue.end() :].strip(" ?")
        and norm.rstrip().endswith("?")
        and not _VERB.search(head)
        and not _WH_ANY.search(head)
        and not _BEFORE_HEAD.search(head + cue.group())
    )


# "How many versions", "何バージョン": a count, whatever is counted.
_HOW_MANY = re.compile(r"\bhow many\b|何(?:バージョン|リリース|種類|個|つ|台|回|人|層|段|件|ノード)|いくつ")


def _type_of(clause: str, alone: bool = False) -> AnswerType:
    """The clause's answer type: the asked value type ("which flag…", "…のapiVersionは？"); a value word
    the clause only mentions ("the default scheduler", "we want max utilisation") types nothing, so such a
    clause takes its other cues (how-to, why, yes/no) or is a plain fact question."""
    types = [t for t in cued_types(clause) if t != "yes_no"] or cued_types(clause)
    if not types:
        return "fact"
    if _HOW_MANY.search(normalize(clause)):
        return "quantity"
    lex = lexicon()
    ranks = {t: max(_asked_noun(clause, p, alone) for p in lex.types[t]) for t in types}
    best = max(ranks.values())
    if best:
        return cast(AnswerType, next(t for t in types if ranks[t] == best))
    rest = [t for t in types if t not in VALUE_TYPES]
    return cast(AnswerType, rest[0] if rest else "fact")


_COUNTED = (
    re.compile(r"\bhow many ([a-z][\w-]*)"),
    re.compile(r"\b(?:max(?:imum)? |min(?:imum)? )?number of ([a-z][\w-]*)"),
    re.compile(r"\b(?:in|how many) (seconds|minutes|hours|days|gb|mb|kb|tb|percent|ms)\b"),
    re.compile(r"何(人日|gb|mb|kb|tb|秒|分|時間|日|台|回|層|段|ノード|倍|%|円|万円)"),
    re.compile(r"([\u30a0-\u30ff\u4e00-\u9fff]{1,6})数(?:の|は|って|が)"),
)


def counted(clause: str) -> str:
    """What a quantity question counts or measures: "rings" in "how many rings", "リング" in "リング数の上限"."""
    norm = normalize(clause)
    for pattern in _COUNTED:
        m = pattern.search(norm)
        if m:
            return m.group(1)
    return ""


def attribute_words(text: str, focus: Collection[str] = ()) -> list[str]:
    """The part's content tokens that say what is asked: not cue words, not the focus entities."""
    lex = lexicon()
    own = {t for f in focus for t in content_tokens(f)}
    return [t for t in dict.fromkeys(content_tokens(text)) if t not in lex.cue_words and t not in own]


# An identifier the user typed: CamelCase, dotted or slashed names, ALL_CAPS, file names with an extension.
_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9_./-])(?:[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[a-z]+(?:[A-Z][a-z0-9]*)+"
    r"|[A-Za-z][A-Za-z0-9_-]*(?:[./][A-Za-z0-9_-]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
    r"|[A-Z][a-z]{2,}(?=\s+(?:objects?|resources?|CRDs?|kind|spec)\b))(?![A-Za-z0-9_/-])"
)


def focus_entities(question: str, names: Collection[str]) -> list[str]:
    """What the question is about: the corpus's product names it mentions, then identifiers it typed."""
    found: list[str] = []
    for name in sorted(names, key=len, reverse=True):
        pattern = rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])"
        if re.search(pattern, question, re.I) and not any(name.lower() in f.lower() for f in found):
            found.append(name)
    for m in _IDENTIFIER.finditer(question):
        word = m.group()
        if not any(word.lower() in f.lower() or f.lower() in word.lower() for f in found):
            found.append(word)
    return found


def analyse(question: str, names: Collection[str] = (), selection: bool = False, sure: bool = False) -> TypedQuestion:
    """The typed question. ``names`` are the products the corpus documents; ``selection`` says the caller
    recognised a platform-selection question (``app.advice``), which is its type unless a clause asks for
    a value ("推奨ノード数の上限は何台" wants a number, not a platform) and the caller is not ``sure``: the
    fitted decision's probability clears the bar at which a value's cue words ("何を入れるべき？") no longer
    outrank it (``app.advice.fit``)."""
    focus = focus_entities(question, names)
    clauses = _clauses(question)
    typed = _merged([(c, _type_of(c, alone=len(clauses) == 1)) for c in clauses])
    asked = [(c, t) for c, t in typed if t != "fact"]
    # a clause that asks nothing ("In Slurm's containers guide, the oci.conf example:") is the topic of every
    # part, not a part of its own: the focus and the whole question's words carry it
    if not asked:
        asked = [(question.strip(), "fact")]
    parts = [
        QuestionPart(
            text=c,
            answer_type=cast(AnswerType, t),
            attribute=" ".join(attribute_words(c)),
            qualifiers=qualifiers_of(c),
            plural=bool(_PLURAL.search(normalize(c))),
            counted=counted(c) if t == "quantity" else "",
        )
        for c, t in asked
    ]
    main = next((p.answer_type for p in parts if p.answer_type in VALUE_TYPES), parts[0].answer_type)
    if selection and (sure or not _asks_value(parts)):
        # a platform choice, unless a clause asks for a value ("推奨ノード数の上限は何台": a number); a clause
        # that states something with a value's words ("スループット重視。", "64 nodes, fixed.") asks nothing
        main = "selection"
        parts = [p.model_copy(update={"answer_type": "selection"}) if i == 0 else p for i, p in enumerate(parts)]
    return TypedQuestion(focus=" · ".join(focus), answer_type=main, parts=parts)


def _asks_value(parts: Sequence[QuestionPart]) -> bool:
    return any(p.answer_type in _VALUE_FIRST and not ends_as_statement(p.text) for p in parts)


def asks_value(question: str) -> bool:
    """Whether a clause of ``question`` asks for a value, which outranks a platform reading that is not sure."""
    return _asks_value(analyse(question).parts)


def inherit_type(typed: TypedQuestion, previous: TypedQuestion) -> TypedQuestion:
    """A follow-up that asks for no kind of answer of its own asks for the previous question's kind of value:
    "エントリポイントを実行させるのは？" after "Which pyxis flag bind-mounts my home?" wants a flag. Only a turn with
    one untyped part and no question word of its own inherits ("KAI Schedulerは何がベース？" asks its own), and
    only a previous question of one value type.

        >>> flag = TypedQuestion(answer_type="flag", parts=[QuestionPart(text="Which flag?", answer_type="flag")])
        >>> inherit_type(analyse("エントリポイントを実行させるのは？"), flag).answer_type
        'flag'
    """
    kinds = {p.answer_type for p in previous.parts}
    if len(typed.parts) != 1 or typed.answer_type != "fact" or len(kinds) != 1 or not kinds <= VALUE_TYPES:
        return typed
    part = typed.parts[0]
    if _WH_ANY.search(normalize(part.text)):
        return typed
    kind = kinds.pop()
    return typed.model_copy(update={"answer_type": kind, "parts": [part.model_copy(update={"answer_type": kind})]})


# Types that outrank a platform-selection reading of the same question.
_VALUE_FIRST = frozenset(["api_version", "flag", "key", "default", "version", "date", "command", "quantity"])
