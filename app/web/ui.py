"""The Gradio web UI: page layout and event wiring; ``main()`` only parses flags and launches.

``build_app(settings, advisor)`` builds the page — chat with cited, streamed answers (stop button,
per-answer 👍/👎 with a comment, export as Markdown, kept across reloads in browser-local storage),
the passages panel, the questionnaire, and the document library with the decision rules — in one
UI language at a time (EN/JA toggle). Handlers live in ``app.web.handlers``; strings in ``app.web.i18n``.

Safe defaults: bound to ``settings.web.host`` (loopback), never shared, analytics off, no ``allowed_paths``
(nothing served beyond the UI's own assets and exported files), bounded concurrency, optional login.

Deliberately left out: answer logic (``app.pipeline``) and rendering (``app.web.render``, ``app.web.panels``).
"""

from __future__ import annotations

import argparse
import logging
import secrets
from types import SimpleNamespace
from typing import Any

import gradio as gr

from app.pipeline import Advisor
from app.web import render
from app.web.handlers import Runtime, empty_conversation
from app.web.i18n import LANGS, QUESTIONS, UNSET, as_lang, question_choices, question_label, t
from core.settings import Settings, settings_or_exit

STATUS_EVERY_S = 10.0
EXAMPLES = {
    "en": [
        "Which should we choose for distributed LLM training on an on-premises GPU cluster: Slurm or Kubernetes?",
        "How does gang scheduling work for multi-node training on Kubernetes?",
    ],
    "ja": [
        "オンプレミスのGPUクラスタでLLMの分散学習をするなら、SlurmとKubernetesのどちらがよいですか？",
        "KubernetesでGPUの利用率を上げるためのスケジューラには何がありますか？",
    ],
}

# Gradio 6 takes CSS and head at launch; kept here so every launch (main and tests) looks the same.
CSS = """
#chat .source { margin: 0.35em 0; scroll-margin-top: 4em; border-radius: 6px; padding: 0.1em 0.3em; }
#chat .source:target, #chat .source.flash { background: var(--color-accent-soft); outline: 2px solid var(--color-accent); }
#chat sup.cite a, #recommendation sup.cite a { text-decoration: none; font-weight: 600; }
#chat .badge, #passages .badge { font-size: 0.8em; padding: 0 0.4em; border-radius: 4px; background: var(--block-label-background-fill); }
#chat .badge.stale { background: #fde68a; color: #000; }
.verdict { font-weight: 700; padding: 0.05em 0.5em; border-radius: 4px; background: var(--color-accent-soft); }
#index-status p { margin: 0; font-size: 0.9em; }
#passages, #library, #rules { overflow-wrap: anywhere; }
#passages table, #passages pre, #library table, .wide-table { display: block; max-width: 100%; overflow-x: auto; }
#examples button.example { white-space: normal; text-align: left; justify-content: flex-start; height: auto; }
#header-row { align-items: center; }
#lang-toggle { max-width: 12em; }
@media (max-width: 640px) {
  #intro { display: none; }
  #chat { height: 46vh !important; }
  #lang-toggle { max-width: none; }
}
"""

# The chat's copy button copies a message's raw content (HTML). Each final answer carries its plain
# text in a comment (render.with_copy_text); this hook copies that instead. Citation jumps also flash
# the target source, since a repeated click on the same [n] does not change :target.
HEAD = r"""
<script>
(() => {
  const clip = navigator.clipboard;
  if (clip && clip.writeText && !clip.__advisorPlain) {
    const write = clip.writeText.bind(clip);
    clip.writeText = (text) => {
      const m = /<!--plain:([A-Za-z0-9+\/=]+)-->/.exec(String(text));
      if (!m) return write(text);
      const bytes = Uint8Array.from(atob(m[1]), (c) => c.charCodeAt(0));
      return write(new TextDecoder().decode(bytes));
    };
    clip.__advisorPlain = true;
  }
  document.addEventListener("click", (event) => {
    const a = event.target.closest && event.target.closest('a[href^="#src-"]');
    if (!a) return;
    const target = document.getElementById(a.getAttribute("href").slice(1));
    if (!target) return;
    event.preventDefault();
    target.scrollIntoView({ behavior: "smooth", block: "center" });
    document.querySelectorAll(".source.flash").forEach((el) => el.classList.remove("flash"));
    target.classList.add("flash");
    const details = target.querySelector("details");
    if (details) details.open = true;
  }, true);
})();
</script>
"""


