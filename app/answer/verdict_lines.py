"""A verdict as answer lines (pure): one verdict line with what was read, then each vote with its citation.

    **Verdict: Slurm** — read as: on-prem · training only
    - on-prem → Slurm: LLM training on-premises or on a dedicated HPC cluster [1]
    - What would change it: if you also served the trained models → hybrid — train on Slurm, serve on …

The verdict appears once; its reasons are the stated facets' votes, each citing the rule it votes
through, in the question's language (the rules' own words stay verbatim). A ``depends`` names the facet
that decides it.

Deliberately left out: deciding (``app.advice``) and the web UI's rendering of the same data
(``app.web.render``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from app.advice.verdict import platform_label
from app.models import Passage, Verdict
from core.contract import Rule, StoredChunk
from core.units import clean_markup

Source = Passage | StoredChunk


def cite_votes(
    verdict: Verdict, source: Callable[[str], Source | None], cite: Callable[[Source, Sequence[str]], int]
) -> Verdict:
    """Number the quote of every rule a facet votes through (found by its chunk id)."""
    votes = []
    for vote in verdict.votes:
        found = source(vote.rule.chunk_id)
        votes.append(vote.model_copy(update={"n": cite(found, [vote.rule.quote]) if found is not None else None}))
    return verdict.model_copy(update={"votes": votes})


def verdict_lines(verdict: Verdict, language: str) -> list[str]:
    """The verdict line, its votes, and what would change it."""
    ja = language == "ja"
    head = f"**{'判定' if ja else 'Verdict'}: {platform_label(verdict.value, language)}**"
    if verdict.read_as:
        head += f" — {'読み取った状況' if ja else 'read as'}: {' · '.join(verdict.read_as)}"
    if verdict.value == "depends" and verdict.deciding_label:
        head += (
            f" （{'決め手' if ja else 'deciding'}: {verdict.deciding_label}）"
            if ja
            else f" (deciding: {verdict.deciding_label})"
        )
    lines = [head]
    for vote in verdict.votes:
        marker = f" [{vote.n}]" if vote.n else ""
        lines.append(f"- {vote.label} → {platform_label(vote.platform, language)}: {rule_words(vote.rule)}{marker}")
    if verdict.changes:
        label = "結論が変わる条件" if ja else "What would change it"
        lines.append(f"- {label}: " + "; ".join(verdict.changes))
    return lines


def rule_words(rule: Rule) -> str:
    """What a rule says, in the document's words: a table row's situation and reason, a statement whole
    ("…, Slurm is the front-runner"), with the heading it sits under when that heading names a criterion."""
    if rule.source == "table":
        text = f"{rule.condition} — {rule.reason}" if rule.reason else rule.condition
    else:
        text = clean_markup(rule.quote.strip().lstrip("-*+ ").strip()) or rule.condition
    heading = rule.section.split(" > ")[-1]
    if rule.source == "statement" and heading and heading not in text:
        text = f"{text} ({heading})"
    return _short(text)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
