"""How many people a situation names (pure): "two admins", "team of 8", "a 3-person team", 「運用は2人」, 「専任6名」.

A head count is evidence for the operations-team facet that no cue list can hold: the cues name a small team
in words ("a handful", 「少人数」), but "two ppl operate everything" or 「インフラチームは専任で5人」 say it
with a number, and which numbers make a team small is for the fitted model to learn, not for a list. The
count and its logarithm are features of the facet models marked ``counts_people`` in core/facets.toml
(``app.advice.features``), which weigh them.

    >>> head_count("team of 2 runs the GPUs. which scheduler?")
    2
    >>> head_count("運用は2人の兼務で、インフラチームは専任で5人います")
    2
    >>> head_count("Our seasoned HPC admins run 32 nodes") is None
    True
    >>> head_count("The platform team (6 people, dedicated) operates LSF")
    6

Deliberately left out: who the people are (ops, researchers or users); the smallest count is the one read,
since a team that names its size and then the few who run the cluster ("20 researchers, 2 of them run it")
is run by the few.
"""

from __future__ import annotations

import re

from core.text import normalize

_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
    "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
    "ひと": 1, "ふた": 2,
}  # fmt: skip
_NUMBER = r"(\d{1,3}|" + "|".join(sorted((re.escape(w) for w in _WORDS), key=len, reverse=True)) + ")"
# a number of people: "two admins", "4 ML engineers", "a 3-person team", "team of eight", 「2人」「6名」「ふたり」
_PEOPLE = re.compile(
    r"(?<![a-z0-9])" + _NUMBER + r"(?:[- ](?:[a-z-]+ ){0,2}?|\s*)"
    r"(?:people|persons?|ppl|engineers?|admins?|sysadmins?|devs?|developers?|folks|members?|operators?|sres?|guys)\b"
    r"|(?<![a-z0-9])" + _NUMBER + r"[- ]?man\b"  # "a 3-man team"
    r"|\bteam of " + _NUMBER + r"(?![0-9])"
    r"|" + _NUMBER + r"\s*(?:人|名|り)(?![a-z0-9]|も)",  # 「一人も…ない」 is nobody
)


def head_count(text: str) -> int | None:
    """The smallest number of people ``text`` names, or None when it names none."""
    counts = []
    for m in _PEOPLE.finditer(normalize(text)):
        word = next(g for g in m.groups() if g)
        count = int(word) if word.isdigit() else _WORDS.get(word)
        if count:
            counts.append(count)
    return min(counts) if counts else None
