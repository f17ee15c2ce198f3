"""Features for the fitted situation reader and the asks-for-a-platform decision (pure but for the embedder).

The cues of ``core/facets.toml`` and the scope of each hit (``core.scope``) make candidates; the embedder's
similarity of each clause to each facet value's description adds what no cue names. This module turns
them into the fixed feature vectors the fitted models read (``app.advice.model``); fitting
(``app.advice.fit``) and answering compute them with the same functions.

    >>> names = facet_feature_names("workload")
    >>> names[:3]
    ['pos:training', 'neg:training', 'indifferent:training']

Deliberately left out: any decision (the models decide) and fitting.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from app.advice.headcount import head_count
from app.advice.verdict import choice_cues
from app.answer.question import cued_types, focus_entities
from core.scope import clause_negation, negation_mask
from core.situation import Candidate, candidates, clauses, facets
from core.text import content_tokens, normalize

# clause → {(facet, value): z-score of its similarity to the value's description among all values}
ValueScores = Callable[[str], Mapping[tuple[str, str], float]]

_PER_VALUE = ("pos", "neg", "indifferent", "hedged", "conditional", "tagged", "other_party", "last", "sim")
# a number of people stated ("two admins", 「専任で5人」) and its size, for the facets that count people
# (``counts_people`` in core/facets.toml): which sizes make a team small is fitted. Only there: other facets'
# models picked up chance correlations with it.
_HEADCOUNT = ("headcount", "headcount_log")


def facet_feature_names(facet: str) -> list[str]:
    defs = facets()
    values = list(defs.values[facet])
    counted = list(_HEADCOUNT) if facet in defs.counts_people else []
    return [f"{kind}:{v}" for v in values for kind in _PER_VALUE] + ["sim_gap", "cues_other_facets", *counted]


def _value_features(hits: Sequence[Candidate], value: str, last: Candidate | None) -> list[float]:
    mine = [c for c in hits if c.value == value]
    pos = [c for c in mine if not c.scope.negated and not c.scope.indifferent]
    neg = [c for c in mine if c.scope.negated]
    supports_last = last is not None and ((last.value == value) != last.scope.negated)
    return [
        float(len(pos)),
        float(len(neg)),
        float(sum(c.scope.indifferent for c in mine)),
        float(sum(c.scope.hedged for c in mine)),
        float(sum(c.scope.conditional for c in mine)),
        float(sum(c.scope.tag and c.scope.negated for c in mine)),
        float(sum(c.scope.other_party for c in mine)),
        float(supports_last),
    ]


def facet_features(text: str, scores: ValueScores | None = None) -> dict[str, np.ndarray]:
    """Per facet, its feature vector for ``text`` (in ``facet_feature_names`` order)."""
    defs = facets()
    found = candidates(text)
    people = head_count(text)
    counted = [float(people is not None), float(np.log1p(people or 0))]
    sims: dict[tuple[str, str], float] = {}
    if scores is not None:
        for clause in clauses(text):
            for key, z in scores(clause).items():
                sims[key] = max(sims.get(key, -9.0), z)
    out: dict[str, np.ndarray] = {}
    for facet in defs.order:
        values = list(defs.values[facet])
        hits = [c for c in found if c.facet == facet]
        last = hits[-1] if hits else None
        row: list[float] = []
        facet_sims = []
        for v in values:
            sim = max(sims.get((facet, v), 0.0), 0.0)
            facet_sims.append(sim)
            row += [*_value_features(hits, v, last), sim]
        row += [abs(facet_sims[0] - facet_sims[1]), float(len({c.facet for c in found} - {facet}))]
        row += counted if facet in defs.counts_people else []
        out[facet] = np.asarray(row, dtype=float)
    return out


def negated_feature_names() -> list[str]:
    """The negated-flag model's features: one model for every facet, so facet-agnostic but for the facet's
    own column."""
    cue = ["neg_other", "neg_same", "pos_same", "indifferent", "tagged_neg", "conditional_neg"]
    clause = [
        "negators",
        "lexical_negatives",
        "reached",
        "neg_grams",
        "clause_indifferent",
        "clause_tag",
        "clause_conditional",
    ]
    return cue + clause + [f"facet:{f}" for f in facets().order]


def negated_features(facet: str, value: str, hits: Sequence[Candidate], carrier: str) -> np.ndarray:
    """Was ``facet`` = ``value`` said through a negation ("no serving" → training only, "学習しかしません",
    "two systems is fine by us")? The cue hits of the facet with their scope, and the negation of the
    clause that carries the value (``carrier``: the cue's clause, else the clause the facet model reads it
    from), for the negated-flag model."""
    other = [c for c in hits if c.value != value]
    same = [c for c in hits if c.value == value]
    clause = clause_negation(normalize(carrier))
    grams = ngrams(carrier, marked=True)
    return np.asarray(
        [
            float(sum(c.scope.negated for c in other)),
            float(sum(c.scope.negated for c in same)),
            float(sum(not c.scope.negated and not c.scope.indifferent for c in same)),
            float(sum(c.scope.indifferent for c in hits)),
            float(sum(c.scope.tag and c.scope.negated for c in hits)),
            float(sum(c.scope.conditional and c.scope.negated for c in hits)),
            float(np.log1p(clause.negators)),
            float(clause.lexical),
            clause.reached,
            float(np.log1p(sum(g.startswith(NEGATED) for g in grams))),
            float(clause.indifferent),
            float(clause.tag),
            float(clause.conditional),
            *(float(f == facet) for f in facets().order),
        ],
        dtype=float,
    )


_WORD = re.compile(r"[a-z][a-z0-9'+/-]*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff々ー]+")


NEGATED = "¬"  # prefix of an n-gram a negation reaches


def ngrams(text: str, marked: bool = False) -> set[str]:
    """The words and word pairs of Latin text and the character pairs of Japanese runs: the vocabulary
    features (which words say a facet is learnt from the labelled texts). ``marked``: an n-gram a negation
    reaches (``core.scope.negation_mask``, clause by clause) is a different one, prefixed with ``NEGATED``
    (the negated-flag model counts them; as vocabulary features they cost the facet models more than they
    gave on dev).

    >>> sorted(ngrams("Own racks, no serving. 推論はしない"))
    ['no', 'no serving', 'own', 'own racks', 'racks', 'racks no', 'serving', 'しな', 'ない', 'はし', '推論', '論は']
    >>> sorted(g for g in ngrams("Own racks, no serving. 推論はしない", marked=True) if g.startswith(NEGATED))
    ['¬serving', '¬しな', '¬はし', '¬推論', '¬論は']
    """
    grams: set[str] = set()
    for raw in clauses(text):
        norm = normalize(raw)
        mask = negation_mask(norm) if marked else [False] * len(norm)
        words = list(_WORD.finditer(norm))
        marks = [NEGATED if mask[m.start()] else "" for m in words]
        grams |= {mark + m.group() for mark, m in zip(marks, words, strict=True)}
        grams |= {
            f"{mark}{a.group()} {b.group()}" for mark, (a, b) in zip(marks, itertools.pairwise(words), strict=False)
        }
        for run in _CJK.finditer(norm):
            pairs = [(run.start() + i, run.group()[i : i + 2]) for i in range(len(run.group()) - 1)]
            grams |= {(NEGATED if mask[i] else "") + pair for i, pair in pairs} or {run.group()}
    return grams


def bag(text: str, vocabulary: Mapping[str, int]) -> np.ndarray:
    """A binary vector over ``vocabulary`` (n-gram → column)."""
    x = np.zeros(len(vocabulary))
    for gram in ngrams(text):
        column = vocabulary.get(gram)
        if column is not None:
            x[column] = 1.0
    return x


SELECTION_FEATURES = [
    "facets_cued",
    "choice_wording",
    "advice_wording",
    "both_platforms_or",
    "how_much",
    "other_sides",
    "platform_word",
    "value_type",
    "howto_type",
    "earlier_selection",
    "followup",
    "sim_choice",
    "tokens",
    "factual_question_word",
    "identifier",
    "facets_read",
    "names_source",
    "first_person",
    "asks_reason",
    "statement_only",
]
# A document named as the one whose words are asked for ("what does the article's table recommend…",
# "記事のまとめでは…"): a question about what a source says, even when it describes a situation.
_SOURCE = re.compile(
    r"\b(article|post|blog|column|table|summary|conclusion|paper|documentation|docs|readme|guide|source|writeup|"
    r"write-up|author|according to)\b|記事|表(に|で|の|では|だと)|まとめ|結論|ブログ|コラム|出典|ドキュメント|資料|によると|によれば|筆者|著者",
    re.I,
)
# A question word asking for a fact or a procedure ("when does…", "how do I…", "何がある", "どうやって",
# "にはどうする"), not for a choice ("what should we…", "what would you suggest").
_FACT_WORD = re.compile(
    r"\b(when|where|who|why|how (do|does|did|can|to|many|much|often|long)|what (is|are|was|does|do|happens|apiversion"
    r"|version|command|flag|option|field|key|value|year)|which (flag|option|command|field|key|file|version|annotation"
    r"|label|namespace|crd|feature gate|daemon|plugin|environment variable))\b"
    r"|何(が|を|で|回|台|人|年|秒)|いつ|なぜ|何故|理由|どうやって|どう(書|設定|確認|指定|やる|やれ)|には(どう|何)|コマンド|オプション|フラグ",
    re.I,
)
# The asker's own situation ("we", "our team", "うち", "弊社"): a request about us, rather than about what a
# source says of someone else's case ("which platform does the article give a cloud startup?").
_FIRST_PERSON = re.compile(
    r"\b(we|we're|we've|we'll|we'd|our|ours|us|i(?![/.])|i'm|i've|my|me)\b|私|僕|俺|うち|弊社|我々|われわれ|自社|当社",
    re.I,
)
# A reason or a source asked for ("why is Kubernetes listed…", "on what grounds", 「根拠は？」): a question about
# an argument, not for a choice.
_REASON = re.compile(
    r"\b(why|reasons?|grounds|rationale|justif(y|ies|ied|ication)|cites?|cited)\b|理由|根拠|なぜ|何故|どうして|出典|引用",
    re.I,
)
# Anything asked or requested at all: a question mark, a question word (どう as well as how), a request ("Looking
# for a recommendation."). A text without one states a situation ("FYI, we're on-prem") and asks for nothing yet.
_REQUEST = re.compile(
    r"[?？]|\b(which|what|how|should|recommend\w*|suggest\w*|advi[cs]e\w*|pick|choose|tell me|help|thoughts|opinion)\b"
    r"|教えて|ください|下さい|どれ|どっち|どちら|どう|何|べき|おすすめ|お勧め|ですか|ますか|でしょうか|かな|か[。.]|か$|選",
    re.I,
)
_VALUE = {"api_version", "flag", "key", "default", "version", "date", "command", "quantity", "name"}
# The turn's own embedding vector follows the named features: a platform question stated in words no cue or
# facet model reads ("the 24 nodes we bought are what we'll have for three years. Slurm or K8s?") is still near
# the labelled ones. Its columns are named with the "sim" prefix, so a model read without its embedder sets
# them to their training mean (``Linear.neutral``).
TEXT_VECTOR = "sim_text"


def selection_feature_names(dimensions: int = 0) -> list[str]:
    """The asks-for-a-platform model's features: the named ones, then ``dimensions`` columns of the turn's
    embedding vector."""
    return [*SELECTION_FEATURES, *(f"{TEXT_VECTOR}:{i}" for i in range(dimensions))]


def selection_features(
    question: str, earlier_selection: bool, followup: bool, sim_choice: float = 0.0, facets_read: int = 0
) -> np.ndarray:
    """The asks-for-a-platform features of one turn (``SELECTION_FEATURES`` order)."""
    cues = choice_cues(question)
    types = set(cued_types(question))
    situated = {c.facet for c in candidates(question)}
    return np.asarray(
        [
            float(len(situated)),
            float(cues["choice"]),
            float(cues["advice"]),
            float(cues["both_or"]),
            float(cues["how_much"]),
            float(cues["other_sides"]),
            float(cues["platform_word"]),
            float(bool(types & _VALUE)),
            float("procedure" in types),
            float(earlier_selection),
            float(followup),
            sim_choice,
            float(np.log1p(len(content_tokens(question)))),
            float(bool(_FACT_WORD.search(question))),
            float(bool(focus_entities(question, ()))),
            float(facets_read),
            float(bool(_SOURCE.search(question))),
            float(bool(_FIRST_PERSON.search(question))),
            float(bool(_REASON.search(question))),
            # a first turn that asks nothing states a situation; a follow-up that asks nothing adds a fact to the
            # conversation's question, so the two are apart
            float(not followup and not _REQUEST.search(question.strip())),
        ],
        dtype=float,
    )


# What a platform choice sounds like, for the embedder's similarity (one line per language).
CHOICE_PROTOTYPES = (
    "Given our situation, which platform should we use for LLM training: Slurm, Kubernetes, or both?",
    "私たちの状況では、LLMの学習基盤にSlurmとKubernetesのどちらを選ぶべきですか？",
)
FACT_PROTOTYPES = (
    "What is the default value of this setting, and which command or flag configures it?",
    "この設定のデフォルト値と、設定するコマンドやフラグは何ですか？",
)
