"""An answer's shape, rendered from its data (pure): the direct answer, the quotes, why, then the sources.

A chat message (``answer_markdown``) and its copy/export text (``answer_plain``) say the same things in
the same order, in the question's language (``render.frame_lang``):

1. the direct answer, built from the ``Answer``'s fields: a "not stated" callout (what was asked, about
   what); or the verdict line ("Read as: …", with its reasons, ``app.web.verdict_view``); or the facts a
   selection question must state ("To recommend a platform, tell me: …"); or each value found, in bold,
   with its [n]; and the parts no document answers;
2. the quotes — the typed lead (at most three, ``app.web.quote_view``: tables as tables, code as code,
   values in bold, "against" labelled, a translation's original on request), the rest folded under
   "More from the documents"; under a "not stated" callout they are "Related, but not an answer";
3. what would change a verdict and the rules behind it, collapsed;
4. the sources.

Everything comes from the ``Answer``'s fields (value line, verdict, lead, more); its Markdown is never
parsed back. An LLM's text (no typed quotes) is shown whole.

Example: ``answer_markdown(Answer(answer="From the knowledge base:\\n- 512 MB [1]", findings=[...]), "a2")``
→ ``<div class="direct-answer">Answer: <strong class="value">512 MB</strong> [1]</div>`` then the quotes.

Deliberately left out: escaping, markers and sources (``app.web.render``), Gradio and I/O.
"""

from __future__ import annotations

from typing import NamedTuple

from app.models import Answer, Finding
from app.web.i18n import backend_name, listed, quoted, t
from app.web.quote_view import lead_html, quote_text
from app.web.render import (
    NO_RATE,
    citation_link,
    cited_html,
    document_html,
    duration,
    esc,
    frame_lang,
    sources_markdown,
    tidy,
)
from app.web.verdict_view import (
    read_as_html,
    reasons,
    verdict_line,
    verdict_line_text,
    votes_html,
    why_html,
    why_text,
)


class Quotes(NamedTuple):
    markdown: str  # free text to show whole (an LLM's answer, a refusal); empty for a typed answer
    typed: bool  # the answer's quotes are its typed fields (lead, more)


def quoted_part(answer: Answer) -> Quotes:
    """What the answer quotes: its typed quotes (``lead``, ``more``), else its free text shown whole.

    An extractive answer whose parts are all drawn from fields (a verdict, values, a not-stated line) and
    that quotes nothing has no quotes part; an LLM's text replaces the quotes. The Markdown is never parsed
    back into parts."""
    if (answer.lead or answer.more) and answer.backend == "extractive":
        return Quotes("", True)
    structured = bool(answer.verdict or answer.findings or answer.needs or answer.missing)
    if answer.not_stated is not None or (structured and answer.backend == "extractive"):
        return Quotes("", False)
    return Quotes(answer.answer.strip(), False)


def _findings(answer: Answer) -> list[Finding]:
    """The value line's values: the typed value line when there is one; a typed answer without one (not
    confident enough) states none; an LLM's answer, its findings."""
    if answer.value_line is not None:
        return answer.value_line.findings
    return [] if quoted_part(answer).typed else answer.findings


def _values(findings: list[Finding]) -> list[tuple[str, int]]:
    """Each value once, in the order of the question's parts."""
    ordered = sorted(findings, key=lambda f: (f.part, f.n))
    return list(dict.fromkeys((f.value, f.n) for f in ordered))


def read_question(answer: Answer) -> str:
    """The question as the advisor read it when that is not what the user typed (a follow-up rewritten in
    the previous question's frame, or leaning on it), else "".

    ``Answer(question="And Volcano?", resolved_question="Which apiVersion do Volcano Topology objects use?", …)``
    → ``"Which apiVersion do Volcano Topology objects use?"``
    """
    resolved = answer.resolved_question.strip()
    return resolved if resolved and " ".join(resolved.split()) != " ".join(answer.question.split()) else ""


def direct_html(answer: Answer, key: str, lang: str) -> str:
    """The direct answer: how a follow-up was read, the not-stated callout, the verdict with its reasons, the
    facts needed, the values."""
    cites = answer.citations
    blocks = []
    if read := read_question(answer):
        blocks.append(f'<div class="read-question"><b>{esc(t("read_question", lang))}:</b> {esc(read)}</div>')
    if answer.not_stated is not None:
        ns = answer.not_stated
        asked = f'<div class="ns-asked"><b>{esc(t("asked", lang))}:</b> {esc(quoted(ns.asked.strip(), lang))}</div>'
        focus = f'<div class="ns-focus"><b>{esc(t("focus", lang))}:</b> {esc(ns.focus)}</div>' if ns.focus else ""
        blocks.append(
            f'<div class="not-stated" role="note"><div class="ns-title">{esc(t("not_stated", lang))}</div>'
            f'<div class="ns-help">{esc(t("not_stated_help", lang))}</div>{asked}{focus}</div>'
        )
    if answer.verdict is not None:
        v = answer.verdict
        blocks.append(verdict_line(v.value, lang, read_as_html(v.read_as), v.deciding_label))
        blocks.append(votes_html(v.votes, cites, key, lang))
    if answer.needs:
        facts = listed([f"<b>{esc(n)}</b>" for n in answer.needs], lang)
        blocks.append(f'<div class="needs" role="note">{t("needs", lang, facts=facts)}</div>')
    if findings := _findings(answer):
        values = "; ".join(
            f'<strong class="value">{esc(v)}</strong>{cited_html(f" [{n}]" if n else "", cites, key)}'
            for v, n in _values(findings)
        )
        blocks.append(
            f'<div class="direct-answer"><span class="da-label">{esc(t("answer", lang))}:</span> {values}</div>'
        )
    if answer.missing:
        parts = " / ".join(esc(quoted(m.strip().rstrip("?？"), lang)) for m in answer.missing)
        blocks.append(f'<div class="missing" role="note"><b>{esc(t("missing", lang))}:</b> {parts}</div>')
    return "".join(b for b in blocks if b)


