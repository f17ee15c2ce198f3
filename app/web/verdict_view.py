"""A platform verdict as the UI shows it (pure): one verdict line, its reasons, and what would change it.

Everything is built from the ``Verdict`` data (``app.models``), never read back from answer Markdown:

- the verdict line: one badge, "Read as: on-prem · training only" from ``read_as`` (the situation's human
  labels) and, for "it depends", the deciding facet;
- one reason line per rule: the situation's label (or labels, when several vote through that rule) → the
  platform: the rule's own words [n];
- collapsed under them, what would change it (each ``Change``'s condition in the answer's language → the
  platform's human name) and the rules the verdict rests on, as a table.

Internal values (``training_and_serving``, ``kubernetes``) never reach the page: facets and platforms are
named by their labels (``core/facets.toml``, ``app.web.i18n``). Each part has an HTML form (the chat, the
questionnaire) and a Markdown form (copy and export) that say the same things in the same order.

Deliberately left out: deciding anything (``app.advice``), the rest of an answer (``app.web.answer_view``)
and the questionnaire around a verdict (``app.web.panels``).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.answer.verdict_lines import rule_words
from app.models import Citation, Rule, Verdict, Vote
from app.web.doc_html import TABLE_WRAP
from app.web.i18n import capital, t, value_name, verdict_label
from app.web.render import cited_html, esc


def badge(value: str | None, lang: str) -> str:
    """The verdict's badge: the platform's human name (``None``: no platform yet)."""
    return f'<span class="verdict verdict-{esc(value or "none")}">{esc(verdict_label(value, lang))}</span>'


def read_as_html(labels: Sequence[str]) -> str:
    return " · ".join(f'<span class="facet">{esc(label)}</span>' for label in labels)


def verdict_line(
    value: str | None, lang: str, read_as: str, deciding_label: str = "", title_key: str = "verdict"
) -> str:
    """``Verdict: [Slurm]`` (``— Depends on: workload``) over ``Read as: on-prem · training only``, one block.

    ``read_as`` is HTML: plain labels (the chat) or links back to the form (the questionnaire)."""
    head = f'<span class="vl-label">{esc(t(title_key, lang))}:</span> {badge(value, lang)}'
    if value == "depends" and deciding_label:
        head += f' — <span class="deciding">{esc(t("depends_on", lang))}: <b>{esc(deciding_label)}</b></span>'
    if read_as:
        head += f'<span class="read-as"><span class="ra-label">{esc(t("read_as", lang))}:</span> {read_as}</span>'
    return f'<div class="verdict-line">{head}</div>'


def vote_text(vote: Vote, lang: str, labels: Sequence[str] = ()) -> str:
    """One reason, as plain text with its marker: ``on-prem → Slurm: LLM training on-premises … [1]``.

    ``labels`` names the situations when several go through this one rule (``reasons``)."""
    label = " · ".join(labels) or vote.label or value_name(vote.facet, vote.value, lang)
    marker = f" [{vote.n}]" if vote.n else ""
    return f"{label} → {verdict_label(vote.platform, lang)}: {rule_words(vote.rule)}{marker}"


def reasons(votes: Sequence[Vote], lang: str) -> list[str]:
    """One reason line per rule: situations that vote through the same rule for the same platform share its
    line ("training and inference · one platform → Kubernetes: … [1]"), never the same line twice."""
    merged: dict[tuple[str, str, int | None], tuple[Vote, list[str]]] = {}
    for vote in votes:
        label = vote.label or value_name(vote.facet, vote.value, lang)
        _, labels = merged.setdefault((vote.rule.id, vote.platform, vote.n), (vote, []))
        if label not in labels:
            labels.append(label)
    return [vote_text(vote, lang, labels) for vote, labels in merged.values()]


def votes_html(votes: Sequence[Vote], citations: Sequence[Citation], key: str, lang: str) -> str:
    if not votes:
        return ""
    items = "".join(f"<li>{cited_html(line, citations, key)}</li>" for line in reasons(votes, lang))
    return f'<ul class="votes">{items}</ul>'


def change_lines(verdict: Verdict, lang: str) -> list[str]:
    """What would change the verdict: "If you ran in the cloud → It depends" (human words only)."""
    if verdict.change_detail:
        return [f"{capital(c.condition)} → {verdict_label(c.verdict, lang)}" for c in verdict.change_detail]
    return [capital(c) for c in verdict.changes]


def _rules(votes: Sequence[Vote]) -> list[tuple[Rule, int | None]]:
    """The rules the votes go through, each once, in order."""
    seen: dict[str, tuple[Rule, int | None]] = {}
    for vote in votes:
        seen.setdefault(vote.rule.id, (vote.rule, vote.n))
    return list(seen.values())


def _rule_row(rule: Rule, n: int | None, citations: Sequence[Citation], key: str, lang: str) -> str:
    source = cited_html(f"[{n}]", citations, key) if n else ""
    section = f' <span class="rule-section">{esc(rule.section)}</span>' if rule.section else ""
    return (
        f"<tr><td>{esc(rule.condition)}</td><td>{esc(verdict_label(rule.verdict, lang))}</td>"
        f"<td>{source}{section}</td></tr>"
    )


def why_html(verdict: Verdict | None, citations: Sequence[Citation], key: str, lang: str) -> str:
    """What would change it and the rules behind the verdict, collapsed under one ``<details>``."""
    if verdict is None:
        return ""
    changes, rules = change_lines(verdict, lang), _rules(verdict.votes)
    if not changes and not rules:
        return ""
    parts = []
    if changes:
        items = "".join(f"<li>{cited_html(c, citations, key)}</li>" for c in changes)
        parts.append(f'<div class="why-head">{esc(t("changes", lang))}</div><ul class="changes">{items}</ul>')
    if rules:
        head = "".join(f"<th>{esc(t(k, lang))}</th>" for k in ("rule_situation", "rule_platform", "rule_source"))
        rows = "".join(_rule_row(rule, n, citations, key, lang) for rule, n in rules)
        parts.append(
            f'<div class="why-head">{esc(t("rules_used", lang))}</div>{TABLE_WRAP}'
            f'<table class="rules-used"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
        )
    return f'<details class="why"><summary>{esc(t("why_more", lang))}</summary>{"".join(parts)}</details>'


# --- the same, as Markdown (copy and export) --------------------------------------------------------


def verdict_line_text(
    value: str | None, lang: str, read_as: Sequence[str], deciding_label: str = "", title_key: str = "verdict"
) -> str:
    """``**Verdict: Slurm** — Read as: on-prem · training only``."""
    line = f"**{t(title_key, lang)}: {verdict_label(value, lang)}**"
    if read_as:
        line += f" — {t('read_as', lang)}: {' · '.join(read_as)}"
    if value == "depends" and deciding_label:
        line += f" — {t('depends_on', lang)}: {deciding_label}"
    return line


def why_text(verdict: Verdict | None, lang: str) -> list[str]:
    """What would change it, and the rules behind the verdict, as Markdown lines (each block after a blank)."""
    if verdict is None:
        return []
    lines: list[str] = []
    changes = change_lines(verdict, lang)
    if changes:
        lines += ["", f"{t('changes', lang)}:", *(f"- {c}" for c in changes)]
    rules = _rules(verdict.votes)
    if rules:
        lines += ["", f"{t('rules_used', lang)}:"]
        for rule, n in rules:
            where = f" ({rule.section})" if rule.section else ""
            lines.append(f"- {rule.condition} → {verdict_label(rule.verdict, lang)}{where}" + (f" [{n}]" if n else ""))
    return lines