class _Page(SimpleNamespace):
    """The page's components, so the builders and the language toggle can reach them by name."""


def _header(ui: _Page, rt: Runtime, lang: str) -> None:
    with gr.Row(elem_id="header-row"):
        with gr.Column(scale=4, min_width=200):
            ui.title = gr.Markdown(t("title", lang), elem_id="title")
            ui.intro = gr.Markdown(t("intro", lang), elem_id="intro")
        ui.lang = gr.Radio(LANGS, value=lang, show_label=False, elem_id="lang-toggle", scale=1, min_width=120)
    ui.status = gr.Markdown(rt.status(lang), elem_id="index-status")


def _chat_tab(ui: _Page, rt: Runtime, settings: Settings, lang: str) -> None:
    with gr.Row():
        with gr.Column(scale=3, min_width=300):
            ui.chatbot = gr.Chatbot(
                show_label=False,
                height=520,
                latex_delimiters=[],
                buttons=["copy"],
                elem_id="chat",
                placeholder=t("chat_placeholder", lang),
            )
            ui.question = gr.Textbox(
                show_label=False, placeholder=t("placeholder", lang), max_lines=6, elem_id="question"
            )
            with gr.Row():
                ui.send = gr.Button(t("ask", lang), variant="primary", elem_id="send", min_width=80)
                ui.stop = gr.Button(t("stop", lang), variant="stop", elem_id="stop", min_width=80)
                ui.clear = gr.Button(t("clear", lang), elem_id="clear", min_width=80)
            with gr.Group(visible=False, elem_id="feedback-box") as ui.feedback_box:
                ui.comment = gr.Textbox(label=t("comment", lang), lines=2, elem_id="feedback-comment")
                ui.save_comment = gr.Button(t("save_comment", lang), size="sm", elem_id="save-comment")
            ui.feedback_note = gr.Markdown(elem_id="feedback-status")
            # Plain buttons, not gr.Examples: its table cuts long questions off with "…".
            with gr.Column(elem_id="examples"):
                ui.examples_label = gr.Markdown(f"**{t('examples', lang)}**")
                ui.examples = [gr.Button(q, size="sm", elem_classes=["example"]) for q in EXAMPLES[lang]]
        with gr.Column(scale=1, min_width=240):
            with gr.Accordion(t("settings", lang), open=True, elem_id="settings") as ui.settings_box:
                ui.backend = gr.Radio(
                    rt.backend_choices(lang, check=False), value=settings.answer.backend, label=t("backend", lang)
                )
                ui.k = gr.Slider(1, 20, value=settings.retrieval.top_k, step=1, label=t("k", lang), elem_id="k")
                ui.refresh = gr.Button(t("refresh", lang), size="sm", elem_id="refresh-status")
            ui.export_chat = gr.Button(t("export_chat", lang), size="sm", elem_id="export-chat")
            ui.chat_file = gr.File(visible=False, interactive=False, elem_id="chat-file", show_label=False)
    with gr.Accordion(t("passages_panel", lang), open=False, elem_id="passages") as ui.passages_box:
        ui.passages = gr.Markdown(render.passages_markdown([], lang))


def _helper_tab(ui: _Page, lang: str) -> None:
    ui.helper_intro = gr.Markdown(t("helper_intro", lang))
    with gr.Row():
        with gr.Column(scale=1, min_width=260):
            ui.profile = [
                gr.Radio(question_choices(f, lang), value=UNSET, label=question_label(f, lang), elem_id=f"q-{f}")
                for f in QUESTIONS
            ]
            ui.recommend = gr.Button(t("recommend", lang), variant="primary", elem_id="recommend")
        with gr.Column(scale=2, min_width=280):
            ui.recommendation = gr.Markdown(elem_id="recommendation")
            ui.export_rec = gr.Button(t("export_rec", lang), size="sm", elem_id="export-rec")
            ui.rec_file = gr.File(visible=False, interactive=False, elem_id="rec-file", show_label=False)


