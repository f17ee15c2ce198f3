"""`evals --situations SPLIT`: the situation reader and the asks-for-a-platform decision on labelled text.

Reads ``evals/situations.jsonl`` (with ``situations_facets.jsonl`` and ``situations_asks.jsonl``),
``evals/situations_unfitted.jsonl`` (labelled situations no model is fitted or chosen on: selection follow-ups, read
with their conversation, and mixed experience statements) and
``evals/negation.jsonl`` rows of one split (``dev`` to ``dev7`` while choosing, ``dev2`` to ``dev7`` never by the fit;
``test``, ``test2``, ``test3`` only to report)
and reports, each with a 95 % bootstrap interval:
- facet accuracy per facet (the value read, or "not stated", equals the label), and whole situations;
- negated facets flagged as negated (``verdict_detail`` shows them);
- asks-for-a-platform accuracy, and platform decisions (verdict or situation request) on texts that ask none;
- the negation table: the facet value each phrasing must give, by language and kind;
- with ``--through-advisor``, the whole advisor on the first turns: whether a platform question's answer is a
  decision (verdict or situation request) and a text that asks none gets none;
- selection verdicts, against the index's rules: against each text's labelled verdict, and against the verdict
  its labelled facets give under the same rules (so every situation that asks for a platform measures how
  often a misread facet changes the decision, also on splits whose writers gave no verdict);
beside the same figures for the cue reader with the wording rule (the baseline the fitted models replace).

Deliberately left out: answers and retrieval (the golden runs measure those, follow-ups included).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.advice.fit import EVALS, Example, load_examples, situation_examples
from app.advice.model import NONE, verdict_model
from app.advice.reader import SituationReader, rules_for, verdict_for
from app.advice.verdict import build_verdict, is_selection_question
from app.retrieval.snapshot import Snapshot
from core.situation import Reading, Situation, facets, read

BOOTSTRAP = 2000
UNFITTED = "situations_unfitted.jsonl"


def interval(hits: Sequence[bool], rounds: int = BOOTSTRAP, seed: int = 7) -> tuple[float, float, float]:
    """The share of hits and its 95 % percentile-bootstrap interval.

    >>> interval([True, True, False, True])[0]
    0.75
    """
    n = len(hits)
    if n == 0:
        return (float("nan"), float("nan"), float("nan"))
    rng = random.Random(seed)
    values = list(map(float, hits))
    means = sorted(sum(rng.choice(values) for _ in range(n)) / n for _ in range(rounds))
    return (sum(values) / n, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1])


def paired(a: Sequence[bool], b: Sequence[bool], rounds: int = BOOTSTRAP, seed: int = 7) -> tuple[float, float, float]:
    """The difference of two readers' shares of hits on the same items, with its 95 % bootstrap interval
    (the items resampled together: a gain is outside noise when the interval excludes 0)."""
    n = len(a)
    if n == 0:
        return (float("nan"), float("nan"), float("nan"))
    rng = random.Random(seed)
    d = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    means = sorted(sum(rng.choice(d) for _ in range(n)) / n for _ in range(rounds))
    return (sum(d) / n, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1])


@dataclass
class Reader:
    name: str
    situation: Callable[[str], Situation]
    asks: Callable[[str, Sequence[str]], bool]  # a turn, given the earlier turns of its conversation

    def conversation(self, text: str, earlier: Sequence[str]) -> Situation:
        """The situation of a conversation: the earlier turns that asked for a platform, then this turn."""
        situation = Situation()
        for i, q in enumerate(earlier):
            if self.asks(q, earlier[:i]):
                situation = situation.merged(self.situation(q))
        return situation.merged(self.situation(text))


def _cue_asks(question: str, earlier: Sequence[str]) -> bool:
    return any(is_selection_question(q, bool(read(q))) for q in [*earlier, question])


def readers(reader: SituationReader) -> list[Reader]:
    return [
        Reader("fitted", reader.read, lambda q, earlier: reader.asks_platform(q, earlier)),
        Reader("cue baseline", read, _cue_asks),
    ]


def _row(label: str, hits: Sequence[bool]) -> str:
    if not hits:  # a split whose texts carry no such label (test3 has no verdicts)
        return f"| {label} | 0 | — | |"
    share, low, high = interval(hits)
    return f"| {label} | {len(hits)} | {share:.3f} | {low:.3f}–{high:.3f} |"


def _paired_row(label: str, a: Sequence[bool], b: Sequence[bool]) -> str:
    if not a:  # no labelled texts for this measure on the split (dev4 and dev5 have no negation table)
        return f"| {label} | — | |"
    diff, low, high = paired(a, b)
    return f"| {label} | {diff:+.3f} | {low:+.3f}–{high:+.3f} |"


def asks_hits(
    situations: list[Example], asks: dict[tuple[str, tuple[str, ...]], bool]
) -> tuple[list[bool], list[bool], list[bool]]:
    """Asks-for-a-platform right or wrong on the texts labelled for it (every text, the follow-ups), and whether
    each text labelled as asking none got a decision. A text without the label (situations_facets.jsonl, which
    only teaches the facet models) counts in neither."""
    labelled = [r for r in situations if r.asks is not None]
    return (
        [asks[_key(r)] == r.asks for r in labelled],
        [asks[_key(r)] == r.asks for r in labelled if r.earlier],
        [asks[_key(r)] for r in labelled if r.asks is False],
    )


def whole_advisor_hits(situations: Sequence[Example], decides: Callable[[str], bool]) -> tuple[list[bool], list[bool]]:
    """Through the whole advisor (``decides``: whether its answer to a text ends in a verdict or a request for the
    situation), each first turn labelled as asking for a platform decided, and each labelled as asking none left
    undecided. The reader can say a text asks for a platform while the answer step still reads it as a question
    for a value and refuses it; only the whole advisor shows that."""
    first = [r for r in situations if r.asks is not None and not r.earlier]
    decided = {r.text: decides(r.text) for r in first}
    return [decided[r.text] for r in first if r.asks], [not decided[r.text] for r in first if not r.asks]


def split_rows(split: str) -> list[Example]:
    """The labelled situations and negation phrasings of one split (situations_unfitted.jsonl's too)."""
    labelled = [*load_examples(), *situation_examples(EVALS / UNFITTED)]
    return [r for r in labelled if r.split == split and r.source in ("situations", "negation")]


def advisor_report(split: str, decides: Callable[[str], bool]) -> str:
    """The Markdown table of ``whole_advisor_hits`` for one split."""
    situations = [r for r in split_rows(split) if r.source == "situations"]
    platform, none = whole_advisor_hits(situations, decides)
    return "\n".join([
        "### the whole advisor (first turns, `--through-advisor`)", "",
        "| measure | n | accuracy | 95 % interval |", "|---|---:|---:|---:|",
        _row("platform questions whose answer is a decision", platform),
        _row("texts that ask none whose answer is no decision", none), "",
    ])  # fmt: skip


def report(split: str, reader: SituationReader, snap: Snapshot | None = None) -> str:
    """The Markdown tables for one split."""
    rows = split_rows(split)
    situations = [r for r in rows if r.source == "situations"]
    table = [r for r in rows if r.source == "negation"]
    lines = [f"## Situations, split `{split}` ({len(situations)} texts, {len(table)} negation phrasings)", ""]
    kept: dict[str, dict[str, list[bool]]] = {}
    for rd in readers(reader):
        read_texts = {r.text: rd.situation(r.text) for r in rows}
        kept[rd.name] = {
            "whole situation": [_exact(read_texts[r.text], r) for r in situations],
            "negation table": [_value(read_texts[r.text], *r.facets) == _label(r) for r in table],
        }
        lines += [f"### {rd.name}", "", "| measure | n | accuracy | 95 % interval |", "|---|---:|---:|---:|"]
        for facet in facets().order:
            hits = [_value(read_texts[r.text], facet) == r.facets[facet] for r in situations if facet in r.facets]
            lines.append(_row(f"facet {facet}", hits))
        lines.append(_row("whole situation", [_exact(read_texts[r.text], r) for r in situations]))
        negated = [(r, f) for r in situations for f in r.negated]
        lines.append(_row("negated facet flagged", [_flagged(read_texts[r.text], f) for r, f in negated]))
        lines.append(_row("negation table", [_value(read_texts[r.text], *r.facets) == _label(r) for r in table]))
        for group, hits in _groups(table, read_texts).items():
            lines.append(_row(f"negation table: {group}", hits))
        asks = {_key(r): rd.asks(r.text, r.earlier) for r in situations}
        asks_right, followup_hits, factual = asks_hits(situations, asks)
        lines.append(_row("asks for a platform", asks_right))
        if followup_hits:
            lines.append(_row("asks for a platform: follow-ups", followup_hits))
        followups = [r for r in situations if r.earlier]
        lines.append(
            f"| decisions on texts that ask none (verdict or situation request) | {len(factual)} | {sum(factual)} | |"
        )
        if snap is not None:
            # a follow-up's verdict is its conversation's
            readings = {
                _key(r): rd.conversation(r.text, r.earlier) if r.earlier else read_texts[r.text] for r in situations
            }
            kept[rd.name]["selection verdicts"] = _verdicts(situations, readings, asks, snap)
            kept[rd.name]["selection verdicts, table alone"] = _verdicts(situations, readings, asks, snap, False)
            if followups:
                verdicts = _verdicts(followups, readings, asks, snap)
                lines.append(_row("selection verdicts: follow-ups", verdicts))
            lines.append(_row("selection verdicts", kept[rd.name]["selection verdicts"]))
            lines.append(_row("selection verdicts, table alone", kept[rd.name]["selection verdicts, table alone"]))
            kept[rd.name]["verdict of the labelled facets"] = _as_labelled(situations, readings, asks, snap)
            lines.append(_row("verdict of the labelled facets", kept[rd.name]["verdict of the labelled facets"]))
        lines.append("")
    fitted, baseline = kept["fitted"], kept["cue baseline"]
    lines += ["### fitted − cue baseline (paired)", "", "| measure | difference | 95 % interval |", "|---|---:|---:|"]
    for measure in ("whole situation", "negation table", "verdict of the labelled facets"):
        if measure in fitted:
            lines.append(_paired_row(measure, fitted[measure], baseline[measure]))
    if fitted.get("selection verdicts"):
        lines += ["", "### fitted verdict combiner − verdict table (paired, fitted reader)", "",
                  "| measure | difference | 95 % interval |", "|---|---:|---:|",
                  _paired_row("selection verdicts", fitted["selection verdicts"],
                              fitted["selection verdicts, table alone"])]  # fmt: skip
    return "\n".join(lines)


def labelled_situation(r: Example) -> Situation:
    """The situation a text's labels state: each stated facet, negated where the labels say so.

    >>> labelled_situation(Example("x", "dev", facets={"fleet": "fixed", "ops_team": NONE})).values()
    {'fleet': 'fixed'}
    """
    return Situation(
        {f: Reading(f, v, "", negated=f in r.negated) for f, v in r.facets.items() if v is not None and v != NONE}
    )


def _as_labelled(
    situations: Sequence[Example],
    readings: dict[tuple[str, tuple[str, ...]], Situation],
    asks: dict[tuple[str, tuple[str, ...]], bool],
    snap: Snapshot,
) -> list[bool]:
    """Per first turn that asks for a platform: is the verdict of what was read the verdict its labelled facets
    give (the same rules and combiner)? A misread facet the decision does not turn on costs nothing here."""
    hits = []
    for r in situations:
        if not r.asks or r.earlier or not r.facets:
            continue
        wanted = verdict_for(labelled_situation(r), r.lang, snap, always=True)
        got = verdict_for(readings[_key(r)], r.lang, snap, always=True) if asks[_key(r)] else None
        hits.append(got is not None and wanted is not None and got.value == wanted.value)
    return hits


def _value(situation: Situation, facet: str) -> str:
    reading = situation.readings.get(facet)
    return reading.value if reading else NONE


def _label(r: Example) -> str | None:
    return next(iter(r.facets.values()))


def _exact(situation: Situation, r: Example) -> bool:
    return all(_value(situation, f) == v for f, v in r.facets.items())


def _flagged(situation: Situation, facet: str) -> bool:
    reading = situation.readings.get(facet)
    return reading is not None and reading.negated


def _groups(table: Sequence[Example], read_texts: dict[str, Situation]) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = defaultdict(list)
    for r in table:
        hit = _value(read_texts[r.text], *r.facets) == _label(r)
        out[f"lang {r.lang}"].append(hit)
        out[f"kind {r.kind}"].append(hit)
    return dict(sorted(out.items()))


def _key(r: Example) -> tuple[str, tuple[str, ...]]:
    """A text with the conversation it continues (one follow-up can follow several first turns)."""
    return r.text, tuple(r.earlier)


def _verdicts(
    situations: Sequence[Example],
    readings: dict[tuple[str, tuple[str, ...]], Situation],
    asks: dict[tuple[str, tuple[str, ...]], bool],
    snap: Snapshot,
    combiner: bool = True,
) -> list[bool]:
    """Per selection text with a labelled verdict: is its verdict right (the fitted combiner of the rules'
    votes, or the verdict table alone)?"""
    model = verdict_model() if combiner else None
    hits = []
    for r in situations:
        if not r.asks or not r.verdict:
            continue
        verdict = (
            build_verdict(readings[_key(r)], rules_for(r.lang, snap), r.lang, always=True, model=model)
            if asks[_key(r)]
            else None
        )
        hits.append(verdict is not None and verdict.value == r.verdict)
    return hits
