"""The situation reader (pure): text → facets of a team's situation, each with the words that set it.

One reader for every place a situation is stated: a selection question, a follow-up, a questionnaire
answer, and — at ingest — the condition of each decision rule the article states, so questions and rules
meet on the same facets (``core/facets.toml``). Cue phrases in both languages set a value; a negation in
the cue's clause sets the opposite value ("no inference" → training only, "not in the cloud" → on-prem,
"推論の予定はない", "drop the autoscaling requirement"). Saying that something is fine ("two systems is
fine", "基盤が2つになるのは気にしません") is not a negation. Where no cue matches, an optional similarity
function (the embedder, supplied by the caller) may read a clause against the values' descriptions.

    >>> read("We will not run any inference; it is purely for pretraining on our own racks.").values()
    {'workload': 'training', 'deployment': 'on_prem'}

Deliberately left out: deciding a platform (``app.advice.verdict``) and any rule of the article: the
facets name criteria, the documents state what each implies.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from core.scope import APOSTROPHES, Scope, scope
from core.text import normalize

FACETS_PATH = Path(__file__).with_name("facets.toml")


@dataclass(frozen=True)
class FacetValue:
    facet: str
    value: str
    label: dict[str, str]
    change: dict[str, str]
    description: dict[str, str]
    opposite: str
    cues: tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class Facets:
    """The facet definitions: facet → value → definition, in the data file's order."""

    order: tuple[str, ...]
    labels: dict[str, dict[str, str]]
    values: dict[str, dict[str, FacetValue]]
    deciding_order: tuple[str, ...]
    counts_people: frozenset[str] = frozenset()  # facets whose model reads the number of people named

    def label(self, facet: str, value: str, language: str) -> str:
        return self.values[facet][value].label["ja" if language == "ja" else "en"]

    def facet_label(self, facet: str, language: str) -> str:
        return self.labels[facet]["ja" if language == "ja" else "en"]


@lru_cache(maxsize=2)
def facets(path: Path = FACETS_PATH) -> Facets:
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    values: dict[str, dict[str, FacetValue]] = {}
    labels: dict[str, dict[str, str]] = {}
    for name, facet in data["facets"].items():
        labels[name] = dict(facet["label"])
        values[name] = {
            value: FacetValue(
                name,
                value,
                dict(spec["label"]),
                dict(spec["change"]),
                dict(spec["description"]),
                spec["opposite"],
                tuple(re.compile(c, re.ASCII) for c in spec["cues"]),
            )
            for value, spec in facet["values"].items()
        }
    counted = frozenset(name for name, facet in data["facets"].items() if facet.get("counts_people", False))
    return Facets(tuple(values), labels, values, tuple(data["deciding_order"]), counted)


@dataclass(frozen=True)
class Reading:
    """One facet as read: its value and the words that set it (negated when a negation flipped a cue)."""

    facet: str
    value: str
    span: str
    negated: bool = False


@dataclass
class Situation:
    """The facets a text states, in reading order; a later statement of a facet overrides an earlier one."""

    readings: dict[str, Reading] = field(default_factory=dict)

    def values(self) -> dict[str, str]:
        return {f: r.value for f, r in self.readings.items()}

    def merged(self, newer: Situation) -> Situation:
        """This situation updated by a newer one: the newer turn's facets, negations included, override."""
        return Situation({**self.readings, **newer.readings})

    def __bool__(self) -> bool:
        return bool(self.readings)


# Clause ends: a negation reaches to the end of its clause, never into the next one. A period inside a
# name or a version (oci.conf, v1.31) ends nothing. "でも" ends one only where it opens the next ("…。でも", "、でも":
# but); inside a clause it is a particle ("どっちでもいい", "クラウドでもオンプレでも").
_CLAUSE = re.compile(
    r"(?<![A-Za-z0-9])\.|\.(?![A-Za-z0-9])|[!?;。！？；\n]|\s[—–]\s?|\s--\s|,\s*(?:but|however|while|whereas|and|though|yet)\b|\bbut\b|、?(?:しかし|ただ|けど|けれど|が、)"
    r"|(?:、|(?<=[。！？!?])|^)でも"
)
Similarity = Callable[[str], Mapping[tuple[str, str], float]]
# Japanese text often sets a Latin word apart with spaces ("HPC 経験あり", "nodes 固定"); the cues are written
# without them (「hpc(の)?経験」), so a space between a Latin letter or digit and kana or kanji is dropped first.
_LATIN_CJK_SPACE = re.compile(
    r"(?<=[a-z0-9])[ \t\u3000]+(?=[\u3040-\u30ff\u3400-\u9fff])|(?<=[\u3040-\u30ff\u3400-\u9fff])[ \t\u3000]+(?=[a-z0-9])"
)


def cue_text(clause: str) -> str:
    """A clause as the cues read it: NFKC, lower case, ASCII apostrophes, no space between Latin text and Japanese.

    >>> cue_text("Team は HPC 経験あり")
    'teamはhpc経験あり'
    >>> cue_text("We don’t serve")
    "we don't serve"
    """
    return _LATIN_CJK_SPACE.sub("", normalize(clause).translate(APOSTROPHES))


def _clauses(text: str) -> list[str]:
    pieces, last = [], 0
    for m in _CLAUSE.finditer(text):
        pieces.append(text[last : m.start()])
        last = m.end()
    pieces.append(text[last:])
    return [p for p in pieces if p.strip()]


