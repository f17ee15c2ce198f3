"""The Gradio web UI: the page layout and its launch options (the ``app`` command is ``app.web.main``).

``build_app(settings, advisor)`` builds the page — chat with cited, streamed answers (examples in the
empty chat, a live character count, Stop while an answer streams, per-answer 👍/👎 with a comment box by
the answer, export as Markdown, kept across reloads in browser-local storage), the source panel that
opens a cited section in place, the passages panel, the questionnaire, and the document library with the
decision rules — in one UI language at a time (EN/JA toggle). Events are wired in ``app.web.wiring``,
handlers live in ``app.web.handlers``, strings in ``app.web.i18n``, CSS and script in ``app.web.assets``.

Safe defaults: bound to ``settings.web.host`` (loopback), never shared, analytics off, no ``allowed_paths``
(nothing served beyond the UI's own assets and exported files), bounded concurrency and waiting.

Deliberately left out: answer logic (``app.pipeline``), rendering (``app.web.render``, ``app.web.panels``) and
serving (``app.web.server``; the ``app`` command, ``app.web.main``).
"""

from __future__ import annotations

import secrets
from typing import Any

import gradio as gr

from app.pipeline import Advisor
from app.web import render
from app.web.assets import CSS, HEAD
from app.web.handlers import Runtime, empty_conversation
from app.web.i18n import LANGS, UNSET, form_facets, question_choices, question_label, t
from app.web.wiring import CONVERSATION_KEY, EXAMPLES, Page, chat_examples, wire
from core.settings import Settings

__all__ = ["EXAMPLES", "build_app", "launch_options"]


def _header(ui: Page, rt: Runtime, lang: str) -> None:
    with gr.Row(elem_id="header-row"):
        with gr.Column(scale=4, min_width=200):
            ui.title = gr.Markdown(t("title", lang), elem_id="title")
            ui.intro = gr.Markdown(t("intro", lang), elem_id="intro")
        ui.lang = gr.Radio(LANGS, value=lang, show_label=False, elem_id="lang-toggle", scale=0, min_width=160)
    ui.status = gr.Markdown(rt.status(lang), elem_id="index-status")


def _question_box(ui: Page, settings: Settings, lang: str) -> None:
    limit = settings.answer.max_question_chars
    ui.question = gr.Textbox(show_label=False, placeholder=t("placeholder", lang), max_lines=6, elem_id="question")
    # The count is kept live by the page's script; the limit is the one the server enforces.
    ui.char_count = gr.HTML(
        f'<span class="char-count" data-limit="{limit}" aria-live="polite">0 / {limit:,}</span>', elem_id="char-count"
    )
    with gr.Row():
        ui.send = gr.Button(t("ask", lang), variant="primary", elem_id="send", min_width=80)
        # Stop shows only while an answer is on its way (it takes Ask's place).
        ui.stop = gr.Button(t("stop", lang), variant="stop", elem_id="stop", min_width=80, visible=False)
        ui.clear = gr.Button(t("clear", lang), elem_id="clear", min_width=80)


def _feedback_box(ui: Page, lang: str) -> None:
    # Floats next to the rated answer (placed by the page's script); one per page, so its ids are unique.
    # A Column, not a Group: Gradio renders a Group's elem_id on two nested elements.
    with gr.Column(visible=False, elem_id="feedback-box", variant="panel") as ui.feedback_box:
        ui.feedback_note = gr.Markdown(elem_id="feedback-status")
        ui.comment = gr.Textbox(label=t("comment", lang), lines=2, elem_id="feedback-comment")
        with gr.Row():
            ui.save_comment = gr.Button(t("save_comment", lang), size="sm", elem_id="save-comment")
            ui.close_feedback = gr.Button(t("close", lang), size="sm", elem_id="feedback-close")


def _chat_tab(ui: Page, rt: Runtime, settings: Settings, lang: str) -> None:
    with gr.Row():
        with gr.Column(scale=3, min_width=300):
            ui.chatbot = gr.Chatbot(
                show_label=False,
                height=520,
                latex_delimiters=[],
                buttons=["copy"],
                autoscroll=False,  # a new answer opens at its first line (the page's script), not its last
                elem_id="chat",
                placeholder=t("chat_placeholder", lang),
                examples=chat_examples(lang),  # in the empty chat, so they are on the first screen
            )
            _question_box(ui, settings, lang)
            _feedback_box(ui, lang)
        with gr.Column(scale=1, min_width=240):
            # Folded: a newcomer needs none of it to ask; the LLM backends show only while their server runs.
            with gr.Accordion(t("settings", lang), open=False, elem_id="settings") as ui.settings_box:
                ui.backend = gr.Radio(
                    rt.backend_choices(lang, check=False, chosen=settings.answer.backend),
                    value=settings.answer.backend,
                    label=t("backend", lang),
                    info=t("backend_info", lang),
                    elem_id="backend",
                )
                ui.k = gr.Slider(1, 20, value=settings.retrieval.top_k, step=1, label=t("k", lang), elem_id="k")
                ui.refresh = gr.Button(t("refresh", lang), size="sm", elem_id="refresh-status")
            ui.export_chat = gr.Button(t("export_chat", lang), size="sm", elem_id="export-chat")
            ui.chat_file = gr.File(visible=False, interactive=False, elem_id="chat-file", show_label=False)
    with gr.Accordion(t("passages_panel", lang), open=False, elem_id="passages") as ui.passages_box:
        ui.passages = gr.Markdown(render.passages_markdown([], lang))


