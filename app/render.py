"""Pure rendering: ``Answer`` and index status → the Markdown/HTML strings the web UI shows.

Everything that came from a user or a document is escaped here, before Gradio sees it, so the page
never depends on Gradio's sanitizer alone. Markdown is kept (documents carry tables, lists and code):
``&``, ``<`` and ``>`` are escaped outside code, while code spans and fences are left to the Markdown
renderer, which escapes them itself. Citation markers ``[n]`` become ``<sup>`` links to an anchor on
the matching source entry; each source shows title, section path and link, and its quoted passage
sits in a ``<details>`` that the reader expands. The platform helper's recommendation is rendered
here too, with the same markers and source entries.

Example: ``answer_markdown(Answer(answer="GPUs at 92% [1]", citations=[c1]), key="a2")`` →
``GPUs at 92%<sup class="cite"><a href="#src-a2-1" ...>[1]</a></sup>`` followed by a sources block.

Deliberately left out: Gradio objects and any I/O; the web module wires these strings into components.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence

from app.models import PARAPHRASED_NOTE, Answer, Citation, Passage
from app.platform_helper import PRIORITY_WEIGHT, Lean, Point, Recommendation
from ingest.contract import IndexInfo

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_MARKER = re.compile(r"\[(\d{1,3})\](?![(:])")
_SAFE_URL = re.compile(r"^https?://[^\s<>\"']+$", re.IGNORECASE)
_EXCERPT_CHARS = 220


def esc(text: str) -> str:
    """HTML-escape text (quotes too) for use inside tags or attributes: ``'<b>'`` → ``'&lt;b&gt;'``."""
    return html.escape(text, quote=True)


# A Markdown link whose target is not http(s) or an in-page anchor (javascript:, data:, file:, ...)
# is defused by escaping its bracket, so it renders as plain text whatever the sanitizer does.
_UNSAFE_LINK = re.compile(r"\]\((?!\s*(?:https?://|#))", re.I)


def _escape_prose(text: str) -> str:
    # Escape HTML and defuse Markdown images (a document must not make the browser fetch anything).
    return _UNSAFE_LINK.sub(r"]\\(", html.escape(text, quote=False).replace("![", "!\\["))


def _map_outside_code(markdown: str, fn_prose: Callable[[str], str]) -> str:
    """Apply ``fn_prose`` to every part of ``markdown`` that is not inside a code fence or code span."""
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if prose:
            text = "".join(prose)
            pos = 0
            for m in _CODE_SPAN.finditer(text):
                if "\n\n" in m.group(0):  # a code span never crosses a paragraph break
                    continue
                out.append(fn_prose(text[pos : m.start()]))
                out.append(m.group(0))
                pos = m.end()
            out.append(fn_prose(text[pos:]))
            prose.clear()

    for line in markdown.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None and m:
            flush()
            fence = m.group(1)[0] * len(m.group(1))
            out.append(line)
        elif fence is not None:
            out.append(line)
            if line.strip().startswith(fence) and set(line.strip()) <= {fence[0]}:
                fence = None
        else:
            prose.append(line)
    flush()
    return "".join(out)


def escape_markdown(markdown: str) -> str:
    """Markdown with no live HTML outside code.

    ``'a <script>x</script> `<b>`'`` → ``'a &lt;script&gt;x&lt;/script&gt; `<b>`'``
    """
    return _map_outside_code(markdown, _escape_prose)


def safe_url(url: str) -> str | None:
    """The URL if it is plain http(s), else None (no ``javascript:`` or relative paths into the app)."""
    url = url.strip()
    return url if _SAFE_URL.match(url) else None


def anchor_id(key: str, n: int) -> str:
    return f"src-{re.sub(r'[^A-Za-z0-9_-]', '', key)}-{n}"


def _marker_html(n: int, citation: Citation | None, key: str) -> str:
    if citation is None:
        return f"[{n}]"  # a marker without a citation stays plain text: nothing to link to
    tip = citation.title + (f" — {citation.section}" if citation.section else "")
    return f'<sup class="cite"><a href="#{anchor_id(key, n)}" title="{esc(tip)}">[{n}]</a></sup>'


def link_markers(markdown: str, citations: Sequence[Citation], key: str) -> str:
    """Escape ``markdown`` and turn ``[n]`` markers (outside code) into links to source ``n``."""
    by_n = {c.n: c for c in citations}

    def prose(text: str) -> str:
        return _MARKER.sub(lambda m: _marker_html(int(m.group(1)), by_n.get(int(m.group(1))), key), _escape_prose(text))

    return _map_outside_code(markdown, prose)


def _one_line_html(text: str) -> str:
    # HTML blocks in Markdown end at a blank line, so the quote is kept on one line with <br>.
    lines = [esc(line) for line in text.strip().splitlines()]
    return "<br>".join(line for line in lines if line.strip())


def source_entry(citation: Citation, key: str) -> str:
    """One source as a single line of HTML: number, linked title, section path, expandable quote."""
    url = safe_url(citation.url)
    title = esc(citation.title or citation.doc_id)
    linked = f'<a href="{esc(url)}" target="_blank" rel="noopener noreferrer">{title}</a>' if url else title
    section = f" · <em>{esc(citation.section)}</em>" if citation.section else ""
    doc = f" <code>{esc(citation.doc_id)}</code>" if citation.doc_id else ""
    summary = "Quoted passage · 引用" if citation.verbatim else f"Quoted passage · 引用 — {PARAPHRASED_NOTE}"
    return (
        f'<div class="source" id="{anchor_id(key, citation.n)}"><b>[{citation.n}]</b> {linked}{section}{doc}'
        f"<details><summary>{esc(summary)}</summary><blockquote>{_one_line_html(citation.quote)}"
        "</blockquote></details></div>"
    )


def sources_markdown(citations: Sequence[Citation], key: str) -> str:
    if not citations:
        return ""
    entries = "\n".join(source_entry(c, key) for c in sorted(citations, key=lambda c: c.n))
    return f"**Sources · 出典**\n\n{entries}\n"


def question_markdown(question: str) -> str:
    """A user's question as shown in the chat: inert text, Markdown allowed."""
    return escape_markdown(question)


