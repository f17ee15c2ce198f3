"""Resolve a follow-up question against the conversation (pure).

A short turn that only names a new thing ("And Slurm?", "Xだと？") is rewritten in the previous question's
frame (``app.advice.frame``): the answer is then about the rewritten question.

    >>> resolve_turn("And Slurm?", ["How does Kubernetes schedule GPUs?"]).question
    'How does Slurm schedule GPUs?'

Any other turn that leans on the conversation (a cue such as "and", "its", "その"; a thing nothing in the
previous question could be swapped for; a turn that names no product, platform or identifier of its own)
keeps its own words first: the retrieval query adds the earlier questions minus the platform or product the
new turn replaces, and evidence is scored mainly against the new turn, so the answer is about what was
asked now, not a repeat.

    >>> resolve_turn("And how do I upgrade it?", ["How do I install Volcano?"]).query
    'And how do I upgrade it? How do I install Volcano?'

Deliberately left out: anaphora resolution beyond "a short turn that leans on the previous one";
anything else stands alone.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from app.advice.frame import is_elliptical, new_thing, reframe
from app.answer.question import focus_entities

_CUE = re.compile(
    r"^\s*(and|also|what about|how about|then|so|but|what of|same for|compared to that|in that case|what if|suppose"
    r"|ok,? but|update:?|now|would the answer|does that change|same answer)\b"
    # an acknowledgement opens a turn that continues the conversation ("Makes sense. Later we'll need…")
    r"|^\s*(makes sense|got it|i see|understood|ok(ay)?|right|thanks)\s*[.,!]"
    r"|^\s*(ただ|でも|やっぱり|もし|上から|なるほど|了解|わかりました|分かりました)|(したら|なら|だったら|言われたら|としたら)[？?]?\s*$"
    r"|\b(it|its|it's|they|them|their|that one|this one|those|these|the other|the former|the latter|the same)\b"
    r"|^\s*(それ|その|では|じゃあ|では、|ちなみに|また|あと|一方|逆に|他方|そっち|こっち|あっち)"
    r"|(それ|その|そちら|こちら|あちら|前者|後者|同じ|そっち|場合は[？?]?$)",
    re.IGNORECASE,
)
_MAX_FOLLOWUP_CHARS = 200
# "Same answer?", "Does that change the answer?", "それでもSlurmですか？": the turn re-asks the previous one.
_REASK = re.compile(
    r"same answer|change the answer|still the (same|answer)|does (that|this|it) change|change (things|anything)"
    r"|それでも|変わりますか|変わる[？?]",
    re.I,
)
# A version ("v2.1", "1.30"); ASCII boundaries, since in "v2.1では" the kana are word characters too.
_VERSION = re.compile(r"(?<![A-Za-z0-9.])(?:v?\d+(?:\.\d+)+|v\d+)(?![A-Za-z0-9.])", re.I)
# ASCII boundaries, not \b: in "Kubernetesの保守" the kana are word characters too.
_PLATFORMS = {
    "slurm": re.compile(r"(?<![a-z0-9])slurm(?![a-z0-9])|スラーム", re.I),
    "k8s": re.compile(r"(?<![a-z0-9])(kubernetes|k8s)(?![a-z0-9])|クバネティス", re.I),
}


@dataclass(frozen=True)
class Resolved:
    focus: str  # the new turn: what the answer is about (an elliptical turn rewritten in its frame)
    context: str  # the earlier question it leans on, with replaced names removed ("" when it stands alone)
    earlier: tuple[str, ...] = ()  # the earlier user questions, oldest first, when the turn leans on them
    reframed: bool = False  # the focus is the previous question asked again about the turn's new thing
    history: tuple[str, ...] = ()  # every earlier user question, oldest first (a selection conversation)
    leans_on: str = ""  # the earlier question(s) it leans on as the user wrote them (``context`` before removal)

    @property
    def question(self) -> str:
        """The question as read, for "Read as: …" and ``resolved_question``: the rewritten question of an
        elliptical turn, else the turn with the question it leans on, in the user's words (with a replaced name
        cut out it would read "記事の「の強み」…")."""
        return self.focus if self.reframed or not self.context else f"{self.focus} ({self.leans_on or self.context})"

    @property
    def query(self) -> str:
        """What retrieval searches for: the new turn first, then what it leaves out."""
        return f"{self.focus} {self.context}".strip() if self.context else self.focus


def is_followup(question: str) -> bool:
    """Whether the turn leans on the conversation: a cue ("And …", "その…"), a re-ask, or a turn that only names
    a new thing ("3Dトーラスは？"), whose frame is the previous question's even when nothing in it can be
    swapped for the new thing."""
    if len(question) > _MAX_FOLLOWUP_CHARS:
        return False
    return bool(_CUE.search(question) or _REASK.search(question) or is_elliptical(question))


def _mentions(text: str, name: str) -> re.Match[str] | None:
    # ASCII boundaries, not \b: in "KueueのTAS" the kana are word characters too
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text, re.IGNORECASE)


def _without_replaced(context: str, focus: str, names: Collection[str] = ()) -> str:
    """The context minus the platform or product the new turn swaps in for it ("And Slurm?" replaces
    Kubernetes; "KAI Schedulerだと同じことは？" replaces Kueue). ``names`` are the products the corpus
    documents (its titles' names)."""
    named = {k for k, rx in _PLATFORMS.items() if rx.search(focus)}
    if len(named) == 1:
        for key, rx in _PLATFORMS.items():
            if key not in named:
                context = rx.sub("", context)
    if any(_mentions(focus, n) for n in names):
        for name in sorted(names, key=len, reverse=True):
            if not _mentions(focus, name):
                context = re.sub(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", "", context, flags=re.I)
    if _VERSION.search(focus):  # "v2.1では？" asks about that version instead of the one asked before
        context = _VERSION.sub("", context)
    return re.sub(r"\s{2,}", " ", context).strip()


def resolve_turn(question: str, previous_questions: Sequence[str], names: Collection[str] = ()) -> Resolved:
    """The new turn and what it leans on, given earlier user questions (oldest first).

    Earlier questions are resolved in turn, so a chain of follow-ups keeps its subject.
    """
    context, said, last, thing = "", "", "", None
    for earlier in previous_questions:
        context = _join(context, earlier, names)
        said = _join(said, earlier, cut=False).strip()
        # the earlier turn as it was read; an ellipsis nothing could be put into leaves the frame as it was
        rewritten = reframe(earlier, last, names, thing) if last else None
        thing = new_thing(earlier) if rewritten else None
        last = rewritten or (last if last and new_thing(earlier) else earlier)
    rewritten = reframe(question, last, names, thing) if last else None
    history = tuple(previous_questions)
    if rewritten:
        return Resolved(rewritten, "", history, reframed=True, history=history)
    if context and (is_followup(question) or not _names_a_subject(question, names)):
        read = _without_replaced(context, question, names)
        return Resolved(question.strip(), read, history, history=history, leans_on=said)
    return Resolved(question.strip(), "", history=history)


def _names_a_subject(question: str, names: Collection[str]) -> bool:
    """Whether the turn names what it asks about (a product, a platform or an identifier): a turn that names
    nothing ("デフォルトで有効になってる？", "How do I install it on a laptop?") asks about the conversation's
    subject, which only the earlier questions name. A version alone ("v2.1では何が入った？") is a version of that
    subject."""
    named = [e for e in focus_entities(question, names) if not _VERSION.fullmatch(e)]
    return bool(named or any(rx.search(question) for rx in _PLATFORMS.values()))


def resolve(question: str, previous_questions: Sequence[str]) -> str:
    """The retrieval query for ``question`` (see ``resolve_turn``)."""
    return resolve_turn(question, previous_questions).query


def _join(context: str, question: str, names: Collection[str] = (), cut: bool = True) -> str:
    """``question`` with the earlier ``context`` after it when it is a follow-up (newest first); with ``cut``,
    the context loses the platform or product the question replaces (what retrieval reads), else it stays as
    the user wrote it (what "Read as" shows)."""
    if context and is_followup(question):
        return f"{question.strip()} {_without_replaced(context, question, names) if cut else context}"
    return question