def _helper_tab(ui: Page, lang: str) -> None:
    ui.helper_intro = gr.Markdown(t("helper_intro", lang))
    with gr.Row():
        with gr.Column(scale=1, min_width=260):
            ui.profile = [
                gr.Radio(question_choices(f, lang), value=UNSET, label=question_label(f, lang), elem_id=f"q-{f}")
                for f in form_facets()
            ]
            ui.recommend = gr.Button(t("recommend", lang), variant="primary", elem_id="recommend")
        with gr.Column(scale=2, min_width=280):
            ui.recommendation = gr.Markdown(elem_id="recommendation")
            ui.export_rec = gr.Button(t("export_rec", lang), size="sm", elem_id="export-rec", visible=False)
            ui.rec_file = gr.File(visible=False, interactive=False, elem_id="rec-file", show_label=False)


def _source_panel(ui: Page, lang: str) -> None:
    with gr.Column(visible=False, elem_id="source-panel") as ui.source_panel:
        ui.close_source = gr.Button(t("close", lang), size="sm", elem_id="source-close")
        ui.source_view = gr.HTML(elem_id="source-view")
    # The page's script writes "<message key>:<n>" here and clicks the button when a source title is clicked.
    ui.source_request = gr.Textbox(visible="hidden", elem_id="source-request", show_label=False)
    ui.source_open = gr.Button(visible="hidden", elem_id="source-open")


def build_app(settings: Settings, advisor: Advisor | None = None, runtime: Runtime | None = None) -> gr.Blocks:
    """The whole page; models start loading in the background right away.

    Extractive answers run in answer worker processes (``web.answer_workers``), each with its own Advisor
    built from ``settings``; an ``advisor`` handed in answers in this process instead. ``runtime``: one the
    caller built (and closes).
    """
    if runtime is None:
        runtime = Runtime(settings, advisor or Advisor(settings), workers=0 if advisor is not None else None)
    rt = runtime
    ui, lang = Page(), "en"
    # One secret per process: stored conversations survive reloads, not server restarts.
    secret = secrets.token_hex(16)
    with gr.Blocks(title="Slurm × Kubernetes Advisor", analytics_enabled=False) as demo:
        ui.conv = gr.State(empty_conversation())
        ui.conv_store = gr.BrowserState(empty_conversation(), storage_key=CONVERSATION_KEY, secret=secret)
        ui.lang_store = gr.BrowserState("en", storage_key="advisor-lang", secret=secret)
        ui.voted = gr.State(None)
        ui.rec = gr.State(None)
        _header(ui, rt, lang)
        with gr.Tabs():
            with gr.Tab(t("tab_chat", lang), id="chat") as ui.tab_chat:
                _chat_tab(ui, rt, settings, lang)
            with gr.Tab(t("tab_helper", lang), id="helper") as ui.tab_helper:
                _helper_tab(ui, lang)
            with gr.Tab(t("tab_library", lang), id="library") as ui.tab_library:
                ui.library = gr.Markdown(elem_id="library")
                with gr.Accordion(t("rules_panel", lang), open=False, elem_id="rules-box") as ui.rules_box:
                    ui.rules = gr.Markdown(elem_id="rules")
        _source_panel(ui, lang)
        wire(ui, rt, demo)
    # Questions skip this queue's limits (they are bounded by web.max_pending); the size bounds the rest.
    demo.queue(default_concurrency_limit=settings.web.concurrency, max_size=settings.web.concurrency * 16)
    return demo


def launch_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for ``Blocks.launch``: loopback by default, never shared, no extra paths."""
    return {
        "css": CSS,
        "head": HEAD,
        "server_name": settings.web.host,
        "server_port": settings.web.port,
        "share": False,
        "ssr_mode": False,
        "enable_monitoring": False,
        "mcp_server": False,
        "pwa": False,
        "show_error": False,
        # Run history would keep questions in the browser and offers uploading them to a hub bucket.
        "run_history": False,
        "footer_links": ["api", "settings"],
    }