def _quotes_html(answer: Answer, key: str, lang: str, partial: bool) -> str:
    quotes = quoted_part(answer)
    if quotes.typed:
        body = lead_html(answer.lead, answer.more, answer.citations, key, lang)
    else:
        text = quotes.markdown or ("…" if partial else "")
        if not text:
            return ""
        body = document_html(text, answer.citations, key)
    if answer.not_stated is not None:
        return f'<div class="related"><div class="related-head">{esc(t("related", lang))}</div>{body}</div>'
    head = f'<div class="quotes-head">{esc(t("from_kb", lang))}</div>' if quotes.typed and answer.lead else ""
    return f'<div class="quotes">{head}{body}</div>'


def answer_markdown(answer: Answer, key: str, *, partial: bool = False, lang: str = "en") -> str:
    """The chat message for an answer: direct answer, quotes, why (collapsed), notes, sources, footer.

    ``lang`` is the UI's language; the framing follows the question's (``frame_lang``).
    """
    lang = frame_lang(answer, lang)
    parts = [
        f'<p class="notice">ℹ️ {esc(t("notice_" + answer.notice, lang))}</p>' if answer.notice else "",
        direct_html(answer, key, lang),
        _quotes_html(answer, key, lang, partial),
        why_html(answer.verdict, answer.citations, key, lang),
    ]
    if answer.flagged and not partial:
        parts.append(f"_⚠️ {t('flagged', lang, n=len(answer.flagged))}_")
    parts.append(sources_markdown(answer.citations, key, lang))
    # An unfinished answer (streaming, or stopped) cannot be rated: it is not stored as an answer.
    footer = f"<sub>{esc(backend_name(answer.backend, lang))} · {duration(answer.latency_ms)}</sub>"
    parts.append(footer if not partial else NO_RATE)
    return "\n\n".join(p for p in parts if p)


def stopped_markdown(partial: Answer | None, key: str, lang: str = "en") -> str:
    """An answer stopped by the user: what arrived of it, then a note that it was stopped (not rated)."""
    lang = frame_lang(partial, lang) if partial is not None else lang
    note = f'<div class="stopped" role="status">{esc(t("stopped", lang))}</div>'
    if partial is None:
        return f"{note}\n\n{NO_RATE}"
    return f"{answer_markdown(partial, key, partial=True, lang=lang)}\n\n{note}"


def direct_text(answer: Answer, lang: str) -> list[str]:
    """The direct answer as Markdown lines (the same parts as ``direct_html``)."""
    lines: list[str] = []
    if read := read_question(answer):
        lines.append(f"_{t('read_question', lang)}: {read}_")
    if answer.not_stated is not None:
        ns = answer.not_stated
        line = f"**{t('not_stated', lang)}** — {t('asked', lang)}: {quoted(ns.asked.strip(), lang)}"
        lines.append(line + (f" · {t('focus', lang)}: {ns.focus}" if ns.focus else ""))
    if answer.verdict is not None:
        v = answer.verdict
        lines.append(verdict_line_text(v.value, lang, v.read_as, v.deciding_label))
        lines += [f"- {line}" for line in reasons(v.votes, lang)]
    if answer.needs:
        lines.append(t("needs", lang, facts=listed(list(answer.needs), lang)))
    if findings := _findings(answer):
        shown = "; ".join(f"**{v}**" + (f" [{n}]" if n else "") for v, n in _values(findings))
        lines.append(f"**{t('answer', lang)}:** {shown}")
    if answer.missing:
        parts = " / ".join(quoted(m.strip().rstrip("?？"), lang) for m in answer.missing)
        lines.append(f"**{t('missing', lang)}:** {parts}")
    return lines


def answer_plain(answer: Answer, lang: str = "en") -> str:
    """The answer as Markdown text (the copy button, the exported conversation): the same parts, in order."""
    lang = frame_lang(answer, lang)
    lines = direct_text(answer, lang)
    quotes = quoted_part(answer)
    label = t("related", lang) if answer.not_stated is not None else t("from_kb", lang)
    if quotes.typed:
        if answer.lead:
            lines += ["", f"{label}:", *(x for q in answer.lead for x in quote_text(q, lang))]
        if answer.more:
            lines += ["", f"{t('more_docs', lang)}:", *(x for q in answer.more for x in quote_text(q, lang))]
    elif quotes.markdown:
        lines += ["", tidy(quotes.markdown)]
    lines += why_text(answer.verdict, lang)
    if answer.citations:
        lines += ["", f"{t('sources', lang)}:"]
        for c in sorted(answer.citations, key=lambda c: c.n):
            where = " — ".join(x for x in (c.title or c.doc_id, c.section, citation_link(c)) if x)
            lines.append(f"[{c.n}] {where}")
    return "\n".join(lines).strip() + "\n"
