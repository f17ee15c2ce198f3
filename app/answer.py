"""The default answerer: extractive, grounded, offline (pure given scored units).

It picks the best evidence units for the question, quotes them verbatim with inline ``[n]`` markers,
and — for platform-selection questions — opens with a one-line verdict that the quoted evidence itself
states (a recommendation table row or a sentence that recommends a platform). When the evidence is
too weak it refuses plainly instead of dressing irrelevant passages up as an answer. Quotes keep the
document's structure: a lead-in is shown with the list, table rows or command it announces, nested under it.

Deliberately left out: paraphrasing or translating quotes (they stay verbatim in their own language;
only the framing follows the question's language).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.evidence import Unit, code_after, followers, is_table_separator
from app.models import Citation, Passage
from app.text import content_tokens

PLATFORMS = {"Slurm": re.compile(r"slurm", re.I), "Kubernetes": re.compile(r"kubernetes|k8s", re.I)}

_SELECTION = re.compile(
    r"which (platform|one|scheduler|should|is better|to (use|choose|pick))|should (we|i) (use|choose|pick|go|adopt)"
    r"|recommend|better (choice|fit|suited|option)|best (choice|fit|option|platform)|go with|what (platform|should)"
    r"|どちら(?!も)|どっち(?!も)|選ぶ|選択|べき|おすすめ|お勧め|推奨|向いて|適して|適切|採用すべき|いいですか|良いですか",
    re.I,
)
_BOTH_OR = re.compile(r"\bor\b|\bvs\.?\b|versus|か[、,]?|と.*(比較|どちら(?!も))", re.I)
_PLATFORM_HEADER = re.compile(r"プラットフォーム|platform|推奨|recommend|choice|選択", re.I)
_REC_AFTER = re.compile(
    r"(slurm|kubernetes|k8s)[^。.;]{0,16}?(が本命|が近道|が最も|を検討|を推奨|がおすすめ|が適|が向|が良い|がよい|による|"
    r" is (the )?(better|best|recommended|preferred|ideal|right|natural|go-to)|fits best|excels)",
    re.I,
)
_REC_BEFORE = re.compile(
    r"(なら|ならば|場合は|場合には|には|のであれば)\s*(slurm|kubernetes|k8s)|"
    r"(choose|use|recommend|prefer|go with|pick|opt for|consider)\s+(slurm|kubernetes|k8s)",
    re.I,
)

# "How do I …?" wants the command: such questions get the example that follows a quoted sentence.
_HOWTO = re.compile(
    r"how (do|can|should|would) (i|we|you|one)|how to|what (command|option|flag|setting)s?|example of"
    r"|どうやって|どうすれば|どのように(して)?(使|設定|実行|指定|起動|有効)|方法|手順|やり方|コマンド|書き方",
    re.I,
)

MAX_UNITS = 5
PER_PASSAGE = 2
HEADING_ROWS = 3  # rows or items a section heading brings along (the best-matching ones)
UNIT_FLOOR = 0.65  # units scoring under this share of the best are not evidence enough
REDUNDANT = 0.7  # word overlap at which a unit repeats one already chosen
# A single verdict needs the evidence for one platform to outweigh the other's by this factor.
VERDICT_MARGIN = 1.5


@dataclass(frozen=True)
class ScoredUnit:
    unit: Unit
    score: float


def is_selection_question(question: str) -> bool:
    """Does the user ask which platform to choose (rather than a factual question)?"""
    if _SELECTION.search(question):
        return True
    both = all(p.search(question) for p in PLATFORMS.values())
    return both and bool(_BOTH_OR.search(question))


def platform_stated(unit: Unit) -> str | None:
    """The platform this unit recommends, if it states a recommendation at all."""
    if unit.kind == "row":
        for cell in unit.text.split("; "):
            header, _, value = cell.partition(": ")
            if _PLATFORM_HEADER.search(header):
                named = [name for name, pat in PLATFORMS.items() if pat.search(value)]
                return named[0] if len(named) == 1 else None
        return None
    text = unit.text
    hits = {name for name, pat in PLATFORMS.items() if pat.search(text)}
    if not hits:
        return None
    for rx in (_REC_AFTER, _REC_BEFORE):
        found = {_canonical(m) for m in rx.finditer(text)}
        found.discard(None)
        if len(found) == 1:
            return found.pop()
    return None


def _canonical(match: re.Match[str]) -> str | None:
    span = match.group(0).lower()
    has_slurm, has_k8s = "slurm" in span, ("kubernetes" in span or "k8s" in span)
    if has_slurm == has_k8s:
        return None
    return "Slurm" if has_slurm else "Kubernetes"


def select_units(
    scored: Sequence[ScoredUnit], limit: int | None = None, units: Sequence[Unit] = ()
) -> list[ScoredUnit]:
    """Best units, at most PER_PASSAGE per passage, none far below the best, none that mostly repeats
    one already chosen (the same sentence in two documents, sibling table rows): each line adds news.

    A chosen lead-in will show what it announces (``followers`` among ``units``): those units are
    not chosen again and do not use up the slots of the answer."""
    ranked = sorted(scored, key=lambda s: -s.score)
    if not ranked:
        return []
    prose = [s.score for s in ranked if s.unit.kind != "code"]
    floor = (prose[0] if prose else ranked[0].score) * UNIT_FLOOR  # a long code block must not raise the bar
    limit = MAX_UNITS if limit is None else limit
    chosen: list[ScoredUnit] = []
    kept: list[set[str]] = []
    per_passage: dict[int, int] = {}
    covered: set[Unit] = set()
    for s in ranked:
        if s.score < floor or len(chosen) >= limit:
            break
        if s.unit in covered or per_passage.get(s.unit.passage, 0) >= PER_PASSAGE:
            continue
        if s.unit.kind == "code" and any(c.unit.kind == "code" for c in chosen):
            continue  # one example is enough; more would crowd out the explanation
        words = set(content_tokens(s.unit.text))
        if any(_overlap(words, other) >= REDUNDANT for other in kept):
            continue
        kept.append(words)
        per_passage[s.unit.passage] = per_passage.get(s.unit.passage, 0) + 1
        chosen.append(s)
        covered.update(followers(s.unit, units))
    return chosen


def _overlap(a: set[str], b: set[str]) -> float:
    """Share of the smaller unit's words that the other one also has (1.0 for an exact repeat)."""
    if not a or not b:
        return float(a == b)
    return len(a & b) / min(len(a), len(b))


