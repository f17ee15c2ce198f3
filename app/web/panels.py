"""Pure rendering of the UI's other panels: document library, decision rules, recommendation, exports.

``library_markdown(docs, info, lang)`` lists the indexed documents (language, licence, completeness,
stale translations) under the last ingest time; ``rules_markdown`` shows each decision rule as
condition → verdict with its quote and a deep link to it; ``recommendation_markdown`` renders the
questionnaire's ``Recommendation`` (verdict, one line per reason, what would change it, sources);
``recommendation_export`` and ``conversation_export`` are the plain Markdown files users download.
Everything from documents or users is escaped (``app.web.render``).

Deliberately left out: Gradio objects and I/O (``app.web.handlers``), deciding anything (the pipeline).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.answer.links import deep_link
from app.models import Answer, Recommendation, Rule
from app.web.i18n import choice_label, criterion_label, t, verdict_label
from app.web.render import answer_plain, esc, html_link, link_markers, safe_url, sources_markdown, status_line
from core.contract import DocumentInfo, IndexInfo


def _cell(text: str) -> str:
    # Table cells: escape HTML and pipes so a cell can neither break the table nor open a tag.
    return esc(" ".join(text.split())).replace("|", "&#124;")


def _kind(doc: DocumentInfo, lang: str) -> str:
    if doc.kind == "translation":
        return t("kind_translation", lang, of=_cell(doc.translation_of or "?"))
    return t("kind_notes" if doc.kind == "notes" else "kind_full", lang)


def library_markdown(docs: Sequence[DocumentInfo], info: IndexInfo | None, lang: str = "en") -> str:
    """The corpus as a table, with the last ingest and any stale translations above it."""
    if not docs:
        return t("lib_empty", lang)
    parts = []
    if info is not None:
        parts.append(status_line(info, lang=lang))
    head = [t(k, lang) for k in ("lib_title", "lib_lang", "lib_license", "lib_kind", "lib_chunks")]
    rows = ["| " + " | ".join(head) + " |", "|---|---|---|---|---:|"]
    for doc in sorted(docs, key=lambda d: (d.kind == "translation", d.title.lower())):
        url = safe_url(doc.url)
        title = f"[{_cell(doc.title or doc.doc_id)}]({url})" if url else _cell(doc.title or doc.doc_id)
        kind = _kind(doc, lang) + (" ⚠️ " + t("stale", lang) if doc.stale else "")
        rows.append(
            f"| {title}<br><code>{_cell(doc.doc_id)}</code> | {_cell(doc.language)} | {_cell(doc.license)} | "
            f"{kind} | {doc.chunks} |"
        )
    parts.append('<div class="wide-table">\n\n' + "\n".join(rows) + "\n\n</div>")
    return "\n\n".join(parts)


def rules_markdown(rules: Sequence[Rule], docs: Sequence[DocumentInfo] = (), lang: str = "en") -> str:
    """Each rule: condition → verdict, its reason, the quote and a deep link to it in its source."""
    if not rules:
        return t("rules_empty", lang)
    by_id = {d.doc_id: d for d in docs}
    items = []
    for rule in rules:
        doc = by_id.get(rule.doc_id)
        title = esc(doc.title if doc else rule.doc_id)
        url = doc.url if doc else ""
        verbatim = doc is None or doc.kind == "full"
        source = html_link(deep_link(url, rule.quote if verbatim else "", rule.section) or url, title)
        section = f" · <em>{esc(rule.section)}</em>" if rule.section else ""
        reason = f" — {esc(rule.reason)}" if rule.reason else ""
        quote = "<br>".join(esc(line) for line in rule.quote.strip().splitlines() if line.strip())
        items.append(
            f'<div class="rule"><b>{esc(rule.condition)}</b> → '
            f'<span class="verdict verdict-{esc(rule.verdict)}">{esc(verdict_label(rule.verdict, lang))}</span>'
            f"{reason}<br><small>{source}{section}</small><blockquote>{quote}</blockquote></div>"
        )
    return "\n".join(items)


def recommendation_markdown(rec: Recommendation, lang: str = "en", key: str = "rec") -> str:
    """Verdict, one line per reason (criterion, answer, its verdict, [n]), what would change it, sources."""
    badge = f'<span class="verdict verdict-{esc(rec.verdict)}">{esc(verdict_label(rec.verdict, lang))}</span>'
    parts = [f"### {t('rec_title', lang)}: {badge}"]
    if rec.answer.strip() and not rec.reasons:  # the summary restates the reasons; show it only without them
        parts.append(link_markers(rec.answer, rec.citations, key))
    lines = []
    for reason in rec.reasons:
        numbers = " ".join(f"[{c.n}]" for c in sorted(reason.citations, key=lambda c: c.n))
        leans = f" → {verdict_label(reason.verdict, lang)}" if reason.verdict else f" — {t('no_rule', lang)}"
        text = f"**{esc(criterion_label(reason.criterion, lang))}:** {esc(choice_label(reason.criterion, reason.answer, lang))}{esc(leans)}"
        lines.append("- " + (link_markers(f"{text} {numbers}", rec.citations, key) if numbers else text))
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
                choice_label(reason.criterion, reason.answer, lang),
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
