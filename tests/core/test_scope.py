"""core.scope: what governs a cue in its clause — negations, indifference, hedges, conditions, tag questions."""

from __future__ import annotations

import pytest

from core.scope import clause_negation, negation_mask, scope
from core.text import normalize


def _scope_of(clause: str, cue: str):  # type: ignore[no-untyped-def]
    text = normalize(clause)
    start = text.index(cue)
    return scope(text, start, start + len(cue))


@pytest.mark.parametrize(
    ("clause", "cue", "negated"),
    [
        ("we don't need inference, ok", "inference", True),  # a tag question is no indifference
        ("we will not run any inference", "inference", True),
        ("inference is off the table", "inference", True),
        ("推論はしません", "推論", True),
        ("推論の予定はない", "推論", True),
        ("推論はしないわけではない", "推論", False),  # double negation
        ("it's not that we won't serve models", "serve models", False),
        ("two systems is fine by us", "two systems", False),
        ("基盤が2つになるのは気にしません", "基盤が2つ", False),
        ("同じ基盤にはこだわらない", "同じ基盤", False),
        ("運用担当は3人しかいません", "運用担当", False),  # "only three": no negation
        ("we need inference", "inference", False),
        ("we lack anyone with hpc experience", "hpc experience", True),  # a verb of absence
        ("the team is lacking hpc experience", "hpc experience", True),
        ("it's not that we lack hpc experience", "hpc experience", False),
        ("専任の運用者は不在", "専任の運用", True),
        ("slack is where we talk about hpc experience", "hpc experience", False),  # not the word "lack"
        ("we don\u2019t need inference", "inference", True),  # a typographic apostrophe
        ("inference isn\u2019t needed", "inference", True),
        ("hpc experience is missing on the team", "hpc experience", True),
        ("casino " + "a" * 44 + " inference", "inference", False),  # "no", the end of a word the window cuts, is none
        # said after the thing, or by a verb of ending
        ("inference is no longer part of the plan", "inference", True),
        ("serving is no longer optional", "serving", False),  # a requirement
        ("the cloud migration was cancelled", "cloud", True),
        ("autoscaling has been ruled out", "autoscaling", True),
        ("spot nodes: out of the question", "spot nodes", True),
        ("we stopped serving models in march", "serving", True),
        ("we want to stop using the cloud", "cloud", True),
        ("we scrapped the inference endpoint", "inference", True),
        ("we cancelled the plan to drop inference", "inference", False),  # two negations
        ("we shut down the cloud instances at night", "cloud", False),  # a routine pause ends nothing
        ("推論サービスは取りやめになりました", "推論", True),
        ("クラウド移行の計画は白紙に戻った", "クラウド", True),
        ("オートスケールは見送りました", "オートスケール", True),
        ("推論は見送らない", "推論", False),
        # an English verb of ending as a Japanese verb; "not optional" is a requirement in either language
        ("inferenceのrolloutはcancelになった", "inference", True),
        ("autoscalingの導入はdropしました", "autoscaling", True),
        ("推論はdropしない", "推論", False),
        ("推論の提供は任意ではなく必須", "推論", False),
        ("servingはもうoptionalじゃない", "serving", False),
        ("serving is not optional", "serving", False),
    ],
)
def test_negation(clause: str, cue: str, negated: bool) -> None:
    assert _scope_of(clause, cue).negated is negated


def test_indifference_hedge_condition_and_tag_are_separate_features() -> None:
    assert _scope_of("we don\u2019t mind two systems", "two systems").indifferent  # a typographic apostrophe
    assert _scope_of("同じ基盤にはこだわらない", "同じ基盤").indifferent
    assert _scope_of("we might serve the model later", "serve the model").hedged
    assert _scope_of("if we don't need inference", "inference").conditional
    assert _scope_of("推論をしないなら", "推論").conditional
    assert _scope_of("we don't need inference, ok", "inference").tag
    assert not _scope_of("we need inference", "inference").tag


