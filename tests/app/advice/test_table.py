"""The verdict table (pure): a truth table over every combination of facets, and the article's own
scenario rows and summary points (in our words) as fixtures."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from app.advice.table import applies, combine, verdict_feature_names, verdict_features, votes, what_would_change
from core.contract import Rule
from core.situation import facets


def _rule(i: int, verdict: str, **facet_values: str) -> Rule:
    return Rule(
        id=f"r{i}",
        doc_id="article",
        chunk_id=f"c{i}",
        section="7",
        language="en",
        condition=f"rule {i}",
        verdict=verdict,
        quote=f"rule {i}",
        facets=facet_values,  # type: ignore[arg-type]
    )


# The shape of the article's decision rules, in our own words: four scenario rows, the overview's two
# points, the summary's points and the strengths lists.
RULES = [
    _rule(1, "slurm", deployment="on_prem"),
    _rule(2, "kubernetes", deployment="cloud", fleet="elastic"),
    _rule(3, "kubernetes", workload="training_and_serving", one_platform="yes"),
    _rule(4, "slurm", hpc_experience="experienced", ops_team="small"),
    _rule(5, "slurm", workload="training", priority="training_speed_cost"),
    _rule(6, "kubernetes", deployment="cloud", fleet="elastic", one_platform="yes", workload="training_and_serving"),
    _rule(7, "slurm", priority="training_speed_cost"),
    _rule(8, "kubernetes", workload="training_and_serving", priority="integration"),
    _rule(9, "hybrid", workload="training_and_serving", one_platform="no"),
    _rule(10, "kubernetes", deployment="cloud", fleet="elastic"),
]

ROWS = [
    ({"deployment": "on_prem"}, "slurm"),
    ({"deployment": "cloud", "fleet": "elastic"}, "kubernetes"),
    ({"workload": "training_and_serving", "one_platform": "yes"}, "kubernetes"),
    ({"hpc_experience": "experienced", "ops_team": "small"}, "slurm"),
    ({"workload": "training", "priority": "training_speed_cost"}, "slurm"),
    ({"priority": "training_speed_cost"}, "slurm"),
    ({"workload": "training_and_serving", "priority": "integration"}, "kubernetes"),
    ({"workload": "training_and_serving", "one_platform": "no"}, "hybrid"),
    ({"workload": "training_and_serving"}, "depends"),  # one platform or two decides it
    # the cases: cloud elastic and new to HPC; cloud elastic, HPC experience, speed first
    ({"deployment": "cloud", "fleet": "elastic", "hpc_experience": "new"}, "kubernetes"),
    (
        {"deployment": "cloud", "fleet": "elastic", "hpc_experience": "experienced", "priority": "training_speed_cost"},
        "depends",
    ),
    # on-prem and also serving: train on Slurm, serve on Kubernetes; one platform for everything: Kubernetes
    ({"deployment": "on_prem", "workload": "training_and_serving"}, "hybrid"),
    ({"deployment": "on_prem", "workload": "training_and_serving", "one_platform": "yes"}, "kubernetes"),
    # a cloud team with a fixed fleet: the scaling row does not apply
    ({"deployment": "cloud", "fleet": "fixed", "priority": "training_speed_cost"}, "slurm"),
    ({}, None),
]


@pytest.mark.parametrize(("situation", "expected"), ROWS)
def test_article_rows_and_summary_points(situation: dict[str, str], expected: str | None) -> None:
    assert combine(situation, RULES).value == expected


def _all_situations() -> list[dict[str, str]]:
    defs = facets()
    choices = [[None, *defs.values[f]] for f in defs.order]
    return [
        {f: v for f, v in zip(defs.order, combo, strict=True) if v is not None} for combo in itertools.product(*choices)
    ]


def test_truth_table_over_every_combination() -> None:
    seen: set[str | None] = set()
    for situation in _all_situations():
        outcome = combine(situation, RULES)
        seen.add(outcome.value)
        platforms = {r.verdict for rs in outcome.votes.values() for r in rs}
        serving = situation.get("workload") == "training_and_serving"
        if not situation:
            assert outcome.value is None
        if outcome.value == "depends":
            # the deciding facet is one the user stated, or one whose answer would decide it
            deciding = outcome.deciding
            assert deciding is not None, situation
            if deciding not in situation:
                assert any(
                    combine({**situation, deciding: v}, RULES).value != "depends" for v in facets().values[deciding]
                ), situation
        if outcome.value == "hybrid":
            assert serving or situation.get("one_platform") == "no", situation
        if serving and situation.get("one_platform") == "yes":
            assert outcome.value == "kubernetes", situation
        if not serving and len(platforms) == 1 and outcome.value is not None:
            assert outcome.value == next(iter(platforms)), situation  # every vote for one platform gives it
        for facet, rules in outcome.votes.items():
            assert all(r.facets[facet] == situation[facet] and applies(r, situation) for r in rules)
    assert seen == {"slurm", "kubernetes", "hybrid", "depends", None}


def test_a_contradicted_rule_casts_no_vote() -> None:
    assert "deployment" not in votes({"deployment": "cloud", "fleet": "fixed"}, RULES)
    assert votes({"deployment": "cloud"}, RULES)["deployment"][0].verdict == "kubernetes"


def test_what_would_change_never_repeats_a_stated_condition() -> None:
    situation = {"deployment": "on_prem", "workload": "training"}
    flips = what_would_change(situation, RULES)
    assert flips and all(situation.get(f.facet) != f.value for f in flips)
    serving = [f for f in flips if f.facet == "workload"]
    assert serving and serving[0].verdict == "hybrid"
    assert all(f.verdict != combine(situation, RULES).value for f in flips)


def test_rules_from_another_document_change_the_table() -> None:
    # the table has no platform of its own: with no rules nothing is decided
    assert combine({"deployment": "on_prem"}, []).value is None
    flipped = [_rule(1, "kubernetes", deployment="on_prem")]
    assert combine({"deployment": "on_prem"}, flipped).value == "kubernetes"


class Prefers:
    """A stand-in fitted combiner that always prefers one class."""

    def __init__(self, choice: str) -> None:
        self.classes = ["depends", "hybrid", "kubernetes", "slurm"]
        self.choice = choice

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        assert x.shape == (len(verdict_feature_names()),)
        return np.asarray([0.7 if c == self.choice else 0.1 for c in self.classes])


def test_the_combiner_may_pick_a_platform_a_stated_facet_votes_for() -> None:
    situation = {"deployment": "cloud", "fleet": "elastic", "hpc_experience": "experienced"}
    assert combine(situation, RULES).value == "depends"
    assert combine(situation, RULES, Prefers("kubernetes")).value == "kubernetes"


def test_the_combiner_never_picks_a_platform_no_stated_facet_votes_for() -> None:
    situation = {"deployment": "on_prem"}
    assert combine(situation, RULES, Prefers("kubernetes")).value == "slurm"  # no rule to quote: the table stands


def test_a_combiner_that_says_depends_names_the_deciding_facet() -> None:
    outcome = combine({"deployment": "on_prem", "priority": "integration"}, RULES, Prefers("depends"))
    assert outcome.value == "depends"
    assert outcome.deciding in {"deployment", "priority"}


def test_the_combiner_gives_no_verdict_where_the_table_has_no_vote() -> None:
    assert combine({"ops_team": "dedicated"}, RULES, Prefers("depends")).value is None
    assert combine({}, RULES, Prefers("slurm")).value is None


def test_verdict_features_say_which_platforms_each_facet_votes_for() -> None:
    situation = {"deployment": "cloud", "fleet": "elastic", "workload": "training"}
    outcome = combine(situation, RULES)
    x = dict(zip(verdict_feature_names(), verdict_features(situation, outcome), strict=True))
    assert x["vote_deployment_kubernetes"] == 1.0 and x["vote_deployment_slurm"] == 0.0
    assert x["facets_for_kubernetes"] == 2.0  # deployment and fleet, through rules 2 and 10
    assert x[f"table_{outcome.value or 'none'}"] == 1.0
    assert sum(x[f"table_{o}"] for o in ("slurm", "kubernetes", "hybrid", "depends", "none")) == 1.0


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_the_shipped_combiner_keeps_each_rules_own_situation(rule: Rule) -> None:
    # a situation that is exactly one rule's condition gets what the table gives it ("on-prem" → Slurm)
    from app.advice.model import verdict_model

    combiner = verdict_model()
    assert combiner is not None
    situation = dict(rule.facets)
    assert combine(situation, RULES, combiner).value == combine(situation, RULES).value
