"""Elliptical follow-ups keep the previous question's frame (pure).

A short turn that only names a new thing ("And Volcano?", "KAI Schedulerだと？", "what about the default?")
asks the previous question again about that thing: the previous question is rewritten with the new
subject put where its subject was, so its answer type, attribute and parts carry over. A new product or
platform replaces the previous product or platform, a new identifier (``MaxJobCount``) the previous
identifier; a new value type ("the default", "デフォルト") asks that value of the previous subject.
The rewrite works across languages: a name is the same word in both.

    >>> reframe("And Volcano?", "Which apiVersion do Kueue Topology objects use?", {"Kueue", "Volcano"})
    'Which apiVersion do Volcano Topology objects use?'
    >>> reframe("Slurmだと？", "Kubernetesで GPU を2枚要求するにはどう書く？", set())
    'Slurmで GPU を2枚要求するにはどう書く？'

Deliberately left out: a turn that asks something of its own ("And how do I upgrade it?"): it stands as
written and leans on the conversation only for retrieval (``app.advice.followup``); a new thing that is
neither a name nor a value type ("推論ジョブだと？") is not substituted, since nothing says which words of
the previous question it replaces.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from app.answer.question import cued_types, focus_entities
from core.text import normalize

# "And X?", "What about X?", "How about for X?", "Same for X?", "And with X then?"
_EN = re.compile(
    r"^\s*(?:ok(?:ay)?,?\s+|so,?\s+|then,?\s+)?(?:and|what about|how about|what of|same for|and what about|and how about)"
    r"\s+(?:(?:for|with|in|on|under|using)\s+)?(?P<x>[^?]{1,60}?)(?:\s+(?:then|instead|too))?\s*\??\s*$",
    re.I,
)
# "Xだと？", "Xの場合は？", "Xでは？", "Xなら？", "じゃあXは？"
_JA = re.compile(
    r"^\s*(?:じゃあ|では|それでは|それじゃ|あと|また|なら)?[、,\s]*(?P<x>[^？?。]{1,40}?)"
    r"(?:だと|では|なら|だったら|の場合は?|の方は|は|って)(?:どう(?:ですか|なる|なります|でしょう)?)?[？?]\s*$"
)
# The new "thing" must be a thing, not a clause that asks or states something of its own.
_NOT_A_THING = re.compile(
    r"^(if|we|i|you|they|it|its|that|this|those|these|our|my|your|when|how|why|what|which|where|who|does|do|is|are|can)\b"
    r"|\b(if|we|should|would|could|will|can|do|does|is|are|was|were)\b|何|どう|どの|どこ|いつ|いくつ|ます|たい|する|して",
    re.I,
)
_PLATFORM = re.compile(r"(?<![A-Za-z0-9])(slurm|kubernetes|k8s)(?![A-Za-z0-9])", re.I)
_ARTICLE = re.compile(r"^(the|a|an)\s+", re.I)


def new_thing(question: str) -> str | None:
    """The thing an elliptical follow-up names ("Volcano" in "And for Volcano?"), None when the turn asks
    more than that."""
    text = question.strip()
    m = _EN.match(text) or _JA.match(text)
    if m is None:
        return None
    thing = m.group("x").strip(" 、,")
    if not thing or _NOT_A_THING.search(thing) or len(thing.split()) > 5:
        return None
    return thing


def _products(text: str, names: Collection[str]) -> list[str]:
    found = [n for n in focus_entities(text, names) if n in names]
    return [*found, *(m.group() for m in _PLATFORM.finditer(text) if m.group() not in found)]


def _replace(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(old)}(?![A-Za-z0-9])", lambda _: new, text, count=0, flags=re.I)


def reframe(question: str, previous: str, names: Collection[str] = ()) -> str | None:
    """``previous`` asked again about the thing ``question`` names, or None when the turn is not an
    elliptical follow-up or nothing in ``previous`` can take the new thing's place."""
    thing = new_thing(question)
    if thing is None or not previous.strip():
        return None
    product = _products(thing, names)
    if product and len(thing.split()) <= 3:
        old = _products(previous, names)
        same = old and normalize(old[0]) == normalize(product[0])
        return _replace(previous, old[0], product[0]) if old and not same else None
    entities = [e for e in focus_entities(thing, names) if e not in names]
    if entities and len(entities[0]) >= len(thing) - 1:
        old_ids = [e for e in focus_entities(previous, names) if e not in names and not _PLATFORM.fullmatch(e)]
        alike = [e for e in old_ids if _shape(e) == _shape(thing)] or old_ids
        return _replace(previous, alike[-1], thing) if alike else None
    if cued_types(thing) and cued_types(thing) != ["yes_no"]:
        return _ask_value(thing, previous, names, ja=not question.isascii())
    return None


def _shape(identifier: str) -> str:
    """A file or path name ("slurm.conf") or a name ("MaxJobCount"): a new identifier replaces one alike."""
    return "path" if re.search(r"[./]", identifier) else "name"


def _ask_value(thing: str, previous: str, names: Collection[str], ja: bool) -> str | None:
    """ "What about the default?": the new value type asked of the previous question's subject."""
    subject = " ".join(focus_entities(previous, names))
    if not subject:
        return None
    bare = _ARTICLE.sub("", thing)
    return f"{subject}の{bare}は？" if ja else f"What is the {bare} of {subject}?"
