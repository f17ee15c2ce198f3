"""Negation and hedge scope of a cue in its clause (pure), in both languages: features, not decisions.

For a cue phrase found in a clause ("inference" in "We don't need inference, ok?"), what governs it:
how many negations reach it (English before it, Japanese after it up to the next clause link; two make
a double negation), whether the clause says the thing is acceptable or of no concern ("two systems is
fine", "気にしません", "こだわらない": indifference, whose "not" is no negation), whether it is hedged
("maybe", "かもしれない", "予定"), and whether it sits in a condition ("if", "なら"). A tag question
("…, ok?", "…, right?", "…よね？") is neither a negation nor indifference: it asks for agreement.

    >>> s = scope("we don't need inference, ok?", 16, 25)
    >>> s.negations, s.indifferent, s.tag
    (1, False, True)
    >>> scope("推論はしないわけではない", 0, 2).negations
    2

Deliberately left out: what a negated cue means (the fitted reader weighs these features against the cue
and the embedder's similarity, ``app.advice.facet_model``) and clause splitting (``core.situation``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# English negators before the cue, within its clause (at most this many characters back).
_EN_WINDOW = 48
_EN_NEG = re.compile(
    r"\b(no|not|never|without|nothing|nobody|none|zero|neither|nor|don't|doesn't|didn't|won't|isn't|aren't|wasn't"
    r"|can't|cannot|shouldn't|wouldn't|drop(?:ping|ped)?|rather than|instead of|other than|no longer|no need"
    r"|stop(?:ped)? (?:using|running|doing)|give up|away from|move off|forget(?: about)?|skip(?:ping)?)\b"
)
# English negation said after the thing ("inference is off the table", "…isn't needed").
_EN_NEG_AFTER = re.compile(
    r"^[^.;,]{0,16}?\b((is|are|'s|'re) (off the table|gone|out|dropped|not (needed|required|planned|happening|a (requirement|priority|goal)))"
    r"|(isn't|aren't) (needed|required|planned|happening|a (requirement|priority|goal)))\b"
)
# Japanese negation after the cue, up to the next clause link.
_JA_NEG = re.compile(
    r"ない|なく|ません|ず(?:に|、|$)|ゼロ|皆無|不要|要らな|いらな|なし|無し|ではなく|じゃなく|以外|やめ|止め|予定はな|やらな|外し|諦め"
)
_JA_LINK = re.compile(
    r"(?<=[っ])て|(?<![でにはがをもと])て(?!い|お|も)|(?<!ではな)(?<!な)で(?![はもす])|なら|ので|から|、"
)
# Saying a thing is acceptable or of no concern: its negation words ("don't mind", "構いません") are not a
# negation of the thing.
_INDIFFERENT = re.compile(
    r"\b((is|are|'s|'re|be|seems?) (fine|ok|okay|acceptable|no problem|not a problem)|fine (by|with) (us|me)|ok with"
    r"|(don't|do not|doesn't|wouldn't) (mind|care)|no problem|not an issue|happy with|doesn't matter|don't need (one|a single))\b"
    r"|問題(は)?(あり)?ません|問題ない|気にしません|気にしない|(構|かま)いません|(構|かま)わない|大丈夫|平気|抵抗は(ありません|ない)"
    r"|こだわらない|こだわりません|こだわりはない|どちらでも(いい|よい)|別に(いい|よい)|(でも|ても)(いい|よい)"
)
# "…, ok?", "…, right?", "…よね？": a request for agreement.
_TAG = re.compile(r",\s*(ok|okay|right|yeah|correct|no)\s*[?？]?\s*$|よね\s*[？?]?\s*$|でしょ(う)?\s*[？?]?\s*$")
# Japanese words that end in a negative form without negating anything: "few", "only", "indispensable".
_LEXICAL_NEG = re.compile(r"少な(い|く)|足りな|しか(い|あり)?(ない|ません)|欠かせな|外せな|譲れな|譲らな|限らな|すくな")
_HEDGE = re.compile(
    r"\b(maybe|might|perhaps|probably|possibly|may|could|eventually|someday|later|considering|thinking about"
    r"|not sure|unsure|plan(ning)? to|hope to|likely)\b"
    r"|かもしれ|たぶん|多分|おそらく|予定|検討|可能性|いずれ|将来|そのうち|ゆくゆく|つもり|かも"
)
_CONDITION = re.compile(
    r"\b(if|unless|when|in case|suppose|assuming|whether)\b|なら|ならば|たら|場合|とすれば|としたら"
)


@dataclass(frozen=True)
class Scope:
    """What governs one cue in its clause."""

    negations: int = 0  # negations reaching the cue (2 = a double negation)
    indifferent: bool = False  # "X is fine", "Xは気にしない"
    hedged: bool = False
    conditional: bool = False
    tag: bool = False  # the clause ends asking for agreement ("…, ok?")

    @property
    def negated(self) -> bool:
        return self.negations % 2 == 1 and not self.indifferent


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


def _ja_after(after: str) -> str:
    link = _JA_LINK.search(after)
    return after[: link.start()] if link else after


def scope(clause: str, start: int, end: int) -> Scope:
    """The scope of the cue at ``clause[start:end]`` (``clause`` NFKC-lower-cased, as the cues see it)."""
    before = clause[max(0, start - _EN_WINDOW) : start]
    after = clause[end:]
    near_after = after[:28]
    ja = not after[:12].isascii()
    ja_after = _ja_after(after) if ja else ""
    indifferent = bool(_INDIFFERENT.search(before[-24:] + clause[start:end] + near_after))
    # an indifference phrase's own negation word is not a negation of the cue, nor is a lexical negative
    # form that may begin inside the cue ("3人しかいません"): both are blanked, positions kept
    plain_before = _INDIFFERENT.sub(" ", re.split(r"[,、]", before)[-1])
    tail = clause[max(start, end - 3) : end]
    blanked = _LEXICAL_NEG.sub(_blank, _INDIFFERENT.sub(_blank, tail + ja_after))
    plain_after = blanked[len(tail) :]
    negations = len(_EN_NEG.findall(plain_before)) + len(_JA_NEG.findall(plain_after))
    if _EN_NEG_AFTER.search(after):
        negations += 1
    # "double negation" in one Japanese predicate: "しないわけではない", "ないとは言えない"
    if re.search(r"(ない|ません)(わけ|こと|とは)", plain_after):
        negations = max(negations, 2)
    return Scope(
        negations=min(negations, 2),
        indifferent=indifferent,
        hedged=bool(_HEDGE.search(clause)),
        conditional=bool(_CONDITION.search(clause[:start]) or (ja and _CONDITION.search(after[:24]))),
        tag=bool(_TAG.search(clause[end:])),
    )