@pytest.mark.parametrize(
    ("clause", "cue", "negated"),
    [
        ("gpuにパブリッククラウドは使っていません", "クラウド", True),  # "ていません" is one predicate
        ("クラウドは使っておらず", "クラウド", True),
        ("クラウドを使って、推論もする", "クラウド", False),  # "て、" links a new clause
        ("if the cloud budget doesn't come through we stay on-prem", "on-prem", False),  # negation in the condition
        ("if we don't need inference", "inference", True),  # the condition's own predicate stays negated
        ("nobody minds a different platform for serving", "different platform", False),
        ("i honestly don't care about having a single platform", "single platform", False),
        ("推論はしなければならない", "推論", False),  # obligation, not negation
        ("hpcの経験はあってもk8sは触ったことがない", "hpcの経験", False),  # a concessive "ても" ends its clause
        ("k8sは使っても推論はしない", "推論", True),
        ("推論は別の基盤に分けても構わない", "別の基盤", False),  # permission keeps the predicate whole
        # a cue that opens its clause is the subject of a predicate further on
        ("integration with the rest of our tooling is not a priority", "integration", True),
        ("we need integration and the rest of our tooling is not a priority", "integration", False),
        # a Japanese predicate after an English word (code-switching)
        ("ci/cd integrationはpriorityじゃない", "ci/cd", True),
        ("adminにslurmを教えるplanはないです", "slurm", True),
        ("ci/cd integrationがpriority", "ci/cd", False),
        # "て" inside a verb or a contracted ending links no clause: the negation after it is the cue's own
        ("推論サービスを立てる予定はありません", "推論", True),
        ("推論はやってない", "推論", True),
        ("うちはinferenceをserveしてないし", "inference", True),
        ("クラウドを使って学習する予定はない", "クラウド", False),  # "て" before kanji begins a new clause
        # a negation before a new conjunct does not reach into it: no double negation of the second cue
        ("we don't autoscale and we don't serve models", "serve models", True),
        ("no autoscaling and no serving", "serving", True),
        ("we have no sre team and nobody has ever touched slurm", "slurm", True),
        ("we don't autoscale and we serve models", "serve models", False),
        ("we don't need inference or serving", "serving", True),  # no new subject: one conjunct
        # a cue that opens its clause as the subject of a negated verb
        ("inference isn't something we run", "inference", True),
        ("inference is not a problem", "inference", False),  # indifference, not negation
    ],
)
def test_negation_scope_ends_where_its_predicate_ends(clause: str, cue: str, negated: bool) -> None:
    assert _scope_of(clause, cue).negated is negated


def test_indifference_reaches_a_cue_later_in_the_clause() -> None:
    assert _scope_of("i honestly don't care about having a single platform", "single platform").indifferent
    assert _scope_of("同じ基盤でも別でもどっちでもいい", "同じ基盤").indifferent
    assert not _scope_of("we want a single platform", "single platform").indifferent


def _marked(clause: str) -> str:
    text = normalize(clause)
    return "".join(c for c, m in zip(text, negation_mask(text), strict=True) if m).strip()


@pytest.mark.parametrize(
    ("clause", "marked"),
    [
        ("", ""),
        ("we serve models", ""),
        ("nothing about batch schedulers", "about batch schedulers"),  # no cue needed
        ("no serving, only training", "serving"),  # up to the comma
        ("推論はしません", "推論はし"),
        ("hpc経験がないわけではない", "ないわけでは"),  # double negation: "hpc経験" back to even
        ("運用は3人しかいません", ""),  # "only three": nothing negated
        ("two systems is fine, we don't mind", ""),  # indifference
        ("推論はしなければならない", ""),  # obligation
        ("we don't autoscale and we serve models", "autoscale"),  # a new conjunct ends the reach
    ],
)
def test_negation_mask(clause: str, marked: str) -> None:
    assert _marked(clause) == marked


def test_clause_negation_counts_negators_apart_from_lexical_negatives() -> None:
    assert clause_negation(normalize("We have nothing to serve")).negators == 1
    only = clause_negation(normalize("運用は3人しかいません"))
    assert (only.negators, only.lexical) == (0, 1)
    assert clause_negation(normalize("one platform or two makes no difference")).indifferent
    assert clause_negation(normalize("推論は要らないですよね？")).tag


@pytest.mark.parametrize(
    ("clause", "cue", "other"),
    [
        ("serving is done by a different department on their own stack", "serving", True),
        ("inference will be done by a partner company", "inference", True),
        ("the fraud model is scored through a vendor's engine, inference included", "inference", True),
        ("モデルは別の会社がサービングします", "サービング", True),
        ("推論は外部saasに任せています", "推論", True),
        ("推論はお客様側の環境で行います", "推論", True),
        ("we serve the models to customers", "serve the models", False),  # serving *to* someone is one's own
        ("推論は別基盤でやる予定", "推論", False),  # another platform of one's own is no other party
        ("the fleet scales with customer demand", "fleet", False),
    ],
)
def test_another_party_doing_the_thing_is_its_own_feature(clause: str, cue: str, other: bool) -> None:
    s = _scope_of(clause, cue)
    assert s.other_party is other
    assert not s.negated  # no negation says it: the fitted reader weighs the feature
