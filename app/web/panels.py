"""Pure rendering of the UI's other panels: document library, decision rules, recommendation, exports.

``library_markdown(docs, info, lang)`` lists the indexed documents (language, licence, completeness,
stale translations) under the last ingest time, as an HTML table whose cells also carry their column's
label, so the page can show each row as a card on a phone; ``rules_markdown`` shows each decision rule
as a card: condition → verdict, a deep link to it, and its quote rendered (tables as tables);
``recommendation_markdown`` renders the questionnaire's ``Recommendation`` like a chat verdict
(``app.web.verdict_view``): the recommendation with "Read as" built from the answers' labels, each a
link back to its question in the form; without a platform, the facts still to give; one line per answer;
what would change it, collapsed; sources. ``recommendation_export`` and ``conversation_export`` are the
Markdown files users download, saying the same things. Everything from documents or users is escaped once (``app.web.render``,
``app.web.doc_html``).

Deliberately left out: Gradio objects and I/O (``app.web.handlers``), deciding anything (the pipeline).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.answer.links import deep_link
from app.answer.verdict_lines import rule_words
from app.models import Answer, Reason, Recommendation, Rule
from app.web.answer_view import answer_plain
from app.web.doc_html import to_html
from app.web.i18n import capital, facet_name, form_facets, listed, t, value_name, verdict_label
from app.web.render import cited_html, esc, html_link, safe_url, sources_markdown, status_line
from app.web.verdict_view import verdict_line, verdict_line_text, vote_text, why_html, why_text
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


def _chip(facet: str, label: str, lang: str) -> str:
    """An answered facet in the "Read as" line: a link that takes the user to its question in the form."""
    title = esc(t("edit_facet", lang, facet=facet_name(facet, lang)))
    return f'<a class="facet facet-edit" href="#q-{esc(facet)}" title="{title}">{esc(label)}<span class="edit-mark"> ✎</span></a>'


def _answer_label(reason: Reason, lang: str) -> str:
    return value_name(reason.criterion, reason.value, lang) if reason.value else reason.answer


def _unanswered(rec: Recommendation, lang: str) -> list[str]:
    """The facts the questionnaire still lacks (every facet no answer gives), as human labels."""
    answered = {r.criterion for r in rec.reasons}
    return [facet_name(f, lang) for f in form_facets() if f not in answered]


def _reason_lines(rec: Recommendation, lang: str) -> list[tuple[str, str]]:
    """(criterion, plain line with markers) per answer: each vote it casts, or that no rule speaks to it."""
    votes = rec.detail.votes if rec.detail else []
    lines = []
    for reason in rec.reasons:
        criterion = capital(facet_name(reason.criterion, lang))
        mine = [v for v in votes if v.facet == reason.criterion]
        if mine:
            lines += [(criterion, vote_text(v, lang)) for v in mine]
        elif reason.verdict and reason.rule is not None:
            numbers = " ".join(f"[{c.n}]" for c in sorted(reason.citations, key=lambda c: c.n))
            text = f"{_answer_label(reason, lang)} → {verdict_label(reason.verdict, lang)}: {rule_words(reason.rule)}"
            lines.append((criterion, f"{text} {numbers}".rstrip()))
        else:
            lines.append((criterion, f"{_answer_label(reason, lang)} — {t('no_rule', lang)}"))
    return lines


def _needs(rec: Recommendation, lang: str) -> str:
    facts = _unanswered(rec, lang)
    return t("needs", lang, facts=listed(facts, lang)) if facts else t("needs_none", lang)


def recommendation_markdown(rec: Recommendation, lang: str = "en", key: str = "rec") -> str:
    """The questionnaire's result: the recommendation line with an editable "Read as", the facts still
    needed when nothing decides, one line per answer (its vote and rule, [n]), why (collapsed), sources."""
    chips = " · ".join(_chip(r.criterion, _answer_label(r, lang), lang) for r in rec.reasons)
    read_as = chips or f'<span class="facet none">{esc(t("read_nothing", lang))}</span>'
    deciding = rec.detail.deciding_label if rec.detail else ""
    parts = [verdict_line(rec.verdict, lang, read_as, deciding, title_key="rec_title")]
    if rec.verdict is None:
        parts.append(f'<div class="needs" role="note">{esc(_needs(rec, lang))}</div>')
    lines = _reason_lines(rec, lang)
    if lines:
        items = "".join(
            f"<li><b>{esc(criterion)}:</b> {cited_html(text, rec.citations, key)}</li>" for criterion, text in lines
        )
        parts.append(f'<div class="why-head">{esc(t("why", lang))}</div><ul class="votes reasons">{items}</ul>')
    parts.append(why_html(rec.detail, rec.citations, key, lang))
    parts.append(sources_markdown(rec.citations, key, lang))
    return "\n\n".join(p for p in parts if p)


def recommendation_export(rec: Recommendation, lang: str = "en") -> str:
    """The recommendation as a plain Markdown document (for a design review or a ticket): the same parts."""
    labels = [_answer_label(r, lang) for r in rec.reasons]
    deciding = rec.detail.deciding_label if rec.detail else ""
    head = verdict_line_text(rec.verdict, lang, labels or [t("read_nothing", lang)], deciding, title_key="rec_title")
    lines = ["# " + head.replace("**", ""), ""]
    if rec.verdict is None:
        lines += [_needs(rec, lang), ""]
    reasons = _reason_lines(rec, lang)
    if reasons:
        lines += [f"## {t('why', lang)}", "", *(f"- **{criterion}:** {text}" for criterion, text in reasons)]
    lines += why_text(rec.detail, lang)
    if rec.citations:
        lines += ["", f"## {t('sources', lang)}", ""]
        for c in sorted(rec.citations, key=lambda c: c.n):
            link = c.link or deep_link(c.url, c.quote if c.verbatim else "", c.section) or c.url
            lines.append(f"{c.n}. {c.title or c.doc_id}" + (f" — {c.section}" if c.section else "") + f" <{link}>")
    return "\n".join(lines).strip() + "\n"


def conversation_export(questions: Sequence[str], answers: Sequence[Answer | str], lang: str = "en") -> str:
    """A conversation as Markdown: each question as a heading, each answer as plain text with its sources."""
    lines = ["# Slurm × Kubernetes Advisor", ""]
    for question, answer in zip(questions, answers, strict=False):
        lines += [f"## {' '.join(question.split())}", ""]
        lines += [answer_plain(answer, lang) if isinstance(answer, Answer) else answer.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"
