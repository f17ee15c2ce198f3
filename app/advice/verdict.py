"""The platform verdict, as data: a situation is matched to the decision rules the corpus states.

Rules come from ingest (``ingest.rules``): recommendation-table rows, conditional statements and
strengths lists, each with its verbatim quote. A situation (a selection question, a follow-up, or a
questionnaire answer) is matched to rule conditions by word overlap (glossary-expanded, both ways) and
by the embedder's similarity, standardised over the rules of one language so that a Japanese situation
can match English rules and the reverse. The verdict is ``slurm``, ``kubernetes``, ``hybrid`` (train on
Slurm, serve on Kubernetes) or ``depends``, with the rules behind it and what would change it.

Only a selection question ("which…", "should we…", 向いている, どちらを…) gets a verdict; a factual or
how-to question never does.

Deliberately left out: quoting and numbering (``app.answer.compose`` cites each matched rule's quote) and any
verdict written in code: every verdict is a rule read from the documents.

    >>> is_selection_question("Which platform suits on-prem training?"), is_selection_question("How do I submit a job?")
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from app.models import MatchedRule, Verdict
from core.contract import Rule, VerdictValue
from core.text import content_tokens
from ingest.rules import PLATFORM_NAMES

_SELECTION = re.compile(
    r"\bwhich (platform|scheduler|system|stack|is (a )?better|should|would you|fits|suits|to (use|choose|pick))"
    r"|\bwhich (one|option) (should|would|is better|fits|suits|to)"
    r"|\bshould (we|i) (use|choose|pick|go|adopt|run|stay|move|switch|stick)|\brecommend|better (choice|fit|suited|option)"
    r"|\bbest (choice|fit|option|platform)|\b(go|stick) with\b|\bsuits? (us|our|a team|teams)|\bwhat (platform|should)"
    r"|\bbetter (for|suited)|\bmore suitable|\bright (choice|platform)|\b(would|do) you (suggest|pick|choose|go with)"
    r"|\bwhat (setup|set-up|architecture) (do|would|should)"
    r"|どちらを|どっちを|どちらが(いい|良い|よい|向|適|おすすめ)|どっちが(いい|良い|よい|向|適|おすすめ)|どちらに(す|し)"
    r"|選ぶ|選ぶべき|選択すべき|べきですか|べき[？?]|おすすめ|お勧め|推奨|向いて|適して(いる|います|る)|採用すべき|使うべき"
    r"|(どちら|どっち)が(合|向)|合いますか|合ってい|に(す|し)べき"
    # a bare situation ("クラウドでノードを頻繁に増減させたい場合は？") asks what to run in it
    r"|^[^？?]{4,60}(場合|とき|なら)は?[？?]\s*$"
    r"|(hybrid|ハイブリッド)[^？?]{0,40}(アリ|あり|good idea|make sense|worth|recommended|いい|良い)",
    re.IGNORECASE,
)
# The team wants one platform for everything: splitting training and serving across two is not an answer.
_ONE_PLATFORM = re.compile(
    r"same (infrastructure|platform|cluster|stack)|one platform|single platform|同じ基盤|同一基盤|同じプラットフォーム"
    r"|一つの基盤|1つの基盤|一元化|まとめて",
    re.I,
)
_TRAIN = re.compile(r"学習|トレーニング|training|train\b|pre-?train", re.I)
_SERVE = re.compile(
    r"推論|サービング|ホスティング|inference|serving|serve\b|host(ing)? (the |our |trained )*models?|deploy the model"
    r"|model deployment",
    re.I,
)

# Words of the choice itself, not of the situation: "which platform suits…", "どちらが向いて…", the platforms.
_CHOICE_WORDS = frozenset(
    [
        "platform",
        "platforms",
        "choose",
        "choice",
        "chose",
        "suit",
        "suits",
        "suited",
        "suitable",
        "recommend",
        "recommendation",
        "better",
        "best",
        "use",
        "pick",
        "fit",
        "fits",
        "option",
        "should",
        "prefer",
        "team",
        "our",
        "we",
        "slurm",
        "kubernetes",
        "k8s",
        "w:プラットフォーム",
        "w:選ぶ",
        "w:向く",
        "w:適する",
        "w:おすすめ",
        "w:推奨",
        "w:良い",
        "w:どちら",
        "w:チーム",
    ]
)
# A strengths list says what a platform is good at, not for whom: it counts less than a stated situation.
SOURCE_WEIGHT = {"table": 1.0, "statement": 1.0, "strengths": 0.7}
MATCH_FLOOR = 0.3  # a rule below this match is not the situation's
PART_FLOOR = 0.35  # a clause of the situation must match a rule this well to add it
NEAR_BEST = 0.75  # rules within this share of the best match count as matched too
DENSE_WEIGHT = 0.12  # per standard deviation of the embedder's similarity above the rules' mean


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


def is_selection_question(question: str) -> bool:
    """Does the user ask which platform to choose (rather than a factual or how-to question)?

    Choice wording decides ("which platform…", "should we…", 向いている, どちらを…); naming both
    platforms with "or" / どっち counts too, unless the question asks how much they differ.
    """
    sides = _SIDES.search(question)
    if sides:
        named = [g for g in sides.groups() if g]
        if named and not any(_PLATFORM_WORD.search(side) for side in named):
            return False  # a choice between two other things (PMIx or PMI-2) is not a platform choice
    if _SELECTION.search(question):
        return True
    both = all(p.search(question) for p in _BOTH)
    return both and bool(_EITHER.search(question)) and not _HOW_MUCH.search(question)


def wants_both(situation: str) -> bool:
    """The situation covers training and serving: the case the hybrid (and its conflicts) are about."""
    return bool(_TRAIN.search(situation) and _SERVE.search(situation))


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


def _overlap(a: Sequence[str], b: set[str], idf: Mapping[str, float]) -> float:
    """IDF-weighted share of ``a``'s distinct tokens that ``b`` has."""
    tokens = list(dict.fromkeys(a))
    total = sum(idf.get(t, 1.0) for t in tokens)
    return sum(idf.get(t, 1.0) for t in tokens if t in b) / total if total else 0.0


