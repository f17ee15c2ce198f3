"""Resolve follow-up questions against the conversation (pure).

"And its control plane?" after "How heavy is Kubernetes to run?" becomes a self-contained retrieval
query by carrying the previous question along. Deliberately simple and predictable: a short question
that leans on something said before (a pronoun, "and …", "what about …", それ/その/では…) is joined to
the last user question; anything else stands alone.

    >>> resolve("And its control plane?", ["How heavy is Kubernetes to run?"])
    'How heavy is Kubernetes to run? And its control plane?'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_CUE = re.compile(
    r"^\s*(and|also|what about|how about|then|so|but|what of|same for|compared to that)\b"
    r"|\b(it|its|it's|they|them|their|that one|this one|those|these|the other|the former|the latter)\b"
    r"|^\s*(それ|その|では|じゃあ|では、|ちなみに|また|あと|一方|逆に|他方|そっち|こっち|あっち)"
    r"|(それ|その|そちら|こちら|あちら|前者|後者|同じ|そっち)",
    re.IGNORECASE,
)
_MAX_FOLLOWUP_CHARS = 80


def is_followup(question: str) -> bool:
    return len(question) <= _MAX_FOLLOWUP_CHARS and bool(_CUE.search(question))


def resolve(question: str, previous_questions: Sequence[str]) -> str:
    """The retrieval query for ``question`` given earlier user questions (oldest first).

    Earlier questions are resolved in turn, so a chain of follow-ups keeps its subject.
    """
    context = ""
    for earlier in previous_questions:
        context = _join(context, earlier)
    return _join(context, question)


def _join(context: str, question: str) -> str:
    if context and is_followup(question):
        return f"{context.strip()} {question.strip()}"
    return question