def _relabel(rt: Runtime, lang_value: str) -> list[Any]:
    """Every label of the page in the chosen language (outputs in ``_relabel_targets`` order)."""
    lang = as_lang(lang_value)
    return [
        lang,
        t("title", lang),
        t("intro", lang),
        rt.status(lang),
        gr.update(label=t("tab_chat", lang)),
        gr.update(label=t("tab_helper", lang)),
        gr.update(label=t("tab_library", lang)),
        gr.update(placeholder=t("chat_placeholder", lang)),
        gr.update(placeholder=t("placeholder", lang)),
        gr.update(value=t("ask", lang)),
        gr.update(value=t("stop", lang)),
        gr.update(value=t("clear", lang)),
        gr.update(label=t("comment", lang)),
        gr.update(value=t("save_comment", lang)),
        f"**{t('examples', lang)}**",
        *(gr.update(value=q) for q in EXAMPLES[lang]),
        gr.update(label=t("settings", lang)),
        gr.update(label=t("backend", lang), choices=rt.backend_choices(lang)),
        gr.update(label=t("k", lang)),
        gr.update(value=t("refresh", lang)),
        gr.update(value=t("export_chat", lang)),
        gr.update(label=t("passages_panel", lang)),
        t("helper_intro", lang),
        *(gr.update(label=question_label(f, lang), choices=question_choices(f, lang)) for f in QUESTIONS),
        gr.update(value=t("recommend", lang)),
        gr.update(value=t("export_rec", lang)),
        gr.update(label=t("rules_panel", lang)),
    ]


def _relabel_targets(ui: _Page) -> list[Any]:
    return [
        ui.lang_store, ui.title, ui.intro, ui.status, ui.tab_chat, ui.tab_helper, ui.tab_library, ui.chatbot,
        ui.question, ui.send, ui.stop, ui.clear, ui.comment, ui.save_comment, ui.examples_label, *ui.examples, ui.settings_box,
        ui.backend, ui.k, ui.refresh, ui.export_chat, ui.passages_box, ui.helper_intro, *ui.profile,
        ui.recommend, ui.export_rec, ui.rules_box,
    ]  # fmt: skip


