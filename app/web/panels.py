"""Pure rendering of the UI's other panels: document library, decision rules, recommendation, exports.

``library_markdown(docs, info, lang)`` lists the indexed documents (language, licence, completeness,
stale translations) under the last ingest time, as an HTML table whose cells also carry their column's
label, so the page can show each row as a card on a phone; ``rules_markdown`` shows each decision rule
as a card: condition → verdict, a deep link to it, and its quote rendered (tables as tables);
``recommendation_markdown`` renders the questionnaire's ``Recommendation`` (verdict, one line per reason,
what would change it, sources); ``recommendation_export`` and ``conversation_export`` are the plain
Markdown files users download. Everything from documents or users is escaped once (``app.web.render``,
``app.web.doc_html``).

Deliberately left out: Gradio objects and I/O (``app.web.handlers``), deciding anything (the pipeline).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.answer.links import deep_link
from app.models import Answer, Recommendation, Rule
from app.web.doc_html import to_html
from app.web.i18n import choice_label, criterion_label, t, verdict_label
from app.web.render import answer_plain, esc, html_link, link_markers, safe_url, sources_markdown, status_line
from core.contract import DocumentInfo, IndexInfo


def _kind(doc: DocumentInfo, lang: str) -> str:
    if doc.kind == "translation":
        return esc(t("kind_translation", lang, of=doc.translation_of or "?"))
    return esc(t("kind_notes" if doc.kind == "notes" else "kind_full", lang))


_LIBRARY_COLUMNS = ("lib_title", "lib_lang", "lib_license", "lib_kind", "lib_chunks")


def _library_row(doc: DocumentInfo, lang: str) -> str:
    url = safe_url(doc.url)
    title = esc(doc.title or doc.doc_id)
    title = html_link(url, title) if url else title
    kind = _kind(doc, lang) + (" ⚠️ " + esc(t("stale", lang)) if doc.stale else "")
    values = [f"{title}<br><code>{esc(doc.doc_id)}</code>", esc(doc.language), esc(doc.license), kind, str(doc.chunks)]
    classes = ["lib-title", "lib-lang", "lib-license", "lib-kind", "lib-chunks"]
    # A one-word value ("Apache-2.0") never wraps; a licence in words wraps between words.
    wraps = [True, " " in doc.language, " " in doc.license.strip(), True, False]
    cells = "".join(
        f'<td class="{cls}"><span class="cell-label">{esc(t(key, lang))}</span>'
        f'<span class="cell-value{"" if wrap else " nowrap"}">{value}</span></td>'
        for key, cls, value, wrap in zip(_LIBRARY_COLUMNS, classes, values, wraps, strict=True)
    )
    return f"<tr>{cells}</tr>"


def library_markdown(docs: Sequence[DocumentInfo], info: IndexInfo | None, lang: str = "en") -> str:
    """The corpus as a table (cards on a phone), with the last ingest and any stale translations above it."""
    if not docs:
        return t("lib_empty", lang)
    parts = []
    if info is not None:
        parts.append(status_line(info, lang=lang))
    head = "".join(f"<th>{esc(t(key, lang))}</th>" for key in _LIBRARY_COLUMNS)
    ordered = sorted(docs, key=lambda d: (d.kind == "translation", d.title.lower()))
    rows = "".join(_library_row(doc, lang) for doc in ordered)
    parts.append(
        f'<div class="wide-table"><table class="library"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
    )
    return "\n\n".join(parts)


def _rule_card(rule: Rule, doc: DocumentInfo | None, lang: str) -> str:
    title = esc(doc.title if doc else rule.doc_id)
    url = doc.url if doc else ""
    verbatim = doc is None or doc.kind == "full"
    source = html_link(deep_link(url, rule.quote if verbatim else "", rule.section) or url, title)
    section = f" · <em>{esc(rule.section)}</em>" if rule.section else ""
    reason = f" — {esc(rule.reason)}" if rule.reason else ""
    badge = f'<span class="verdict verdict-{esc(rule.verdict)}">{esc(verdict_label(rule.verdict, lang))}</span>'
    return (
        f'<div class="rule"><div class="rule-head"><b>{esc(rule.condition)}</b> → {badge}{reason}</div>'
        f'<div class="rule-source"><small>{source}{section}</small></div>'
        f'<blockquote class="quote">{to_html(rule.quote, url)}</blockquote></div>'
    )


def rules_markdown(rules: Sequence[Rule], docs: Sequence[DocumentInfo] = (), lang: str = "en") -> str:
    """Each rule as a card: condition → verdict, its reason, a deep link to it, and its quote rendered."""
    if not rules:
        return t("rules_empty", lang)
    by_id = {d.doc_id: d for d in docs}
    return "\n".join(_rule_card(rule, by_id.get(rule.doc_id), lang) for rule in rules)


def recommendation_markdown(rec: Recommendation, lang: str = "en", key: str = "rec") -> str:
    """Verdict, one line per reason (criterion, answer, its verdict, [n]), what would change it, sources."""
    badge = f'<span class="verdict verdict-{esc(rec.verdict or "none")}">{esc(verdict_label(rec.verdict, lang))}</span>'
    parts = [f"### {t('rec_title', lang)}: {badge}"]
    if rec.answer.strip() and not rec.reasons:  # the summary restates the reasons; show it only without them
        parts.append(link_markers(rec.answer, rec.citations, key))
    lines = []
    for reason in rec.reasons:
        numbers = " ".join(f"[{c.n}]" for c in sorted(reason.citations, key=lambda c: c.n))
        leans = f" → {verdict_label(reason.verdict, lang)}" if reason.verdict else f" — {t('no_rule', lang)}"
        # Plain text in, escaped once by link_markers (escaping here too showed "Team&#x27;s").
        text = f"**{criterion_label(reason.criterion, lang)}:** {choice_label(reason.criterion, reason.value or reason.answer, lang)}{leans}"
        lines.append("- " + link_markers(f"{text} {numbers}".rstrip(), rec.citations, key))
    if lines:
        parts.append(f"**{t('why', lang)}**\n\n" + "\n".join(lines))
    if rec.changes:
        parts.append(f"_{t('changes', lang)}:_\n\n" + "\n".join(f"- {esc(c)}" for c in rec.changes))
    sources = sources_markdown(rec.citations, key, lang)
    if sources:
        parts.append(sources)
    return "\n\n".join(parts)


def recommendation_export(rec: Recommendation, lang: str = "en") -> str:
    """The recommendation as a plain Markdown document (for a design review or a ticket)."""
    lines = [f"# {t('rec_title', lang)}: {verdict_label(rec.verdict, lang)}", ""]
    if rec.answer.strip():
        lines += [rec.answer.strip(), ""]
    if rec.reasons:
        lines += [f"## {t('why', lang)}", ""]
        for reason in rec.reasons:
            numbers = " ".join(f"[{c.n}]" for c in sorted(reason.citations, key=lambda c: c.n))
            leans = f" → {verdict_label(reason.verdict, lang)}" if reason.verdict else f" — {t('no_rule', lang)}"
            criterion, choice = (
                criterion_label(reason.criterion, lang),
                choice_label(reason.criterion, reason.value or reason.answer, lang),
            )
            lines.append(f"- **{criterion}:** {choice}{leans} {numbers}".rstrip())
        lines.append("")
    if rec.changes:
        lines += [f"## {t('changes', lang)}", "", *(f"- {c}" for c in rec.changes), ""]
    if rec.citations:
        lines += [f"## {t('sources', lang)}", ""]
        for c in sorted(rec.citations, key=lambda c: c.n):
            link = c.link or deep_link(c.url, c.quote if c.verbatim else "", c.section) or c.url
            lines.append(f"{c.n}. {c.title or c.doc_id}" + (f" — {c.section}" if c.section else "") + f" <{link}>")
    return "\n".join(lines).rstrip() + "\n"


def conversation_export(questions: Sequence[str], answers: Sequence[Answer | str], lang: str = "en") -> str:
    """A conversation as Markdown: each question as a heading, each answer as plain text with its sources."""
    lines = ["# Slurm × Kubernetes Advisor", ""]
    for question, answer in zip(questions, answers, strict=False):
        lines += [f"## {' '.join(question.split())}", ""]
        lines += [answer_plain(answer, lang) if isinstance(answer, Answer) else answer.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"