@dataclass
class Draft:
    lines: list[str]
    citations: list[Citation]
    verdict: str | None


def _number(
    units: Sequence[ScoredUnit], passages: Sequence[Passage], attached: dict[Unit, list[Unit]]
) -> tuple[dict[int, int], list[Citation]]:
    """Citation numbers in order of first use; each citation quotes the units used from its passage."""
    numbers: dict[int, int] = {}
    quotes: dict[int, list[str]] = {}
    for s in units:
        p = s.unit.passage
        if p not in numbers:
            numbers[p] = len(numbers) + 1
            quotes[p] = []
        for u in [s.unit, *attached.get(s.unit, [])]:
            if u.quote:
                add_quote(quotes[p], u.quote)
    citations = [
        Citation(
            n=n,
            doc_id=passages[p].doc_id,
            chunk_id=passages[p].chunk_id,
            title=passages[p].title,
            url=passages[p].url,
            section=passages[p].section,
            quote="\n".join(quotes[p]),
            verbatim=passages[p].verbatim,
        )
        for p, n in numbers.items()
    ]
    return numbers, citations


def add_quote(quotes: list[str], quote: str) -> None:
    """Add ``quote`` to a citation's quotes, once. A table row (quoted with its header and separator)
    joins an earlier row of the same table, so the header is shown once above all its quoted rows."""
    lines = quote.split("\n")
    if len(lines) == 3 and is_table_separator(lines[1]):
        head = "\n".join(lines[:2]) + "\n"
        for i, existing in enumerate(quotes):
            if existing.startswith(head):
                if lines[2] not in existing.split("\n")[2:]:
                    quotes[i] = f"{existing}\n{lines[2]}"
                return
    if quote not in quotes:
        quotes.append(quote)


def decide_verdict(question: str, chosen: Sequence[ScoredUnit], pool: Sequence[ScoredUnit]) -> list[ScoredUnit]:
    """Units that state a recommendation relevant enough to ground a verdict, best first."""
    if not is_selection_question(question):
        return []
    best = max((s.score for s in chosen), default=0.0)
    voters = [s for s in sorted(pool, key=lambda s: -s.score) if platform_stated(s.unit) and s.score >= 0.8 * best]
    return voters[:4]


def is_howto_question(question: str) -> bool:
    return bool(_HOWTO.search(question))


