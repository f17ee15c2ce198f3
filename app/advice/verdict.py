"""The platform verdict, as data: the user's situation read into facets, decided by the documents' rules.

Only a selection question ("which…", "should we…", 向いている, どちらを…) gets a verdict; a factual or
how-to question never does. The situation is read with the same reader ingest used on the rules'
conditions (``core.situation``); the verdict table (``app.advice.table``) combines the stated facets'
votes; this module turns the outcome into a ``Verdict`` in the question's language: what was read
("Read as: on-prem · training only"), each facet's vote with its rule, the facet that decides a
``depends``, and what would change it. It depends on the situation and the rule set only, never on which
passages ranked first, so it is the same with or without a translation companion indexed.

Deliberately left out: quoting and numbering (``app.answer.compose`` cites each vote's rule) and any
verdict written in code: every vote is a rule read from the documents.

    >>> is_selection_question("Which platform suits on-prem training?"), is_selection_question("How do I submit a job?")
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from app.advice.table import VerdictModel, by_value, combine, undecided, what_would_change
from app.models import Change, FacetReading, Verdict, Vote
from core.contract import Rule
from core.situation import Reading, Situation, facets
from ingest.rules import PLATFORM_NAMES

_SELECTION = re.compile(
    r"\bwhich (platform|scheduler|system|stack|is (a )?better|should|would you|fits|suits|to (use|choose|pick))"
    r"|\bwhich (one|option) (should|would|is better|fits|suits|to)"
    r"|\bshould (we|i) (use|choose|pick|go|adopt|run|stay|move|switch|stick)|\brecommend|better (choice|fit|suited|option)"
    r"|\bbest (choice|fit|option|platform)|\b(go|stick) with\b|\bsuits? (us|our|a team|teams)|\bwhat (platform|should)"
    r"|\bbetter (for|suited)|\bmore suitable|\bright (choice|platform)|\b(would|do) you (suggest|pick|choose|go with)"
    r"|\bwhat (setup|set-up|architecture) (do|would|should)"
    # a choice asked with a bare interrogative ("Which one?", "What do we run?", 何がいい？, どれを選びますか？)
    r"|\bwhich (one|setup|set-up|option)\s*[?？]|\bwhat (would|do) (we|i|you) (use|pick|choose|run|go with|build on)\b"
    r"|\bwhat to (use|run|pick|build on)\b"
    r"|(どれ|どっち|どちら)(が|に)(いい|良い|よい|合|向|す|し)|(どちら|どっち)が(適|おすすめ)|何が(いい|良い|よい|合|向)"
    r"|どちらを|どっちを|(どれ|何)を(選|採用|導入)|選(ぶ|べば|びます|んだ)|(どっち|どれ|どちら)[？?]"
    r"|どの(プラットフォーム|基盤|スケジューラ|構成|スタック)(が|を|に|で|[？?])"
    r"|選択すべき|べきですか|べき[？?]|おすすめ|お勧め|推奨|向いて|適して(いる|います|る)|採用すべき|使うべき"
    r"|合いますか|合ってい|に(す|し)べき"
    # a bare situation ("クラウドでノードを頻繁に増減させたい場合は？") asks what to run in it
    r"|^[^？?]{4,60}(場合|とき|なら)は?[？?]\s*$"
    r"|(hybrid|ハイブリッド)[^？?]{0,40}(アリ|あり|good idea|make sense|worth|recommended|いい|良い)",
    re.IGNORECASE,
)
_BOTH = tuple(PLATFORM_NAMES.values())
_EITHER = re.compile(r"\bor\b|どっち(?!も)|どちら(?!も)", re.I)
# The two sides of a choice: "PMIxとPMI-2のどっち", "between PMIx and PMI-2", "PMIx or PMI-2".
_SIDES = re.compile(
    r"([\w.+/-]+)\s*(?:と|か)\s*([\w.+/-]+)\s*(?:の|、)?\s*(?:どっち|どちら)|between\s+([\w.+/-]+)\s+and\s+([\w.+/-]+)"
    r"|([\w.+/-]+)\s+or\s+([\w.+/-]+)\??",
    re.I,
)
_PLATFORM_WORD = re.compile(r"slurm|kubernetes|k8s|platform|基盤|プラットフォーム|hybrid|ハイブリッド", re.I)
_HOW_MUCH = re.compile(
    r"how (much|many|far|do|does|is)|どれ(くらい|ぐらい)|どの(くらい|程度)|違い|差|どう(やって|すれば)", re.I
)


# Asking for advice on a stated situation: a selection question when the question states one ("…our own
# racks and a tiny ops crew. How should we set it up?", "…thoughts?", "これから当たり前になりますか？").
_ADVICE = re.compile(
    r"\bthoughts\b|\bwhat (would|do) you (suggest|recommend|think)|\bhow should (we|i) (set|build|structure|organi[sz]e|run|do)"
    r"|\bwhich way\b|\bwhich one\b|\bwhich\s*\?|\bwhat (fits|suits|works)\b|\bwhat (then|now)\b|\bwhat if\b|\bsame answer\b|\bchange (the answer|things)\b"
    r"|\bthe (norm|standard|normal way)\b|\bbecome (the )?(norm|standard|mainstream)\b|\btrend\b|\bany advice\b"
    r"|どう(組|構成|す(る|れば|べき)|し(たら|ますか))|どちらが(現実的|合|ベター|無難|妥当)|どっちが(現実的|合)|当たり前|主流|標準|スタンダード"
    r"|(したら|なら|だったら|言われたら|場合は)[？?]?\s*$|変わりますか|同じ答え",
    re.IGNORECASE,
)


def choice_cues(question: str) -> dict[str, bool]:
    """The wording of a platform choice, as features: choice wording ("which platform…", "should we…",
    向いている, どちらを…), advice wording ("thoughts?", "how should we set it up?"), both platforms named
    with "or" / どっち, a how-much question, a choice between two other things (PMIx or PMI-2), a platform
    word."""
    sides = _SIDES.search(question)
    named = [g for g in sides.groups() if g] if sides else []
    return {
        "choice": bool(_SELECTION.search(question)),
        "advice": bool(_ADVICE.search(question)),
        "both_or": all(p.search(question) for p in _BOTH) and bool(_EITHER.search(question)),
        "how_much": bool(_HOW_MUCH.search(question)),
        "other_sides": bool(named) and not any(_PLATFORM_WORD.search(side) for side in named),
        "platform_word": bool(_PLATFORM_WORD.search(question)),
    }


def is_selection_question(question: str, situated: bool = False) -> bool:
    """The wording-only reading of "asks for a platform" (the fitted decision, ``app.advice.model``, uses
    these cues as features; this stays as its baseline and for callers without a model).
    """
    cues = choice_cues(question)
    if cues["other_sides"]:
        return False  # a choice between two other things (PMIx or PMI-2) is not a platform choice
    if cues["choice"] or (situated and cues["advice"]):
        return True
    return cues["both_or"] and not cues["how_much"]


def one_version(rules: Sequence[Rule], language: str, translated: Mapping[str, str]) -> list[Rule]:
    """Each rule once: a document that has a companion translation contributes the version in
    ``language`` (``translated`` maps a translation's id to its original's)."""
    pairs = {doc for pair in translated.items() for doc in pair}
    keep = []
    for r in rules:
        if r.doc_id not in pairs:
            keep.append(r)
            continue
        group = {r.doc_id, translated.get(r.doc_id, "")} | {t for t, o in translated.items() if o == r.doc_id}
        languages = {x.language for x in rules if x.doc_id in group}
        if r.language == language or language not in languages:
            keep.append(r)
    return keep


PLATFORM_LABELS = {
    "en": {
        "slurm": "Slurm",
        "kubernetes": "Kubernetes",
        "hybrid": "hybrid — train on Slurm, serve on Kubernetes",
        "depends": "it depends",
    },
    "ja": {
        "slurm": "Slurm",
        "kubernetes": "Kubernetes",
        "hybrid": "ハイブリッド（学習はSlurm、推論はKubernetes）",
        "depends": "条件によります",
    },
}


def platform_label(value: str, language: str) -> str:
    return PLATFORM_LABELS["ja" if language == "ja" else "en"][value]


def build_verdict(
    situation: Situation, rules: Sequence[Rule], language: str, always: bool = False, model: VerdictModel | None = None
) -> Verdict | None:
    """The verdict for a read situation under the rules (one version each, in the question's language);
    None when no stated facet decides anything (the answer then asks for the deciding facts), unless
    ``always`` (a question that asks for a platform): then ``depends`` on the facet that would decide it.
    A ``depends`` lists what each value of its deciding facet gives first among what would change it.
    ``model``: the fitted combiner of the rules' votes (``app.advice.table``), else the table alone."""
    values = situation.values()
    outcome = combine(values, rules, model)
    if outcome.value is None and always:
        outcome = undecided(values, rules, model)
    if outcome.value is None:
        return None
    defs = facets()
    lang = "ja" if language == "ja" else "en"
    read = {
        f: FacetReading(value=r.value, span=r.span, negated=r.negated, label=defs.label(f, r.value, lang))
        for f, r in situation.readings.items()
    }
    votes = [
        Vote(facet=f, value=values[f], label=read[f].label, platform=rule.verdict, rule=rule)
        for f in defs.order
        for rule in _one_per_platform(outcome.votes.get(f, []))
    ]
    flips = what_would_change(values, rules, model=model)
    if outcome.value == "depends" and outcome.deciding:
        options = by_value(values, rules, outcome.deciding, model)
        flips = [*options, *(f for f in flips if f.facet != outcome.deciding)][: max(3, len(options))]
    changes = [
        Change(facet=c.facet, value=c.value, condition=defs.values[c.facet][c.value].change[lang], verdict=c.verdict)
        for c in flips
    ]
    return Verdict(
        value=outcome.value,
        situation=read,
        read_as=[read[f].label for f in defs.order if f in read],
        votes=votes,
        deciding=outcome.deciding,
        deciding_label=defs.facet_label(outcome.deciding, lang) if outcome.deciding else "",
        change_detail=changes,
        changes=[f"{c.condition} → {platform_label(c.verdict, lang)}" for c in changes],
    )


def _one_per_platform(rules: Sequence[Rule]) -> list[Rule]:
    """A facet's vote cites one rule per platform it votes for (a table row before a summary point)."""
    order = {"table": 0, "statement": 1, "strengths": 2}
    seen: dict[str, Rule] = {}
    for rule in sorted(rules, key=lambda r: order.get(r.source, 3)):
        seen.setdefault(rule.verdict, rule)
    return list(seen.values())


def needs(situation: Situation, language: str) -> list[str]:
    """The deciding facts a selection question did not state, as human labels (what to ask the user)."""
    defs = facets()
    lang = "ja" if language == "ja" else "en"
    return [defs.facet_label(f, lang) for f in defs.order if f not in situation.readings]


def situation_of(values: Mapping[str, str]) -> Situation:
    """A situation given as facet values (the questionnaire): no words were read, so no spans."""
    return Situation({f: Reading(f, v, "") for f, v in values.items()})