def answer_markdown(answer: Answer, key: str, *, partial: bool = False) -> str:
    """The chat message for an answer: verdict, text with linked markers, notes, then sources."""
    parts: list[str] = []
    if answer.verdict and answer.verdict.strip() not in answer.answer:
        parts.append(f"**Verdict · 判定:** {link_markers(answer.verdict, answer.citations, key)}")
    body = answer.answer.strip() or ("…" if partial else "")
    parts.append(link_markers(body, answer.citations, key))
    if answer.refused and not partial:
        parts.append(
            "_The knowledge base does not support an answer to this question. · "
            "ナレッジベースにはこの質問に答える根拠がありません。_"
        )
    if answer.flagged and not partial:
        parts.append(
            f"_⚠️ {len(answer.flagged)} sentence(s) had no valid citation and should be checked. · "
            "出典のない文があります。_"
        )
    sources = sources_markdown(answer.citations, key)
    if sources:
        parts.append(sources)
    if not partial:
        parts.append(f"<sub>{esc(answer.backend)} · {_duration(answer.latency_ms)}</sub>")
    return "\n\n".join(p for p in parts if p)


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _cell(text: str, limit: int = _EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    # Table cells: escape HTML, pipes and backticks so a cell can neither break the table nor open code.
    return _UNSAFE_LINK.sub(r"]\\(", esc(flat).replace("|", "&#124;").replace("`", "&#96;").replace("![", "!\\["))


def _score(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def passages_markdown(passages: Sequence[Passage]) -> str:
    """The retrieved passages with their fused, dense and BM25 scores, best first."""
    if not passages:
        return "_No passages retrieved yet. · まだ検索結果はありません。_"
    rows = [
        "| # | Score | Dense | BM25 | Source · 出典 | Section · 節 | Passage · 本文 |",
        "|---:|---:|---:|---:|---|---|---|",
    ]
    for i, p in enumerate(passages, 1):
        rows.append(
            f"| {i} | {_score(p.score, 4)} | {_score(p.dense)} | {_score(p.lexical, 2)} | "
            f"{_cell(p.title or p.doc_id, 60)} | {_cell(p.section, 60)} | {_cell(p.text)} |"
        )
    return "\n".join(rows)


def status_line(info: IndexInfo | None, *, loading: bool = False) -> str:
    """The index status line: ``📚 2 documents · 9 chunks · embedder fake:128 · last ingest ...``."""
    if loading:
        return "⏳ **Loading models… · モデルを読み込み中…** — questions will be answered once ready."
    if info is None:
        return (
            "⚠️ **No index yet · インデックスがありません** — run `ingest` to build it, then press Refresh. · "
            "`ingest` を実行してから「更新」を押してください。"
        )
    when = info.updated_at.replace("T", " ").replace("Z", " UTC") if info.updated_at else "unknown"
    return (
        f"📚 Index · インデックス: **{info.documents}** documents (文書) · **{info.chunks}** chunks (チャンク) · "
        f"embedder `{esc(info.meta.embedder)}` · last ingest (最終取り込み) {esc(when)}"
    )


def status_error(message: str) -> str:
    return f"⚠️ **Index unavailable · インデックスを利用できません** — {esc(message)}"


def question_error(message: str, limit: int) -> str:
    """An over-long or empty question: the pipeline's message, and the limit if it does not say it."""
    text = esc(message)
    if str(limit) not in message and f"{limit:,}" not in message:
        text += f" (limit: {limit} characters · 上限 {limit} 文字)"
    return f"⚠️ {text}"


def index_error(message: str) -> str:
    return (
        f"⚠️ **The knowledge base is unavailable · ナレッジベースを利用できません:** {esc(message)}\n\n"
        "Ask again once it is back; the app reconnects by itself. · 復旧後にもう一度質問してください。"
    )


def internal_error(exc: BaseException) -> str:
    # Only the exception type: messages of unexpected errors may carry paths or internals.
    return (
        f"⚠️ Something went wrong ({esc(type(exc).__name__)}). Please try again; "
        "if it keeps happening, check the server log. · エラーが発生しました。もう一度お試しください。"
    )


def _point_line(p: Point, key: str, citations: list[Citation]) -> str:
    if p.refused:
        return f"- **{esc(p.factor.label)}** — _no supporting passage in the knowledge base · 根拠なし_"
    body = link_markers(p.text, citations, key) if p.text else "_no clear statement · 明確な記述なし_"
    return f"- **{esc(p.factor.label)}** — {body}"


def recommendation_markdown(rec: Recommendation, key: str = "ph") -> str:
    """The platform helper's result: recommendation, reasons, trade-offs, undecided points, sources."""
    s, k, n = rec.scores["Slurm"], rec.scores["Kubernetes"], rec.scores["none"]
    if rec.choice:
        head = f"### Recommendation · 推奨: **{rec.choice}**"
    else:
        head = "### Recommendation · 推奨: **It depends · 条件次第**"
    parts = [
        head,
        f"Weighted verdicts · 重み付きの判定: Slurm **{s:g}** · Kubernetes **{k:g}** · "
        f"no clear verdict · 判定なし **{n:g}** "
        f"(your top priority counts ×{PRIORITY_WEIGHT:g} · 最重視の項目は{PRIORITY_WEIGHT:g}倍).",
    ]
    other: Lean | None = None
    if rec.choice:
        other = "Kubernetes" if rec.choice == "Slurm" else "Slurm"
        sections = [
            (f"**Why {rec.choice} · 理由**", [p for p in rec.points if p.lean == rec.choice]),
            (
                f"**Trade-offs: what favours {other} · トレードオフ**",
                [p for p in rec.points if p.lean == other],
            ),
        ]
    else:
        sections = [
            ("**Points for Slurm · Slurm を支持する点**", [p for p in rec.points if p.lean == "Slurm"]),
            (
                "**Points for Kubernetes · Kubernetes を支持する点**",
                [p for p in rec.points if p.lean == "Kubernetes"],
            ),
        ]
    sections.append(("**No clear verdict · 判定が分かれる点**", [p for p in rec.points if p.lean is None]))
    for title, pts in sections:
        if pts:
            parts.append(title + "\n\n" + "\n".join(_point_line(p, key, rec.citations) for p in pts))
    if not rec.choice:
        parts.append(
            "_The evidence does not clearly favour one platform for these answers; weigh the points above. · "
            "根拠はどちらか一方を明確には支持していません。上の点を比較してください。_"
        )
    sources = sources_markdown(rec.citations, key)
    if sources:
        parts.append(sources)
    return "\n\n".join(parts)
