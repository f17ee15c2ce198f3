"""Negation and hedge scope of a cue in its clause (pure), in both languages: features, not decisions.

For a cue phrase found in a clause ("inference" in "We don't need inference, ok?"), what governs it:
how many negations reach it (English before it, in its own conjunct; Japanese after it up to the next
clause link; two make a double negation), whether the clause says the thing is acceptable or of no concern
("two systems is fine", "気にしません", "こだわらない": indifference, whose "not" is no negation), whether it is hedged
("maybe", "かもしれない", "予定"), and whether it sits in a condition ("if", "なら"). A tag question
("…, ok?", "…, right?", "…よね？") is neither a negation nor indifference: it asks for agreement. A clause that
gives the thing to another party ("serving is done by a partner", 「推論は外部に任せる」) says so apart: no negation
says it, yet the asker does not do it.

    >>> s = scope("we don't need inference, ok?", 14, 23)
    >>> s.negations, s.indifferent, s.tag
    (1, False, True)
    >>> scope("推論はしないわけではない", 0, 2).negations
    2

``negation_mask`` marks every character a negation reaches (no cue needed): the vocabulary features use it,
so "nothing about batch schedulers" and "batch schedulers" are different words to the fitted reader.

Deliberately left out: what a negated cue means (the fitted reader weighs these features against the cue
and the embedder's similarity, ``app.advice.facet_model``) and clause splitting (``core.situation``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Typographic apostrophes ("don’t", as phones and word processors type it) read as the ASCII one the patterns use;
# one character for one, so positions in the clause stay the same.
APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
# English negators before the cue, within its clause (at most this many characters back).
_EN_WINDOW = 48
_EN_NEG = re.compile(
    r"\b(no|not|never|without|lack(?:s|ed|ing)?|nothing|nobody|none|zero|neither|nor|don't|doesn't|didn't|won't|isn't|aren't|wasn't"
    r"|can't|cannot|shouldn't|wouldn't|drop(?:ping|ped)?|rather than|instead of|other than|no longer|no need"
    r"|stop(?:ping)? (?:using|running|doing)|stopped|quit(?:s|ting)?|ditch(?:ed|es|ing)?|abandon(?:ed|ing|s)?|scrap(?:ped|ping|s)?"
    r"|cancel(?:l?ed|l?ing|s)?|shelv(?:e|ed|es|ing)|retir(?:e|ed|es|ing)|phas(?:e|ed|ing) out"
    r"|decommission(?:ed|ing)?|giv(?:e|ing) up|gave up|(?:get|got|getting) rid of|let go of|rul(?:e|ed|ing) out"
    r"|away from|mov(?:e|ed|ing) off|forget(?: about)?|skip(?:ping)?)\b"
)
# English negation said after the thing ("inference is off the table", "…isn't needed", "serving was scrapped",
# "the cloud plan has been cancelled", "cost is no longer the point"): near the cue, or further on when the cue
# opens its clause as the subject ("integration with the rest of our tooling is not a priority"). A verb of
# ending in the passive negates as its active form does before the thing ("we scrapped serving"); "no longer
# optional" is a requirement, not a negation. Verbs of a routine pause ("we stop / shut down the cloud instances
# at night") end nothing for good: they describe an elastic fleet, so only the past "stopped" and "stop using" negate.
_EN_ENDED = (
    r"dropped|scrapped|cancell?ed|shelved|abandoned|ditched|ruled out|descoped|retired|decommissioned"
    r"|phased out|put on hold|on hold|called off|killed"
)
_EN_NEG_PREDICATE = (
    r"\b((is|are|was|were|'s|'re|has been|have been|had been|got|gets|been) (off the table|gone|out|missing|absent"
    r"|lacking|" + _EN_ENDED + r"|no longer\b(?!\s+(optional|a nice|just|only))"
    r"|not (needed|required|planned|happening|a (requirement|priority|goal))|never (needed|planned|on the table))"
    r"|(isn't|aren't|wasn't|weren't) (needed|required|planned|happening|wanted|a (requirement|priority|goal))"
    r"|out of the question|not happening|never happened|won't happen)\b"
)
_EN_NEG_AFTER = re.compile(r"^[^.;,]{0,16}?" + _EN_NEG_PREDICATE)
_EN_NEG_AFTER_SUBJECT = re.compile(r"^[^.;,]{0,48}?" + _EN_NEG_PREDICATE)
# A cue that opens its clause as the subject of a negated verb: "inference isn't something we run", "serving
# won't happen here", "training doesn't stop". Near the cue only, so a later clause's verb is not its own.
_EN_SUBJECT_NEGATED_VERB = re.compile(
    r"^[^.;,]{0,12}?\b(isn't|aren't|is not|are not|won't|will not|doesn't|does not|never|can't|cannot|stopped|ended|ceased)\b"
    r"(?!\s+(optional|negotiable|a nice))"
)
# Where a new conjunct begins: a conjunction before a subject or a negator ("we don't autoscale and we don't
# serve models", "no autoscaling and no serving"). A negation before it does not reach past it, so two such
# negations are not a double negation of one thing; "nor" begins one whatever follows.
_EN_CONJUNCT = re.compile(
    r"\b(and|but|or|so|yet|while|whereas)\s+(?=(we|i|they|you|he|she|it|our|their|no|not|never|nothing|none|nobody|no one)\b)|\bnor\b"
)
# What may stand before a cue that opens its clause as the subject: a determiner or nothing.
_SUBJECT_OPENING = re.compile(r"^\W*((the|our|any|all|their|this|that|tight|deep|much|more)\s+)?$")
# Kana or kanji: the predicate after a cue is Japanese even when the cue is followed by an English word
# ("CI/CD integrationはpriorityじゃない").
_JA_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
# Japanese negation after the cue, up to the next clause link.
_JA_NEG = re.compile(
    r"ない|なく|なけれ|ません|ず(?:に|、|$)|ゼロ|皆無|不在|不要|要らな|いらな|なし|無し|ではなく|じゃなく|以外|やめ|止め|予定はな|やらな|外し|諦め"
    # verbs and nouns of ending a plan or a thing: cancelled, withdrawn, put off, back to a blank page, ended
    r"|中止|撤回|見送|白紙|打ち切|廃止|解約|凍結|対象外|立ち消え|断念|撤退|取り下げ|外れ|お蔵入り|頓挫"
    # the English verbs of ending as Japanese verbs and nouns ("cancelになった", "dropしました", "holdです")
    r"|(?<![a-z])(?:cancel(?:l?ed)?|drop(?:ped)?|shelved?|scrap(?:ped)?|abandon(?:ed)?|ditch(?:ed)?|stop(?:ped)?|kill(?:ed)?"
    r"|retired?|reject(?:ed)?|skip(?:ped)?|quit|hold)\s*(?=[にしさすとで扱済中])"
)
# "て" links two clauses when a new one follows it ("使って、…", "見て学習する": a comma, a space, kanji, katakana or a
# Latin word), not in a progressive, auxiliary or contracted ending ("使っていません", "見ておく", "やってない") nor
# inside a verb ("立てる予定はない"), where the negation after it still belongs to the cue's predicate. A concessive
# "ても" ("経験はあってもk8sは触ったことがない": even though there is…) ends its clause too, unless what follows
# grants permission or shrugs ("分かれても構わない", "二つになっても問題ない"), which keeps the predicate whole.
_JA_LINK = re.compile(
    r"(?<![でにはがをもと])て(?=[、,\s]|[\u3400-\u9fff\u30a0-\u30ffa-z0-9]|$)|(?<![でにはがをもと])ても(?!\s*(いい|よい|良い|構|かま|大丈夫|平気|問題|ok|気に|全然|同じ|関係))"
    r"|(?<!ではな)(?<!な)で(?![はもす])|なら|ので|から|、"
)
# Saying a thing is acceptable or of no concern: its negation words ("don't mind", "構いません") are not a
# negation of the thing.
_INDIFFERENT = re.compile(
    r"\b((is|are|'s|'re|be|seems?) (fine|ok|okay|acceptable|no problem|not a problem)|fine (by|with) (us|me)|ok with"
    r"|(don't|do not|doesn't|wouldn't) (mind|care)|(nobody|no one|none of us) (minds|cares)|makes? no difference|no problem|not an issue|happy with|doesn't matter|don't need (one|a single))\b"
    r"|問題(は)?(あり)?ません|問題ない|気にしません|気にしない|(構|かま)いません|(構|かま)わない|大丈夫|平気|抵抗は(ありません|ない)"
    r"|こだわらない|こだわりません|こだわりはない|(どちら|どっち)でも(いい|よい|構)|別に(いい|よい)|(でも|ても)(いい|よい)"
)
# "…, ok?", "…, right?", "…よね？": a request for agreement.
_TAG = re.compile(r",\s*(ok|okay|right|yeah|correct|no)\s*[?？]?\s*$|よね\s*[？?]?\s*$|でしょ(う)?\s*[？?]?\s*$")
# Japanese words that end in a negative form without negating anything: "few", "only", "indispensable".
# Obligation ("サービングしなければならず", "使わないといけない") is a requirement, not a negation.
_LEXICAL_NEG = re.compile(
    r"少な(い|く)|足りな|しか(い|あり)?(ない|ません)|欠かせな|外せな|譲れな|譲らな|限らな|すくな"
    r"|(なけれ|なくて)(ば|は)(なら|いけ|だめ|ダメ)(ない|ず|ません)?|ないと(いけ|だめ|ダメ)(ない|ません)?"
    # "not optional" is a requirement, as "no longer optional" is in English: 「任意ではなく必須」「optionalじゃない」
    r"|(任意|オプション|optional|おまけ)\s*(では|じゃ)(な|あり)"
)
_HEDGE = re.compile(
    r"\b(maybe|might|perhaps|probably|possibly|may|could|eventually|someday|later|considering|thinking about"
    r"|not sure|unsure|plan(ning)? to|hope to|likely)\b"
    r"|かもしれ|たぶん|多分|おそらく|予定|検討|可能性|いずれ|将来|そのうち|ゆくゆく|つもり|かも"
)
_CONDITION = re.compile(
    r"\b(if|unless|when|in case|suppose|assuming|whether)\b|なら|ならば|たら|ければ|限り|場合|とすれば|としたら"
)
# The clause gives the thing to another party: "serving is done by a partner", "inference runs through a vendor's
# API", 「推論は外部に任せる」, 「モデルは別の会社がサービングします」. The other party's doing is not the asker's
# (for the asker, a workload others serve is training only), which no negation says. Another platform of the
# asker's own ("a separate cluster of ours", 「別基盤」) is not another party.
_OTHER_PARTY = re.compile(
    r"\b(another|a different|a separate|the other|other|separate|different|partner|vendor's|customers'|clients') "
    r"(team|department|dept|group|company|companies|org|organi[sz]ation|division|unit|vendor|provider|party|business unit)s?\b"
    r"|\b(third[- ]party|external (vendor|provider|service|api|partner|team|company)s?|outsourc\w*|someone else|somebody else"
    r"|themselves)\b"
    r"|\b(by|through|via|from) (a |an |the |our |their )?(partner|vendor|customer|client|provider|saas|managed service"
    r"|parent company|api service)"
    r"|\b(their|its) (own )?(side|end)\b"
    r"|別(の)?(チーム|部署|部門|会社|ベンダー|組織|事業部)|他社|他部署|他チーム|他部門|外部|外注|委託|任せ|お客様側|顧客側|客先|先方"
    r"|親会社|パートナー|ベンダー"
)
_PUNCT = re.compile(r"[,、:;]")
# A subject that opens a main clause after a condition ("if X doesn't…, we stay…").
_SUBJECT = re.compile(r"\b(we|i|they|you|it|that|this)\b")


@dataclass(frozen=True)
class Scope:
    """What governs one cue in its clause."""

    negations: int = 0  # negations reaching the cue (2 = a double negation)
    indifferent: bool = False  # "X is fine", "Xは気にしない"
    hedged: bool = False
    conditional: bool = False
    tag: bool = False  # the clause ends asking for agreement ("…, ok?")
    other_party: bool = False  # the clause gives the thing to someone else ("inference is done by a partner")

    @property
    def negated(self) -> bool:
        return self.negations % 2 == 1 and not self.indifferent


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


def _ja_after(after: str) -> str:
    link = _JA_LINK.search(after)
    return after[: link.start()] if link else after


def _main_clause(before: str) -> str:
    """``before`` from where the main clause of a condition begins: in "if the budget doesn't come through
    we stay on-prem" the negation belongs to the condition, and the subject after it ("we") opens the
    main clause, which the negation does not reach. Without a condition, ``before`` unchanged."""
    cond = _CONDITION.search(before)
    if cond is None:
        return before
    rest = before[cond.end() :]
    neg = _EN_NEG.search(rest)
    if neg is None:
        return before
    subjects = list(_SUBJECT.finditer(rest, neg.end()))
    return rest[subjects[-1].start() :] if subjects else before


def _own_conjunct(before: str) -> str:
    """``before`` from where the cue's own conjunct begins ("we don't autoscale and we don't serve models": only
    the second "don't" reaches "serve models")."""
    cuts = list(_EN_CONJUNCT.finditer(before))
    return before[cuts[-1].start() :] if cuts else before


def _window(before: str) -> str:
    """The last ``_EN_WINDOW`` characters of ``before``, from a word's start: the end of a word cut in two is
    no word ("casino" cut to "no" is no negator)."""
    if len(before) <= _EN_WINDOW:
        return before
    cut = len(before) - _EN_WINDOW
    while cut < len(before) and before[cut - 1].isalnum() and before[cut].isalnum():
        cut += 1
    return before[cut:]


def scope(clause: str, start: int, end: int) -> Scope:
    """The scope of the cue at ``clause[start:end]`` (``clause`` NFKC-lower-cased, as the cues see it)."""
    clause = clause.translate(APOSTROPHES)
    after = clause[end:]
    near_after = after[:28]
    ja = bool(_JA_CHAR.search(after[:24]))
    ja_after = _ja_after(after) if ja else ""
    since_comma = re.split(r"[,、]", clause[:start])[-1]  # the cue's part of the clause, up to the cue
    indifferent = bool(_INDIFFERENT.search(_window(since_comma) + clause[start:end] + near_after))
    # an indifference phrase's own negation word is not a negation of the cue, nor is a lexical negative
    # form that may begin inside the cue ("3人しかいません") or run past a clause link ("しなければならない"):
    # both are blanked, positions kept
    main = _own_conjunct(_main_clause(since_comma))
    plain_before = _INDIFFERENT.sub(" ", _window(main))
    tail = clause[max(start, end - 3) : end]
    blanked = _LEXICAL_NEG.sub(_blank, _INDIFFERENT.sub(_blank, tail + after))
    plain_after = blanked[len(tail) : len(tail) + len(ja_after)]
    negations = len(_EN_NEG.findall(plain_before)) + len(_JA_NEG.findall(plain_after))
    opens_clause = bool(_SUBJECT_OPENING.match(since_comma))
    predicate = (_EN_NEG_AFTER_SUBJECT if opens_clause else _EN_NEG_AFTER).search(after)
    negated_verb = opens_clause and not indifferent and _EN_SUBJECT_NEGATED_VERB.search(after)
    if predicate or negated_verb:
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
        other_party=bool(_OTHER_PARTY.search(clause)),
    )


def negation_mask(clause: str) -> list[bool]:
    """Per character of ``clause`` (NFKC-lower-cased): does an odd number of negations reach it? English
    negates from the negator to the next comma or the end of the clause ("no serving here" → "serving
    here"); Japanese negates back from its negator to the previous clause link ("推論はしません" → "推論は
    し"). Indifference phrases and lexical negative forms negate nothing. The vocabulary features mark the
    words under it, so "no serving" and "serving" are different features.

    >>> "".join("^" if m else "." for m in negation_mask("no gpus, 推論はしない"))
    '..^^^^^.^^^^^..'
    """
    clause = clause.translate(APOSTROPHES)
    plain = _LEXICAL_NEG.sub(_blank, _INDIFFERENT.sub(_blank, clause))
    depth = [0] * len(clause)
    for m in _EN_NEG.finditer(plain):
        stops = [k.start() for k in (_PUNCT.search(plain, m.end()), _EN_CONJUNCT.search(plain, m.end())) if k]
        for i in range(m.end(), min(stops, default=len(plain))):
            depth[i] += 1
    for m in _JA_NEG.finditer(plain):
        links = [k for k in (*_JA_LINK.finditer(plain[: m.start()]), *_PUNCT.finditer(plain[: m.start()]))]
        for i in range(max((k.end() for k in links), default=0), m.start()):
            depth[i] += 1
    return [d % 2 == 1 for d in depth]


@dataclass(frozen=True)
class ClauseNegation:
    """How a whole clause is negated, cue or no cue: the negated-flag model's clause features."""

    negators: int = 0  # negation words, not counting indifference phrases and lexical negatives
    lexical: int = 0  # negative forms that negate nothing: "しかいない" (only), "なければならない" (must)
    reached: float = 0.0  # share of the clause's characters a negation reaches
    indifferent: bool = False
    tag: bool = False
    conditional: bool = False


def clause_negation(clause: str) -> ClauseNegation:
    """The negation summary of one clause (NFKC-lower-cased).

    >>> c = clause_negation("nothing to serve here")
    >>> c.negators, round(c.reached, 2), c.indifferent
    (1, 0.67, False)
    >>> c = clause_negation("運用は3人しかいません")
    >>> c.negators, c.lexical
    (0, 1)
    """
    clause = clause.translate(APOSTROPHES)
    mask = negation_mask(clause)
    plain = _LEXICAL_NEG.sub(_blank, _INDIFFERENT.sub(_blank, clause))
    return ClauseNegation(
        negators=len(_EN_NEG.findall(plain)) + len(_JA_NEG.findall(plain)),
        lexical=len(_LEXICAL_NEG.findall(clause)),
        reached=sum(mask) / len(mask) if mask else 0.0,
        indifferent=bool(_INDIFFERENT.search(clause)),
        tag=bool(_TAG.search(clause)),
        conditional=bool(_CONDITION.search(plain)),
    )