def match(
    situation: str,
    rules: Sequence[Rule],
    expand: Callable[[str], str],
    idf: Mapping[str, float],
    similarity: Mapping[str, float] | None = None,
) -> list[MatchedRule]:
    """Every rule scored against ``situation`` (0..1), best first.

    Word overlap counts both ways (how much of the rule's condition the situation states, and how much of
    the situation the condition covers); ``similarity`` (rule id → embedder cosine) adds its standardised
    value, which carries matches across languages and paraphrases.
    """
    mine = {t for t in content_tokens(expand(situation)) if t not in _CHOICE_WORDS}
    sims = similarity or {}
    values = [sims[r.id] for r in rules if r.id in sims]
    mean = sum(values) / len(values) if values else 0.0
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5 if values else 0.0
    own = [t for t in content_tokens(situation) if t not in _CHOICE_WORDS]
    out = []
    for r in rules:
        theirs = [t for t in content_tokens(expand(r.condition)) if t not in _CHOICE_WORDS]
        condition = [t for t in content_tokens(r.condition) if t not in _CHOICE_WORDS]
        lexical = 0.5 * _overlap(condition, mine, idf) + 0.5 * _overlap(own, set(theirs), idf)
        dense = DENSE_WEIGHT * (sims[r.id] - mean) / spread if r.id in sims and spread > 1e-9 else 0.0
        score = (lexical + dense) * SOURCE_WEIGHT.get(r.source, 1.0)
        out.append(MatchedRule(rule=r, score=round(max(0.0, min(1.0, score)), 4)))
    return sorted(out, key=lambda m: -m.score)


# Where one situation ends and another begins: "multi-week pretraining, but also inference that scales out".
_CLAUSE = re.compile(
    r"(?<=[.!?。！？])\s*|,?\s+\b(?:but|however|while|whereas|and then|then)\b\s*|、?(?:でも|しかし|ただし|けど|けれど)、?"
)


def situation_parts(text: str) -> list[str]:
    """The clauses of a situation that could each match a different rule (at least three words)."""
    parts = [p.strip(" ,、") for p in _CLAUSE.split(text) if p and p.strip(" ,、")]
    parts = [p for p in parts if len(content_tokens(p)) >= 3]
    return parts or [text]


def near_best(scored: Sequence[MatchedRule]) -> list[MatchedRule]:
    """The rules that match: above MATCH_FLOOR and within NEAR_BEST of the best match."""
    best = scored[0].score if scored else 0.0
    return [m for m in scored if m.score >= MATCH_FLOOR and m.score >= NEAR_BEST * best]


def decide(scored: Sequence[MatchedRule], situation: str, parts: Sequence[Sequence[MatchedRule]] = ()) -> Verdict:
    """The verdict from the rules that match the situation (``scored`` best first). ``parts`` are the
    scorings of the situation's clauses: each clause's own matches count, so a training clause and a
    serving clause can each find their rule."""
    matched = near_best(scored)
    for part in parts:
        # a clause is short: one shared word ("cluster") is no match, so its rules must match clearly
        strong = [m for m in near_best(part) if m.score >= PART_FLOOR]
        matched.extend(m for m in strong if all(m.rule.id != x.rule.id for x in matched))
    matched.sort(key=lambda m: -m.score)
    if not matched:
        return Verdict(value="depends", rules=list(scored[:2]), changes=[])
    weight: dict[str, float] = {}
    for m in matched:
        # the best match per platform: the same rule stated twice (a table row and a summary point) is one vote
        weight[m.rule.verdict] = max(weight.get(m.rule.verdict, 0.0), m.score)
    slurm, k8s, hybrid = weight.get("slurm", 0.0), weight.get("kubernetes", 0.0), weight.get("hybrid", 0.0)
    value: VerdictValue
    if hybrid and (hybrid >= max(slurm, k8s) or wants_both(situation)):
        value = "hybrid"
    elif slurm and k8s:
        # matched rules that disagree (each within NEAR_BEST of the best): both sides hold for this situation
        value = "hybrid" if wants_both(situation) else "depends"
    else:
        value = "slurm" if slurm > k8s else "kubernetes"
    if value == "hybrid" and _ONE_PLATFORM.search(situation):
        # one platform for training and serving: the rule that covers both on one platform decides
        single = [m for m in matched if m.rule.verdict != "hybrid"]
        both = [m for m in single if wants_both(m.rule.condition)]
        value = (both or single)[0].rule.verdict if single else value
    backing = [m for m in matched if m.rule.verdict == value or value in ("depends", "hybrid")]
    others = [m for m in scored if m.rule.verdict not in (value, "hybrid") and m not in backing][:2]
    return Verdict(value=value, rules=backing[:4], changes=[f"{m.rule.condition} → {m.rule.verdict}" for m in others])
