"""The fitted selector: the JSON model reproduces LightGBM's calibrated scores; choosing and settling."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

from app.answer import refusal, selector
from app.answer.choose import Choice, settle
from app.answer.compose import _without_intros, _without_shown_windows, attach_followers, related_lines
from app.answer.evidence import Evidence, ScoredUnit, brought_along
from app.answer.features import COLUMN, FEATURES, Candidates, candidates
from app.answer.lead import ANSWERABLE_FEATURES, answerable_features, choose_quotes, unit_scores
from app.answer.locate import part_query
from app.answer.question import analyse
from app.answer.selector import FORMAT, MODEL_PATH, Logistic, Selector, Trees, from_dict, load, sigmoid, trees_from
from app.answer.value_candidates import span_candidates
from app.models import Passage, Quote
from core.units import heading_lead, split_units
from evals.fit import RANKER, fit_ranker, unit_json


def test_doctests() -> None:
    assert doctest.testmod(selector).failed == 0


def _ranking_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Questions of 20 units each; a unit answers when a noisy mix of its features is high. A third of the
    feature values are exactly 0, as many of the real features are (a split at 0 must send 0 left)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 5))
    x[rng.random(x.shape) < 0.33] = 0.0
    y = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + rng.normal(scale=0.3, size=600) > 1.0).astype(float)
    return x, y, np.repeat(np.arange(30), 20)


def test_exported_trees_give_lightgbm_scores() -> None:
    x, y, groups = _ranking_data()
    trees = fit_ranker(x, y, groups)
    model = lgb.LGBMRanker(**RANKER).fit(x, y.astype(int), group=[20] * 30)
    assert np.allclose(trees.raw(x), model.predict(x), atol=1e-9)


def test_the_calibrated_unit_model_reads_back_from_json() -> None:
    x, y, groups = _ranking_data()
    trees = fit_ranker(x, y, groups)
    spec = json.loads(json.dumps(unit_json(trees, 0.8, -1.5)))  # through JSON, as the model file is read
    read = trees_from(spec)
    assert np.allclose(read.probability(x), sigmoid(0.8 * trees.raw(x) - 1.5))
    # a ranking, not a constant: the answering units score higher
    assert read.probability(x)[y == 1].mean() > read.probability(x)[y == 0].mean() + 0.1


def _logistic(threshold: float) -> dict[str, object]:
    return {"features": ["a"], "mean": [0.0], "scale": [1.0], "coef": [1.0], "intercept": 0.0, "threshold": threshold}


def test_model_file_format_is_checked(tmp_path: Path) -> None:
    data = {"format": "other", "features": [], "unit": {}, "value": {}, "answerable": {}}
    with pytest.raises(ValueError, match="expected format"):
        from_dict(data)
    assert load(tmp_path / "missing.json") is None


def test_the_shipped_model_matches_the_features() -> None:
    shipped = load(MODEL_PATH)
    assert shipped is not None and shipped.features == list(FEATURES)
    assert len(set(FEATURES)) == len(FEATURES)  # a name in the model file stands for one column
    # a value bar above 1 is the fit's "no bar holds the precision on dev": the value line is then never shown
    assert 0.0 < shipped.value.threshold <= 1.01 and 0.0 < shipped.answerable.threshold < 1.0
    assert shipped.meta["format"] == FORMAT and "test.jsonl" not in json.dumps(shipped.meta)


DOC = (
    "Kueue admits workloads through a ClusterQueue. The ClusterQueue sets quotas per flavor. "
    "Volcano schedules batch jobs. Topology is described by a Topology object."
)


def test_each_part_gets_its_best_unit_before_a_second_for_any_part() -> None:
    passages = [Passage(chunk_id="d#0", doc_id="d", title="D", text=DOC, score=1.0, language="en")]
    units = split_units(DOC, "text", 0)
    typed = analyse("Which queue admits workloads, and which object describes topology?", {"Kueue"})
    queries = [part_query(p, {p.attribute: 1.0}, {p.attribute: 1.0}, "q") for p in typed.parts]
    cands: Candidates = candidates(typed, queries, "q", "en", Evidence([], units), passages)
    assert cands.matrix.shape == (len(typed.parts), len(units), len(FEATURES))
    # part 0 prefers unit 0 a little, part 1 prefers unit 3; overall unit 1 is second best
    probs = [np.array([0.9, 0.8, 0.1, 0.2]), np.array([0.1, 0.2, 0.1, 0.4])]
    chosen = [s.unit for s in choose_quotes(cands, probs)]
    assert chosen[:2] == [units[0], units[3]]


def test_a_follow_up_candidate_says_how_much_of_the_earlier_question_it_covers() -> None:
    passages = [Passage(chunk_id="d#0", doc_id="d", title="D", text=DOC, score=1.0, language="en")]
    units = split_units(DOC, "text", 0)
    typed = analyse("And what describes topology?", {"Kueue"})
    queries = [part_query(p, {"topology": 1.0}, {"topology": 1.0}, "q") for p in typed.parts]
    alone = candidates(typed, queries, "q", "en", Evidence([], units), passages)
    after = candidates(typed, queries, "q", "en", Evidence([], units), passages, previous={"clusterqueue": 1.0})
    followup, earlier = COLUMN["followup"], COLUMN["lex_prev"]
    assert alone.matrix[0, :, followup].tolist() == [0.0] * len(units)
    assert after.matrix[0, :, followup].tolist() == [1.0] * len(units)
    # "Kueue admits workloads through a ClusterQueue." and "The ClusterQueue sets quotas…" answer what came before
    assert after.matrix[0, :, earlier].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert alone.matrix[0, :, earlier].tolist() == [0.0] * len(units)


def test_a_code_line_whose_window_repeats_a_chosen_window_is_skipped() -> None:
    text = "Set these:\n\n```\nAlpha=1\nBravo=2\nCharlie=3\nDelta=4\nEcho=5\n```"
    passages = [Passage(chunk_id="d#0", doc_id="d", title="D", text=text, score=1.0, language="en")]
    units = split_units(text, "text", 0)
    typed = analyse("What is Delta set to?", set())
    queries = [part_query(p, {p.attribute: 1.0}, {p.attribute: 1.0}, "q") for p in typed.parts]
    cands = candidates(typed, queries, "q", "en", Evidence([], units), passages)
    lines = {u.text: i for i, u in enumerate(cands.units) if u.kind == "code_line"}
    probs = np.zeros(len(cands.units))
    # Alpha is best (its window shows Alpha, Bravo); Charlie's window would repeat Bravo; Echo's (Delta, Echo) does not
    for name, p in (("Alpha=1", 0.9), ("Charlie=3", 0.8), ("Echo=5", 0.7)):
        probs[lines[name]] = p
    chosen = [s.unit.text for s in choose_quotes(cands, [probs], limit=2)]
    assert chosen == ["Alpha=1", "Echo=5"]


TABLE = "| Component | Version |\n|---|---|\n" + "".join(
    f"| {name} | {v} |\n"
    for name, v in (("Linux", "24.04"), ("Slurm", "25.11"), ("CUDA", "12.8"), ("Kubernetes", "1.32"), ("Helm", "3.14"))
)


def test_a_heading_brings_the_rows_rated_best_and_leaves_the_others_to_be_chosen() -> None:
    passages = [
        Passage(chunk_id="d#0", doc_id="d", title="D", section="Requirements", text=TABLE, score=1.0, language="en")
    ]
    rows = split_units(TABLE, "text", 0)
    heading = heading_lead("Requirements", rows)
    assert heading is not None
    units = [heading, *rows]
    typed = analyse("Which Kubernetes version is required?", set())
    queries = [part_query(p, {p.attribute: 1.0}, {p.attribute: 1.0}, "q") for p in typed.parts]
    cands = candidates(typed, queries, "q", "en", Evidence([], units), passages)
    index = {u.text.split(";")[0].removeprefix("Component: "): i for i, u in enumerate(cands.units)}
    probs = np.zeros(len(cands.units))
    # the heading is best; of its five rows Kubernetes (the fourth) is rated best, then Linux, Helm, Slurm
    for name, p in (("Requirements", 0.9), ("Kubernetes", 0.8), ("Linux", 0.5), ("Helm", 0.4), ("Slurm", 0.3)):
        probs[index[name]] = p
    scores = unit_scores(cands, [probs])
    assert [r.text for r in brought_along(heading, cands.units, scores)] == [
        "Component: Linux; Version: 24.04", "Component: Kubernetes; Version: 1.32", "Component: Helm; Version: 3.14"
    ]  # fmt: skip
    # the rows the heading brings are not quoted again; a row it leaves out is still a candidate
    chosen = [s.unit.text for s in choose_quotes(cands, [probs], limit=2)]
    assert chosen == ["Requirements", "Component: Slurm; Version: 25.11"]
    _, attached = attach_followers([ScoredUnit(heading, 0.9)], cands.units, scores=scores)
    assert "Component: Kubernetes; Version: 1.32" in [r.text for r in attached[heading]]


def test_a_later_heading_leaves_an_earlier_quote_in_its_place_and_goes_when_it_has_nothing_left() -> None:
    rows = split_units(TABLE, "text", 0)
    heading = heading_lead("Requirements", rows)
    assert heading is not None
    units = [heading, *rows]
    kubernetes = next(r for r in rows if "Kubernetes" in r.text)
    ordered, attached = attach_followers([ScoredUnit(kubernetes, 0.8), ScoredUnit(heading, 0.7)], units)
    assert [s.unit for s in ordered] == [kubernetes, heading]
    assert attached[heading] and kubernetes not in attached[heading]
    # every row quoted before it: the heading would show nothing of its own
    ordered, attached = attach_followers([*(ScoredUnit(r, 0.8) for r in rows), ScoredUnit(heading, 0.7)], units)
    assert [s.unit for s in ordered] == rows and heading not in attached


def test_a_heading_that_states_a_version_is_a_value_candidate_and_can_be_quoted() -> None:
    prose = "Slurm's scrun can run containers as jobs with Docker.\n\nNo special permissions are required."
    section = "Integration with Rootless Docker (Docker Engine v20.10+)"
    passages = [Passage(chunk_id="d#0", doc_id="d", title="D", section=section, text=prose, score=1.0, language="en")]
    units = split_units(prose, "text", 0)
    heading = heading_lead(section, units)
    assert heading is not None
    question = "Which Docker Engine version does the rootless Docker integration need?"
    typed = analyse(question, set())
    queries = [part_query(p, {p.attribute: 1.0}, {p.attribute: 1.0}, "q") for p in typed.parts]
    cands = candidates(typed, queries, question, "en", Evidence([], [heading, *units]), passages)
    at = cands.units.index(heading)
    assert cands.matrix[0][at, FEATURES.index("p_has_value")] == 1.0
    assert "v20.10+" in [c.span.text for c in span_candidates(cands, 0, queries[0], question)]
    probs = np.full(len(cands.units), 0.2)
    probs[at] = 0.9
    # a heading that brings nothing along is quoted for the value it states
    assert [s.unit for s in choose_quotes(cands, [probs], limit=1)] == [heading]


LIST = "- The scheduler waits until every Pod of the group exists.\n- Then it places the Pods one by one."


def test_a_quote_that_would_only_repeat_what_another_passage_shows_is_skipped() -> None:
    # the same list stands in two passages (a chunk, and the passage of the lead-in it was appended to)
    first = f"The scheduler follows this process:\n\n{LIST}\n\nA group that does not fit stays pending."
    second = f"These steps apply to each group:\n\n{LIST}"
    passages = [
        Passage(chunk_id=f"d#{i}", doc_id="d", title="D", text=t, score=1.0, language="en")
        for i, t in enumerate((first, second))
    ]
    units = [*split_units(first, "text", 0), *split_units(second, "text", 1)]
    typed = analyse("How does the scheduler place a group?", set())
    queries = [part_query(p, {p.attribute: 1.0}, {p.attribute: 1.0}, "q") for p in typed.parts]
    cands = candidates(typed, queries, "q", "en", Evidence([], units), passages)
    at = {(u.passage, u.text): i for i, u in enumerate(cands.units)}
    probs = np.full(len(cands.units), 0.1)
    probs[at[(1, "These steps apply to each group:")]] = 0.9
    probs[at[(0, "The scheduler follows this process:")]] = 0.8  # would show the same two items again
    probs[at[(0, "The scheduler waits until every Pod of the group exists.")]] = 0.7  # shown already
    probs[at[(0, "A group that does not fit stays pending.")]] = 0.5
    chosen = [s.unit.text for s in choose_quotes(cands, [probs], limit=2)]
    assert chosen == ["These steps apply to each group:", "A group that does not fit stays pending."]


def _selector(answer_threshold: float) -> Selector:
    return Selector(
        list(FEATURES), Trees(0.0, 1.0, []), Logistic(**_logistic(0.5)), Logistic(**_logistic(answer_threshold)), {}
    )  # type: ignore[arg-type]


def _choice(answerable: float) -> Choice:
    return Choice([], 1.0, [ScoredUnit(split_units("x y z.")[0], 0.5)], answerable, [])


def test_settle_firm_refusals_stand_and_the_model_decides_the_rest() -> None:
    typed = analyse("What is the default timeout of Kueue?", {"Kueue"})
    firm = refusal.Decision("refused", firm=True)
    assert settle(firm, _choice(0.99), _selector(0.5), typed, "en", frozenset({"kueue"})) is firm
    rules_refused = refusal.Decision("weak support")
    assert settle(rules_refused, _choice(0.9), _selector(0.5), typed, "en", frozenset({"kueue"})).text is None
    low = settle(refusal.Decision(), _choice(0.1), _selector(0.5), typed, "en", frozenset({"kueue", "default"}))
    assert low.not_stated is not None and low.not_stated.focus == "Kueue"


def test_answerable_features_read_the_question_type_and_each_parts_best_unit() -> None:
    matrix = np.zeros((2, 3, len(FEATURES)))
    matrix[:, :, COLUMN["q_default"]] = 1.0  # the question asks for a default
    matrix[0, 1, COLUMN["p_keys"]] = 1.0  # part 0's best unit (1) holds its key words...
    matrix[0, 2, COLUMN["p_attr"]] = 1.0  # ...the attribute is only in a unit ranked lower
    matrix[1, 0, COLUMN["p_attr"]] = 1.0  # part 1's best unit (0) holds the attribute
    probs = [np.array([0.1, 0.8, 0.3]), np.array([0.6, 0.2, 0.1])]
    features = answerable_features(probs, matrix, ["default", "default"], 0.4, 0, 0.5, True)
    row = dict(zip(ANSWERABLE_FEATURES, features, strict=True))
    assert len(row) == len(ANSWERABLE_FEATURES)
    assert row["q_default"] == 1.0 and row["q_version"] == 0.0
    assert row["top_p_keys"] == 0.5 and row["top_p_attr"] == 0.5  # averaged over the parts' best units
    assert row["p_max"] == 0.8 and row["rules_answer"] == 1.0
    assert row["leans"] == 0.0  # a question that stands alone
    follow_up = answerable_features(probs, matrix, ["default", "default"], 0.4, 0, 0.5, True, leans=True)
    assert dict(zip(ANSWERABLE_FEATURES, follow_up, strict=True))["leans"] == 1.0
    # no units: the features are there, all zero
    empty = answerable_features([np.zeros(0)], np.zeros((1, 0, len(FEATURES))), ["default"], 0.0, 1, 0.0, False)
    assert len(empty) == len(ANSWERABLE_FEATURES) and not empty[9:].any()


def test_the_shipped_answerable_model_reads_the_features_the_app_computes() -> None:
    assert load().answerable.features == list(ANSWERABLE_FEATURES)


def test_a_quoted_sentence_goes_on_with_the_next_one_of_its_paragraph() -> None:
    text = "Kueue manages quotas. It does not replace kube-scheduler.\n\nPods are then bound by it. Last one."
    units = split_units(text, "text", 0)
    first, second, third, last = units
    ordered, attached = attach_followers([ScoredUnit(first, 0.9), ScoredUnit(third, 0.5)], units)
    assert attached[first] == [second]  # the next sentence of the same paragraph
    assert attached[third] == [last]
    # never across paragraphs, and never one already given its own place
    ordered, attached = attach_followers([ScoredUnit(second, 0.9), ScoredUnit(third, 0.5)], units)
    assert second not in attached and attached[third] == [last]
    ordered, attached = attach_followers([ScoredUnit(second, 0.9), ScoredUnit(first, 0.5)], units)
    assert first not in attached.get(second, []) and second not in attached.get(first, [])
    assert [s.unit for s in ordered] == [second, first]
    # a sentence quoted after the one that brought it is not repeated on its own line
    ordered, _ = attach_followers([ScoredUnit(first, 0.9), ScoredUnit(second, 0.5)], units)
    assert [s.unit for s in ordered] == [first]
    # nor one quoted before these (a value's own quote)
    _, attached = attach_followers([ScoredUnit(first, 0.9)], units, quoted={second})
    assert first not in attached
    # nor the same words standing in another passage when they are a quote of their own
    elsewhere = split_units("It does not replace kube-scheduler.", "text", 1)[0]
    ordered, attached = attach_followers([ScoredUnit(first, 0.9), ScoredUnit(elsewhere, 0.5)], [*units, elsewhere])
    assert first not in attached and [s.unit for s in ordered] == [first, elsewhere]


def test_a_next_sentence_that_announces_comes_with_what_it_announces_or_not_at_all() -> None:
    text = "Shards split a GPU. Add the parameter to slurm.conf:\n\n```\nGres=gpu:2,shard:64\n```"
    units = split_units(text, "text", 0)
    first, announcing = units[0], units[1]
    code = next(u for u in units if u.kind == "code")
    _, attached = attach_followers([ScoredUnit(first, 0.9)], units)
    assert attached[first] == [announcing, code]
    # its code is shown already (an answer shows one code block): the colon would end the quote, so it stays out
    other = split_units("```\nsrun hostname\n```", "text", 1)[0]
    _, attached = attach_followers([ScoredUnit(other, 0.9), ScoredUnit(first, 0.8)], [*units, other])
    assert first not in attached
    # what it announces is not in the passage (cut at a chunk boundary): nor is it
    cut = split_units("Shards split a GPU. Add the parameter to slurm.conf:", "text", 0)
    _, attached = attach_followers([ScoredUnit(cut[0], 0.9)], cut)
    assert cut[0] not in attached


def test_a_lead_in_followed_by_a_paragraph_brings_its_first_sentence() -> None:
    units = split_units("There are two factors:\n\nAge: the time a job waited. Size: its nodes.", "text", 0)
    lead, age, _ = units
    _, attached = attach_followers([ScoredUnit(lead, 0.9)], units)
    assert attached[lead] == [age]
    # a paragraph that only announces again, with nothing under it, is not brought
    chained = split_units("You can also run this instead:\n\nSince v1.21, you can use:", "text", 1)
    _, attached = attach_followers([ScoredUnit(chained[0], 0.9)], chained)
    assert chained[0] not in attached


def test_a_lead_in_whose_block_another_quote_shows_is_not_quoted_alone() -> None:
    units = split_units("Fair share sets two things:\n\n- Scheduling priority\n- Reclaim eligibility", "text", 0)
    lead, first, second = units
    other = split_units("Queues form a hierarchy.", "text", 1)[0]
    every = [*units, other]
    ordered, attached = attach_followers(
        [ScoredUnit(u, 0.9 - 0.1 * n) for n, u in enumerate((other, first, second, lead))], every
    )
    assert [s.unit for s in ordered] == [other, first, second] and lead not in attached
    # the first quote keeps its place; so does one that states a number of its own
    ordered, _ = attach_followers([ScoredUnit(lead, 0.9), ScoredUnit(first, 0.8)], units)
    assert ordered[0].unit == lead
    numbered = split_units("Fair share sets 2 things:\n\n- Scheduling priority\n- Reclaim eligibility", "text", 2)
    ordered, _ = attach_followers(
        [ScoredUnit(other, 0.9), *(ScoredUnit(u, 0.5) for u in numbered[1:]), ScoredUnit(numbered[0], 0.4)],
        [*numbered, other],
    )
    assert numbered[0] in [s.unit for s in ordered]
    # and one that labels a code quote of its block: it is shown once, as that label
    code_units = split_units("Deploy the job to start training:\n\n```\nkubectl apply -f job.yaml\n```", "text", 3)
    deploy, code = code_units[0], next(u for u in code_units if u.kind == "code")
    ordered, _ = attach_followers(
        [ScoredUnit(other, 0.9), ScoredUnit(code, 0.8), ScoredUnit(deploy, 0.7)], [*code_units, other]
    )
    assert deploy in [s.unit for s in ordered]


def test_a_lead_in_does_not_show_again_the_code_a_quoted_line_shows() -> None:
    text = "Apply the following command to create a job with two workers:\n\n```\nkubectl apply -f job.yaml\n```"
    units = split_units(text, "text", 0)
    lead = next(u for u in units if u.kind == "sentence")
    line = next(u for u in units if u.kind == "code_line")
    assert [u.kind for u in brought_along(lead, units)] == ["code"]
    # the command's line is a value's quote already: the lead-in shows only its own words
    _, attached = attach_followers([ScoredUnit(lead, 0.9)], units, quoted={line})
    assert lead not in attached
    # with no line quoted it brings its code block
    _, attached = attach_followers([ScoredUnit(lead, 0.9)], units)
    assert [u.kind for u in attached[lead]] == ["code"]


def test_a_row_another_quote_shows_in_its_own_words_is_not_shown_again() -> None:
    announced = "Two cases can happen:\n\n- A node becomes NotReady.\n- Kueue looks for a replacement."
    units = split_units(announced, "text", 0)
    lead = units[0]
    elsewhere = split_units("A node becomes NotReady.", "text", 1)[0]
    _, attached = attach_followers([ScoredUnit(elsewhere, 0.9), ScoredUnit(lead, 0.8)], [*units, elsewhere])
    assert [u.text for u in attached[lead]] == ["Kueue looks for a replacement."]
    # and the other way round: shown as a row first, the same words are not a quote of their own after it
    ordered, attached = attach_followers([ScoredUnit(lead, 0.9), ScoredUnit(elsewhere, 0.8)], [*units, elsewhere])
    assert [u.text for u in attached[lead]] == ["A node becomes NotReady.", "Kueue looks for a replacement."]
    assert [s.unit for s in ordered] == [lead]


def test_related_lines_do_not_repeat_a_sentence_two_passages_hold() -> None:
    same = "Slurm allows a reservation to be repeated on one of several predefined intervals."
    texts = [same, same, "Reservations may include all nodes of a partition.", "Licenses can be reserved too."]
    passages = [
        Passage(chunk_id=f"d{n}#0", doc_id=f"d{n}", title="T", url="https://example.test", text=t)
        for n, t in enumerate(texts)
    ]
    units = [split_units(t, "text", n)[0] for n, t in enumerate(texts)]
    scored = [ScoredUnit(u, 0.9 - 0.1 * n) for n, u in enumerate(units)]
    draft = related_lines("en", passages, Evidence(scored, units))
    assert [q.text for q in draft.quotes] == [same, texts[2], texts[3]]


def test_a_related_line_never_announces_what_it_does_not_show() -> None:
    text = "Fair share sets queue priority and reclaim eligibility:\n\n- Scheduling priority\n- Reclaim eligibility"
    texts = [text, "Queues are the core resource primitive. They form a hierarchy."]
    passages = [
        Passage(chunk_id=f"d{n}#0", doc_id=f"d{n}", title="T", url="https://example.test", text=t)
        for n, t in enumerate(texts)
    ]
    units = [u for n, t in enumerate(texts) for u in split_units(t, "text", n)]
    lead_in = units[0]
    scored = [ScoredUnit(lead_in, 0.9), *(ScoredUnit(u, 0.5) for u in units[1:])]
    draft = related_lines("en", passages, Evidence(scored, units))
    # the lead-in's passage gives its best line that stands alone, the other passage its own
    assert lead_in.text not in [q.text for q in draft.quotes]
    assert [q.text for q in draft.quotes] == ["Scheduling priority", "Queues are the core resource primitive."]


def test_a_sentence_a_code_quote_shows_as_its_label_is_not_quoted_again() -> None:
    def quote(text: str, kind: str = "sentence", intro: str = "", chunk: str = "d#0") -> Quote:
        return Quote(n=1, doc_id="d", chunk_id=chunk, kind=kind, text=text, intro=intro)

    lead_in = quote("Install the slurm-operator and its CRDs:")
    other = quote("The chart is signed.")
    code = quote("helm install slurm-operator", kind="code_line", intro="Install the slurm-operator and its CRDs:")
    # the code quote takes the announcing sentence's earlier place; the sentence is shown once, as its label
    assert [q.text for q in _without_intros([lead_in, other, code])] == [code.text, other.text]
    assert [q.text for q in _without_intros([code, other, lead_in])] == [code.text, other.text]
    # the same words in another chunk are another passage's quote
    elsewhere = lead_in.model_copy(update={"chunk_id": "e#0"})
    assert len(_without_intros([elsewhere, code])) == 2
    # two windows of one block: the sentence labels the first
    second = code.model_copy(update={"text": "helm install slurm-cluster"})
    assert [q.intro for q in _without_intros([code, other, second])] == [code.intro, "", ""]


def test_a_code_window_gives_way_to_the_whole_block_another_quote_shows() -> None:
    block = "```bash\nkubectl delete crd a.slinky\nkubectl delete crd b.slinky\nkubectl delete crd c.slinky\n```"
    window = Quote(
        n=1,
        doc_id="d",
        chunk_id="d#0",
        kind="code_line",
        text="kubectl delete crd a.slinky\nkubectl delete crd b.slinky",
    )
    other = Quote(n=2, doc_id="d", chunk_id="d#1", text="Slinky charts are signed.")
    lead_in = Quote(
        n=1, doc_id="d", chunk_id="d#0", text="If the CRDs were not installed via the chart:", followers=[block],
        follower_kinds=["code"],
    )  # fmt: skip
    # the block is shown once, in the window's earlier place
    assert _without_shown_windows([window, other, lead_in]) == [lead_in, other]
    # a block of another chunk, or one that does not hold the window's lines, leaves the window
    elsewhere = lead_in.model_copy(update={"chunk_id": "d#2"})
    assert _without_shown_windows([window, elsewhere]) == [window, elsewhere]
    partial = lead_in.model_copy(update={"followers": ["```\nkubectl delete crd a.slinky\n```"]})
    assert _without_shown_windows([window, partial]) == [window, partial]