def _wire(ui: _Page, rt: Runtime, demo: gr.Blocks) -> None:
    chat_inputs = [ui.question, ui.backend, ui.k, ui.lang, ui.conv]
    chat_outputs = [ui.question, ui.chatbot, ui.passages, ui.feedback_note, ui.conv]

    def persist(conv: dict[str, Any]) -> dict[str, Any]:
        return conv  # server-side state → browser-local storage, so a reload brings the conversation back

    asked = ui.send.click(rt.respond, chat_inputs, chat_outputs, api_name="ask")
    submitted = ui.question.submit(rt.respond, chat_inputs, chat_outputs, api_visibility="private")
    for event in (asked, submitted):
        event.then(persist, ui.conv, ui.conv_store, api_visibility="private", show_progress="hidden")
    # Stop ends a streaming answer; what arrived so far stays on screen and in the conversation.
    ui.stop.click(persist, ui.conv, ui.conv_store, cancels=[asked, submitted], api_visibility="private")
    for example in ui.examples:
        example.click(lambda text: text, example, ui.question, api_visibility="private")

    def reset() -> tuple[Any, ...]:
        empty = empty_conversation()
        return [], empty, empty, render.passages_markdown([]), gr.update(visible=False), ""

    ui.clear.click(
        reset,
        None,
        [ui.chatbot, ui.conv, ui.conv_store, ui.passages, ui.feedback_box, ui.feedback_note],
        api_visibility="private",
    )
    ui.chatbot.like(
        rt.vote, [ui.conv, ui.lang], [ui.feedback_box, ui.feedback_note, ui.voted], api_visibility="private"
    )
    ui.save_comment.click(
        rt.comment, [ui.comment, ui.conv, ui.voted, ui.lang], [ui.feedback_note, ui.comment], api_visibility="private"
    )
    ui.export_chat.click(rt.export_conversation, [ui.conv, ui.lang], ui.chat_file, api_name="export_conversation")
    ui.recommend.click(rt.recommend, [ui.lang, *ui.profile], [ui.recommendation, ui.rec], api_name="recommend")
    ui.export_rec.click(rt.export_recommendation, [ui.rec, ui.lang], ui.rec_file, api_visibility="private")
    ui.tab_library.select(rt.library, ui.lang, [ui.library, ui.rules], api_name="library")
    # Status is cheap (pointer metadata), so it skips the answer queue's concurrency limit.
    ui.refresh.click(rt.status, ui.lang, ui.status, api_name="status", concurrency_limit=None)
    ui.refresh.click(rt.backend_update, ui.lang, ui.backend, api_visibility="private", concurrency_limit=None)
    timer = gr.Timer(STATUS_EVERY_S)
    timer.tick(rt.status, ui.lang, ui.status, show_progress="hidden", concurrency_limit=None, api_visibility="private")
    timer.tick(rt.backend_update, ui.lang, ui.backend, show_progress="hidden", api_visibility="private")
    ui.lang.change(lambda v: _relabel(rt, v), ui.lang, _relabel_targets(ui), api_visibility="private")

    def restore(conv: dict[str, Any] | None, stored_lang: str | None) -> tuple[Any, ...]:
        """A reload: the conversation and language come back from browser-local storage."""
        conv = conv if isinstance(conv, dict) and "messages" in conv else empty_conversation()
        return conv["messages"], conv, as_lang(stored_lang)

    demo.load(restore, [ui.conv_store, ui.lang_store], [ui.chatbot, ui.conv, ui.lang], api_visibility="private")
    demo.load(rt.status, ui.lang, ui.status, show_progress="hidden", concurrency_limit=None, api_visibility="private")
    demo.load(rt.backend_update, ui.lang, ui.backend, show_progress="hidden", api_visibility="private")


def build_app(settings: Settings, advisor: Advisor | None = None) -> gr.Blocks:
    """The whole page; models start loading in the background right away."""
    rt = Runtime(settings, advisor or Advisor(settings))
    ui, lang = _Page(), "en"
    # One secret per process: stored conversations survive reloads, not server restarts.
    secret = secrets.token_hex(16)
    with gr.Blocks(title="Slurm × Kubernetes Advisor", analytics_enabled=False) as demo:
        ui.conv = gr.State(empty_conversation())
        ui.conv_store = gr.BrowserState(empty_conversation(), storage_key="advisor-conversation", secret=secret)
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
        _wire(ui, rt, demo)
    demo.queue(default_concurrency_limit=settings.web.concurrency, max_size=settings.web.concurrency * 16)
    return demo


def parse_auth(value: str | None) -> tuple[str, str] | None:
    """``"user:pass"`` → ``("user", "pass")``; the password may contain ``:``."""
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise ValueError("auth must look like user:password")
    return user, password


def launch_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for ``Blocks.launch``: loopback by default, never shared, no extra paths."""
    return {
        "css": CSS,
        "head": HEAD,
        "server_name": settings.web.host,
        "server_port": settings.web.port,
        "auth": parse_auth(settings.web.auth),
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="app", description="Run the Slurm×K8s Advisor web UI.")
    parser.add_argument("--host", help="address to bind (default: ADVISOR_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default: ADVISOR_PORT or 7860)")
    parser.add_argument("--auth", help="require a login, as user:password (default: ADVISOR_AUTH)")
    args = parser.parse_args(argv)
    # Flags override ADVISOR_* variables and .env and are validated like any other value.
    settings = settings_or_exit("app", {name: value for name, value in vars(args).items() if value is not None})
    options = launch_options(settings)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    build_app(settings).launch(**options)
    return 0
