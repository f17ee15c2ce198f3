"""The verdict table (pure): situation facets + the documents' rules → a platform, with a vote per facet.

A stated facet votes through the rules that state it (each rule's condition was read into facets at
ingest, ``core.situation``), except rules the situation contradicts ("cloud-first with frequent scaling"
does not apply to a cloud team with a fixed fleet). Then:
- every vote for one platform gives that platform;
- training and serving: Kubernetes when one platform must do everything; the hybrid (the article's role
  split) when training votes Slurm or separate platforms are fine; Kubernetes when training votes it;
  ``depends`` on one platform or two when nothing else is stated;
- a real conflict gives ``depends``, naming the facet that decides it (``deciding_order`` in facets.toml);
- no vote at all gives no verdict (None): the answer asks for the deciding facts instead.

A fitted combiner (``VerdictModel``, in ``situation_model.json``) may then weigh the same votes otherwise: it
reads which platforms each stated facet votes for and what the table gives (``verdict_features``), and its
choice stands when some stated facet votes for that platform (every verdict keeps a rule to quote) or it
says ``depends`` (on the deciding facet of the table, else the first facet that votes).

    >>> from core.contract import Rule, VerdictValue
    >>> rule = Rule(id="r", doc_id="d", chunk_id="c", section="", language="en", condition="on-prem",
    ...             verdict="slurm", quote="", facets={"deployment": "on_prem"})
    >>> combine({"deployment": "on_prem"}, [rule]).value
    'slurm'

Deliberately left out: reading text (``core.situation``), quoting rules (``app.answer.compose``) and any
platform written in code: every vote comes from a rule read from the documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, cast

import numpy as np

from core.contract import Rule, VerdictValue
from core.situation import facets

SERVING = ("workload", "training_and_serving")
_NOT_TRAINING_SIDE = ("workload", "one_platform")


PLATFORMS = ("slurm", "kubernetes", "hybrid")
OUTCOMES = ("slurm", "kubernetes", "hybrid", "depends", "none")  # the table's own verdict, one-hot


def verdict_feature_names() -> list[str]:
    """The fitted combiner's features, in ``verdict_features`` order."""
    return [
        *(f"vote_{f}_{p}" for f in facets().order for p in PLATFORMS),
        *(f"facets_for_{p}" for p in PLATFORMS),
        *(f"table_{o}" for o in OUTCOMES),
        "serving",
        "one_platform_yes",
        "one_platform_no",
    ]