def attach_followers(
    ordered: Sequence[ScoredUnit],
    units: Sequence[Unit],
    howto: bool = False,
    scores: Mapping[Unit, float] | None = None,
) -> tuple[list[ScoredUnit], dict[Unit, list[Unit]]]:
    """Give each lead-in unit the list, table or code it announces — and, for a how-to question, a
    unit the command example right after it; a unit shown that way is not repeated on its own line.

    A sentence that announces "three things:" gets all of them (up to MAX_FOLLOWERS). A section
    heading only stands for its table, so it gets the HEADING_ROWS rows that match the question best
    (by ``scores``), in document order. Nothing is shown twice, and an answer shows one code block."""
    attached: dict[Unit, list[Unit]] = {}
    used: set[Unit] = {s.unit for s in ordered if s.unit.kind == "code"}
    code_shown = bool(used)
    for s in ordered:
        rows = [f for f in followers(s.unit, units) if f not in used]
        if s.unit.kind == "heading" and len(rows) > HEADING_ROWS:
            best = sorted(rows, key=lambda r: -(scores or {}).get(r, 0.0))[:HEADING_ROWS]
            rows = [r for r in rows if r in best]
        if not rows and howto and not code_shown:
            code = code_after(s.unit, units)
            rows = [code] if code is not None and code not in used else []
        if code_shown:
            rows = [r for r in rows if r.kind != "code"]
        code_shown = code_shown or any(r.kind == "code" for r in rows)
        if rows:
            attached[s.unit] = rows
            used.update(rows)
    return [s for s in ordered if s.unit not in used or s.unit.kind == "code"], attached


def compose(
    question: str,
    language: str,
    passages: Sequence[Passage],
    scored: Sequence[ScoredUnit],
    units: Sequence[Unit] = (),
) -> Draft:
    """Build the answer lines from scored units (assumes the caller decided not to refuse).

    ``units`` are all units of the passages (code included): lead-ins among the chosen units bring
    along what they announce from them."""
    chosen = select_units(scored, units=units)
    voters = decide_verdict(question, chosen, scored)
    # Verdict units are quoted too, so every verdict is backed by a citation in the list.
    ordered = list(voters) + [s for s in chosen if s not in voters]
    scores = {s.unit: s.score for s in scored}
    ordered, attached = attach_followers(ordered[: MAX_UNITS + 1], units, is_howto_question(question), scores)
    numbers, citations = _number(ordered, passages, attached)
    ja = language == "ja"
    lines: list[str] = []
    verdict: str | None = None
    if voters:
        leader, conds = _tally(voters)
        if leader:
            backing = [v for v in voters if platform_stated(v.unit) == leader]
            cites = " ".join(dict.fromkeys(f"[{numbers[v.unit.passage]}]" for v in backing[:2]))
            verdict = leader
            lines.append(f"**{'結論' if ja else 'Verdict'}: {verdict}** {cites}")
        else:
            verdict = "it depends"
            parts = [f"{plat} — {_short(v.unit)} [{numbers[v.unit.passage]}]" for plat, v in conds]
            head = "結論: 条件によります" if ja else "Verdict: it depends"
            lines.append(f"**{head}** — " + " / ".join(parts))
    elif is_selection_question(question):
        lines.append(
            "**結論:** 資料はこの条件での単一の推奨を明示していません。根拠となる記述は次のとおりです。"
            if ja
            else "**Verdict:** the documents do not state a single recommendation for this case; here is the evidence."
        )
    lines.append("ナレッジベースの該当箇所:" if ja else "From the knowledge base:")
    for s in ordered:
        if s.unit.kind == "code":
            lines.append(f"- {'例' if ja else 'Example'} [{numbers[s.unit.passage]}]:")
            lines.extend(_nested([s.unit]))
            continue
        lines.append(f"- {s.unit.text} [{numbers[s.unit.passage]}]")
        lines.extend(_nested(attached.get(s.unit, [])))
    return Draft(lines, citations, verdict)


def _nested(units: Sequence[Unit]) -> list[str]:
    """Followers as nested Markdown under their lead-in (code stays a fenced block)."""
    out: list[str] = []
    for u in units:
        if u.kind == "code":
            out.extend("  " + line for line in u.text.splitlines())
        else:
            out.append(f"  - {u.text}")
    return out


def _tally(voters: Sequence[ScoredUnit]) -> tuple[str | None, list[tuple[str, ScoredUnit]]]:
    """The platform the quoted evidence clearly favours (votes weighted by relevance), or None with
    each platform's best supporting unit when the evidence is split."""
    weight: dict[str, float] = {}
    best: dict[str, ScoredUnit] = {}
    for v in voters:
        plat = platform_stated(v.unit)
        if plat is None:
            continue
        weight[plat] = weight.get(plat, 0.0) + v.score
        best.setdefault(plat, v)
    ranked = sorted(weight, key=lambda p: -weight[p])
    if len(ranked) == 1 or (ranked and weight[ranked[0]] >= VERDICT_MARGIN * weight[ranked[1]]):
        return ranked[0], []
    return None, [(plat, best[plat]) for plat in ranked]


def _short(unit: Unit, limit: int = 120) -> str:
    text = unit.text
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