def _read_clause(clause: str, defs: Facets) -> list[tuple[int, Reading]]:
    """Every cue match in one clause as (position, reading), negations applied. Scaling said of serving
    ("inference that scales out with demand", the article's role split) is about the serving tier, not the
    GPU fleet."""
    found = _cue_readings(clause, defs)
    serving = [pos for pos, r in found if r.facet == "workload" and r.value == "training_and_serving" and not r.negated]
    return [(pos, r) for pos, r in found if not (r.facet == "fleet" and any(0 <= pos - s <= 60 for s in serving))]


def _cue_readings(clause: str, defs: Facets) -> list[tuple[int, Reading]]:
    found: list[tuple[int, Reading]] = []
    for facet in defs.order:
        for value in defs.values[facet].values():
            for cue in value.cues:
                m = cue.search(clause)
                if m is None:
                    continue
                if scope(clause, m.start(), m.end()).negated:
                    found.append((m.start(), Reading(facet, value.opposite, m.group().strip(), negated=True)))
                else:
                    found.append((m.start(), Reading(facet, value.value, m.group().strip())))
                break
    # at one position the longer cue is the more specific one ("推論は外部に任せ" over "推論"): it is read last
    return sorted(found, key=lambda pair: (pair[0], len(pair[1].span)))


@dataclass(frozen=True)
class Candidate:
    """One cue hit: the clause it is in (index and text), the value its words name, and its scope."""

    clause: int
    clause_text: str
    facet: str
    value: str
    span: str
    scope: Scope


def candidates(text: str) -> list[Candidate]:
    """Every cue hit in ``text`` with its negation and hedge scope: the fitted reader's features."""
    defs = facets()
    out: list[Candidate] = []
    for i, raw in enumerate(clauses(text)):
        clause = cue_text(raw)
        for facet in defs.order:
            for value in defs.values[facet].values():
                for cue in value.cues:
                    m = cue.search(clause)
                    if m is not None:
                        out.append(
                            Candidate(i, raw, facet, value.value, m.group().strip(), scope(clause, m.start(), m.end()))
                        )
                        break
    return out


def clauses(text: str) -> list[str]:
    """The clauses of ``text``: a negation reaches to the end of its clause, never into the next one."""
    return _clauses(text)


def _resolve(found: list[tuple[int, Reading]]) -> dict[str, Reading]:
    """One reading per facet and clause, in order: a direct statement is not overridden by a negated cue of
    the same facet ("not in the cloud, on our own racks": both cues say on-prem; the direct one is shown)."""
    out: dict[str, Reading] = {}
    for _, reading in found:
        current = out.get(reading.facet)
        if current is None or not (reading.negated and not current.negated):
            out[reading.facet] = reading
    return out


_TRAIN = re.compile(r"学習|トレーニング|\b(pre)?train(ing|s)?\b", re.I)
_SERVE = re.compile(r"推論|サービング|\binferenc(e|ing)\b|\bserv(e|es|ing)\b|\bendpoints?\b", re.I)
_SLURM = re.compile(r"slurm", re.I)
_K8S = re.compile(r"kubernetes|k8s", re.I)


def role_split(text: str) -> bool:
    """Training given to Slurm and serving to Kubernetes in one sentence, either order ("train on Slurm,
    serve on k8s", "学習はSlurm、推論はKubernetes", "our Slurm cluster for pretraining and the serving
    endpoints on k8s"): the article's hybrid."""
    slurm, k8s = _SLURM.search(text), _K8S.search(text)
    if not (slurm and k8s):
        return False

    def near(pattern: re.Pattern[str], m: re.Match[str]) -> bool:
        return bool(pattern.search(text[max(0, m.start() - 40) : m.end() + 40]))

    train_slurm = near(_TRAIN, slurm) and (not near(_SERVE, slurm) or slurm.start() < k8s.start())
    return train_slurm and near(_SERVE, k8s)


def read(text: str, similar: Similarity | None = None, threshold: float = 1.0) -> Situation:
    """The situation ``text`` states. ``similar`` maps a clause to its similarity with each (facet, value)
    description; a clause no cue reads sets the best value above ``threshold`` (off when None)."""
    defs = facets()
    situation = Situation()
    for raw in _clauses(text):
        clause = cue_text(raw)
        found = _read_clause(clause, defs)
        if role_split(raw):
            found += [
                (0, Reading("workload", "training_and_serving", raw.strip())),
                (0, Reading("one_platform", "no", raw.strip())),
            ]
        if not found and similar is not None:
            found = _similar(raw, clause, similar, threshold)
        situation = situation.merged(Situation(_resolve(sorted(found, key=lambda pair: (pair[0], len(pair[1].span))))))
    return situation


def _similar(raw: str, clause: str, similar: Similarity, threshold: float) -> list[tuple[int, Reading]]:
    scores = similar(raw)
    if not scores:
        return []
    (facet, value), best = max(scores.items(), key=lambda kv: kv[1])
    if best < threshold:
        return []
    return [(0, Reading(facet, value, raw.strip()))]


def read_as(situation: Situation, language: str) -> list[str]:
    """The human labels of a situation, in the facets' order ("on-prem", "training only", …)."""
    defs = facets()
    return [defs.label(f, situation.readings[f].value, language) for f in defs.order if f in situation.readings]