class VerdictModel(Protocol):
    """A fitted combiner: class names and a probability per class (``app.advice.model.Linear``)."""

    @property
    def classes(self) -> list[str]: ...

    def probabilities(self, x: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Outcome:
    """The table's answer: a platform (or None), the rules each stated facet votes through, the facet that
    decides a ``depends``."""

    value: VerdictValue | None
    votes: dict[str, list[Rule]] = field(default_factory=dict)
    deciding: str | None = None


def applies(rule: Rule, situation: Mapping[str, str]) -> bool:
    """A rule applies unless the situation states one of its facets with another value."""
    return all(situation.get(f, v) == v for f, v in rule.facets.items())


def votes(situation: Mapping[str, str], rules: Sequence[Rule]) -> dict[str, list[Rule]]:
    """Per stated facet, the applicable rules that state its value (document order)."""
    out: dict[str, list[Rule]] = {}
    for facet, value in situation.items():
        backing = [r for r in rules if r.facets.get(facet) == value and applies(r, situation)]
        if backing:
            out[facet] = backing
    return out


def _platforms(backing: Mapping[str, Sequence[Rule]], skip: Sequence[str] = ()) -> dict[str, set[str]]:
    return {f: {r.verdict for r in rs} for f, rs in backing.items() if f not in skip}


def _agree(per_facet: Mapping[str, set[str]]) -> VerdictValue | Literal["conflict"] | None:
    """The one platform all facets vote for, None when none votes, "conflict" when they disagree."""
    every = set().union(*per_facet.values()) if per_facet else set()
    if not every:
        return None
    return cast(VerdictValue, next(iter(every))) if len(every) == 1 else "conflict"


def _deciding(per_facet: Mapping[str, set[str]]) -> str | None:
    order = facets().deciding_order
    voting = [f for f in order if per_facet.get(f)]
    return voting[0] if voting else None


def combine(situation: Mapping[str, str], rules: Sequence[Rule], model: VerdictModel | None = None) -> Outcome:
    """The verdict for ``situation`` ({facet: value}) under ``rules``: the table's, or the fitted combiner's
    reading of the same votes when ``model`` is given."""
    outcome = table(situation, rules)
    if model is None or not situation:
        return outcome
    return refit_outcome(outcome, situation, model)


def verdict_features(situation: Mapping[str, str], outcome: Outcome) -> list[float]:
    """What the fitted combiner reads (``verdict_feature_names``): each stated facet's platforms, how many
    facets vote for each platform, the table's verdict, and the workload's shape."""
    per_facet = _platforms(outcome.votes)
    order = facets().order
    return [
        *(float(p in per_facet.get(f, set())) for f in order for p in PLATFORMS),
        *(float(sum(p in v for v in per_facet.values())) for p in PLATFORMS),
        *(float((outcome.value or "none") == o) for o in OUTCOMES),
        float(situation.get(SERVING[0]) == SERVING[1]),
        float(situation.get("one_platform") == "yes"),
        float(situation.get("one_platform") == "no"),
    ]


def refit_outcome(outcome: Outcome, situation: Mapping[str, str], model: VerdictModel) -> Outcome:
    """The fitted combiner's verdict over the table's votes, where it may stand (see the module's note)."""
    p = model.probabilities(np.asarray(verdict_features(situation, outcome)))
    chosen = model.classes[int(np.argmax(p))]
    if chosen == outcome.value:
        return outcome
    per_facet = _platforms(outcome.votes)
    if chosen == "depends":
        deciding = outcome.deciding or _deciding(per_facet)
        return Outcome("depends", outcome.votes, deciding) if deciding else outcome
    if any(chosen in platforms for platforms in per_facet.values()):
        return Outcome(cast(VerdictValue, chosen), outcome.votes)
    return outcome


def table(situation: Mapping[str, str], rules: Sequence[Rule]) -> Outcome:
    """The table's verdict for ``situation`` ({facet: value}) under ``rules`` (the rules of the module's note)."""
    backing = votes(situation, rules)
    if not situation:
        return Outcome(None, backing)
    serving = situation.get(SERVING[0]) == SERVING[1]
    one_platform = situation.get("one_platform")
    if serving:
        training = _agree(_platforms(backing, _NOT_TRAINING_SIDE))
        single = _agree(_platforms({"one_platform": backing.get("one_platform", [])}))
        if one_platform == "yes" and single is not None and single != "conflict":
            return Outcome(single, backing)  # one platform for everything: the rules that say so decide
        if training == "conflict":
            return Outcome("depends", backing, _deciding(_platforms(backing, _NOT_TRAINING_SIDE)))
        if training == "slurm" or one_platform == "no":
            return Outcome("hybrid", backing)
        if training is None and one_platform is None and len(_platforms(backing).get("workload", set())) > 1:
            # serving alone: one platform for everything (Kubernetes) or the role split (hybrid) both apply
            return Outcome("depends", backing, "one_platform")
        return Outcome("kubernetes", backing)
    per_facet = _platforms(backing)
    agreed = _agree(per_facet)
    if agreed is None:
        # stated facets whose rules all meet a contradiction ("training only" against the integration rule,
        # "integration" against the training rule): the situation pulls both ways, the documents do not decide
        contested = [
            f for f in facets().deciding_order if f in situation and any(r.facets.get(f) == situation[f] for r in rules)
        ]
        return Outcome("depends", backing, contested[0]) if contested else Outcome(None, backing)
    if agreed == "conflict":
        if one_platform == "no" and set().union(*per_facet.values()) <= {"slurm", "hybrid"}:
            return Outcome("hybrid", backing)
        return Outcome("depends", backing, _deciding(per_facet))
    return Outcome(agreed, backing)


def undecided(situation: Mapping[str, str], rules: Sequence[Rule], model: VerdictModel | None = None) -> Outcome:
    """A platform question the stated facets do not decide: ``depends`` on the first facet (``deciding_order``)
    whose values, added to what was stated, give different verdicts; no verdict when no facet would."""
    for facet in facets().deciding_order:
        if facet in situation:
            continue
        given = {combine({**situation, facet: v}, rules, model).value for v in facets().values[facet]}
        if len(given - {None}) > 1:
            return Outcome("depends", votes(situation, rules), facet)
    return Outcome(None, votes(situation, rules))


def by_value(
    situation: Mapping[str, str], rules: Sequence[Rule], facet: str, model: VerdictModel | None = None
) -> list[Flip]:
    """What each value of ``facet`` would give, the rest of the situation as stated (that facet's own rules
    alone where the whole still depends)."""
    rest = {f: v for f, v in situation.items() if f != facet}
    out = []
    for value in facets().values[facet]:
        verdict = combine({**rest, facet: value}, rules, model).value
        if verdict in (None, "depends"):
            verdict = combine({facet: value}, rules, model).value
        if verdict is not None:
            out.append(Flip(facet, value, verdict))
    return out


@dataclass(frozen=True)
class Flip:
    """A facet value that would change the verdict, and the verdict it would give."""

    facet: str
    value: str
    verdict: VerdictValue


def what_would_change(
    situation: Mapping[str, str], rules: Sequence[Rule], limit: int = 3, model: VerdictModel | None = None
) -> list[Flip]:
    """Facet values whose addition (an unstated facet) or flip (a stated one) changes the verdict; unstated
    facets first, never a condition the user already stated."""
    current = combine(situation, rules, model).value
    defs = facets()
    added: list[Flip] = []
    flipped: list[Flip] = []
    for facet in defs.order:
        for value in defs.values[facet]:
            if situation.get(facet) == value:
                continue
            changed = combine({**situation, facet: value}, rules, model).value
            if changed is not None and changed != current:
                (flipped if facet in situation else added).append(Flip(facet, value, changed))
    return [*added, *flipped][:limit]
