"""The web UI's event wiring: which user action runs which handler, and what it updates.

Asking: Ask (or Enter) hides Ask and shows Stop, streams the answer, then swaps them back; Stop ends the
answer through its handler (what arrived stays on screen and in the conversation, marked stopped and
unrated; the question goes back into the box) — never Gradio's cancel, which leaves error badges. New chat and the chat's 🗑
both clear the conversation — on screen, in the server-side state used for follow-ups, and in the
browser's stored copy — so the next question starts fresh and a reload does not bring the old one back.
A 👍/👎 opens the comment box next to that answer; clicking a source's title opens the source panel.
The language toggle relabels every component (``relabel``) and says a shown recommendation again in the
new language; changing an answer of the questionnaire updates a shown recommendation.

Deliberately left out: the layout (``app.web.ui``) and what the handlers do (``app.web.handlers``).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gradio as gr
from gradio.components.chatbot import ExampleMessage

from app.web import exports, render
from app.web.handlers import Conversation, Runtime, empty_conversation
from app.web.i18n import as_lang, form_facets, question_choices, question_label, t

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


class Page(SimpleNamespace):
    """The page's components, so the builders, the wiring and the language toggle can reach them by name."""


def chat_examples(lang: str) -> list[ExampleMessage]:
    return [{"text": q} for q in EXAMPLES[as_lang(lang)]]


def relabel(rt: Runtime, lang_value: str, backend: str | None = None) -> list[Any]:
    """Every label of the page in the chosen language (outputs in ``relabel_targets`` order)."""
    lang = as_lang(lang_value)
    return [
        lang,
        t("title", lang),
        t("intro", lang),
        rt.status(lang),
        gr.update(label=t("tab_chat", lang)),
        gr.update(label=t("tab_helper", lang)),
        gr.update(label=t("tab_library", lang)),
        gr.update(placeholder=t("chat_placeholder", lang), examples=chat_examples(lang)),
        gr.update(placeholder=t("placeholder", lang)),
        gr.update(value=t("ask", lang)),
        gr.update(value=t("stop", lang)),
        gr.update(value=t("clear", lang)),
        gr.update(label=t("comment", lang)),
        gr.update(value=t("save_comment", lang)),
        gr.update(value=t("close", lang)),
        gr.update(value=t("close", lang)),
        gr.update(label=t("settings", lang)),
        gr.update(
            label=t("backend", lang), info=t("backend_info", lang), choices=rt.backend_choices(lang, chosen=backend)
        ),
        gr.update(label=t("k", lang)),
        gr.update(value=t("refresh", lang)),
        gr.update(value=t("export_chat", lang)),
        gr.update(label=t("passages_panel", lang)),
        t("helper_intro", lang),
        *(gr.update(label=question_label(f, lang), choices=question_choices(f, lang)) for f in form_facets()),
        gr.update(value=t("recommend", lang)),
        gr.update(value=t("export_rec", lang)),
        gr.update(label=t("rules_panel", lang)),
    ]


def relabel_targets(ui: Page) -> list[Any]:
    return [
        ui.lang_store, ui.title, ui.intro, ui.status, ui.tab_chat, ui.tab_helper, ui.tab_library, ui.chatbot,
        ui.question, ui.send, ui.stop, ui.clear, ui.comment, ui.save_comment, ui.close_feedback, ui.close_source,
        ui.settings_box, ui.backend, ui.k, ui.refresh, ui.export_chat, ui.passages_box, ui.helper_intro, *ui.profile,
        ui.recommend, ui.export_rec, ui.rules_box,
    ]  # fmt: skip


def _busy() -> tuple[Any, Any]:
    return gr.update(visible=False), gr.update(visible=True)  # Ask, Stop


def _idle() -> tuple[Any, Any]:
    return gr.update(visible=True), gr.update(visible=False)


# Where the browser keeps the conversation (gr.BrowserState's localStorage key).
CONVERSATION_KEY = "advisor-conversation"
# Clearing drops the stored conversation in the browser at once: the server's reply writes the empty one
# too, but a reload before it arrives would otherwise bring the old conversation back.
_FORGET_STORED = f"(lang) => {{ try {{ localStorage.removeItem('{CONVERSATION_KEY}'); }} catch (e) {{}} return lang; }}"


def _finish(conv: Conversation) -> tuple[Any, ...]:
    """After an answer: the conversation to browser-local storage (a reload brings it back), Ask back."""
    return (conv, *_idle())


def _wire_chat(ui: Page, rt: Runtime) -> None:
    chat_inputs = [ui.question, ui.backend, ui.k, ui.lang, ui.conv]
    chat_outputs = [ui.question, ui.chatbot, ui.passages, ui.feedback_note, ui.conv]
    private: dict[str, Any] = {"api_visibility": "private", "show_progress": "hidden"}
    for trigger, api in ((ui.send.click, {"api_name": "ask"}), (ui.question.submit, {"api_visibility": "private"})):
        started = trigger(_busy, None, [ui.send, ui.stop], queue=False, **private)
        # No limit in Gradio's queue: the handler awaits the answering, which bounds what may wait itself
        # and says when it is busy (app.web.answering).
        answer = started.then(rt.respond, chat_inputs, chat_outputs, concurrency_limit=None, **api)
        answer.then(_finish, ui.conv, [ui.conv_store, ui.send, ui.stop], **private)

    def stop(request: gr.Request) -> tuple[Any, ...]:
        rt.stop(request)
        return _idle()

    # Stop ends the answer through the handler, not Gradio's cancel (which paints every output with an
    # error badge that blocks the box): what arrived stays, marked stopped, and the question is back in the box.
    ui.stop.click(stop, None, [ui.send, ui.stop], queue=False, **private)

    def reset(lang: str, request: gr.Request) -> tuple[Any, ...]:
        rt.stop(request, discard=True)  # an answer still on its way belongs to the old conversation
        empty = empty_conversation()
        hidden = gr.update(visible=False)
        return [], empty, empty, render.passages_markdown([], lang), hidden, "", hidden, *_idle()

    cleared = [ui.chatbot, ui.conv, ui.conv_store, ui.passages, ui.feedback_box, ui.feedback_note, ui.source_panel]
    for trigger in (ui.clear.click, ui.chatbot.clear):  # "New chat" and the chat's own 🗑 do the same
        trigger(reset, ui.lang, [*cleared, ui.send, ui.stop], js=_FORGET_STORED, queue=False, **private)

    def example(selected: gr.SelectData) -> str:
        value = selected.value
        return str(value.get("text", "")) if isinstance(value, dict) else str(value)

    # An example is asked at once (filling the box alone left the user to find Ask).
    ui.chatbot.example_select(example, None, ui.question, **private).then(
        None, None, None, js="() => { setTimeout(() => document.querySelector('#send')?.click(), 0); }", **private
    )


def _wire_feedback_and_sources(ui: Page, rt: Runtime) -> None:
    private: dict[str, Any] = {"api_visibility": "private"}
    ui.chatbot.like(rt.vote, [ui.conv, ui.lang], [ui.feedback_box, ui.feedback_note, ui.voted], **private)
    ui.save_comment.click(
        rt.comment, [ui.comment, ui.conv, ui.voted, ui.lang], [ui.feedback_note, ui.comment], **private
    )
    ui.close_feedback.click(lambda: gr.update(visible=False), None, ui.feedback_box, **private)
    ui.source_open.click(
        rt.open_source, [ui.source_request, ui.conv, ui.rec, ui.lang], [ui.source_panel, ui.source_view], **private
    )
    ui.close_source.click(lambda: gr.update(visible=False), None, ui.source_panel, **private)


def wire(ui: Page, rt: Runtime, demo: gr.Blocks) -> None:
    _wire_chat(ui, rt)
    _wire_feedback_and_sources(ui, rt)
    private: dict[str, Any] = {"api_visibility": "private"}
    ui.export_chat.click(exports.export_conversation, [ui.conv, ui.lang], ui.chat_file, api_name="export_conversation")
    ui.recommend.click(rt.recommend, [ui.lang, *ui.profile], [ui.recommendation, ui.rec], api_name="recommend")
    # Once there is a recommendation, changing an answer updates it (the last change wins).
    for radio in ui.profile:
        radio.input(
            rt.rerecommend, [ui.lang, ui.rec, *ui.profile], [ui.recommendation, ui.rec], trigger_mode="always_last",
            **private,
        )  # fmt: skip
    ui.export_rec.click(exports.export_recommendation, [ui.rec, ui.lang], ui.rec_file, **private)
    # Export shows once there is a recommendation to export.
    ui.rec.change(lambda rec: gr.update(visible=bool(rec)), ui.rec, ui.export_rec, **private)
    ui.tab_library.select(rt.library, ui.lang, [ui.library, ui.rules], api_name="library")
    # Status is cheap (pointer metadata), so it skips the answer queue's concurrency limit.
    ui.refresh.click(rt.status, ui.lang, ui.status, api_name="status", concurrency_limit=None)
    ui.refresh.click(rt.backend_update, [ui.lang, ui.backend], ui.backend, concurrency_limit=None, **private)
    timer = gr.Timer(STATUS_EVERY_S)
    timer.tick(rt.status, ui.lang, ui.status, show_progress="hidden", concurrency_limit=None, **private)
    timer.tick(rt.backend_update, [ui.lang, ui.backend], ui.backend, show_progress="hidden", **private)
    relabelled = ui.lang.change(lambda v, b: relabel(rt, v, b), [ui.lang, ui.backend], relabel_targets(ui), **private)
    # The recommendation shown is said again in the new language.
    relabelled.then(rt.rerecommend, [ui.lang, ui.rec, *ui.profile], [ui.recommendation, ui.rec], **private)

    def restore(conv: dict[str, Any] | None, stored_lang: str | None) -> tuple[Any, ...]:
        """A reload: the conversation and language come back from browser-local storage."""
        conv = conv if isinstance(conv, dict) and "messages" in conv else empty_conversation()
        return conv["messages"], conv, as_lang(stored_lang)

    demo.load(restore, [ui.conv_store, ui.lang_store], [ui.chatbot, ui.conv, ui.lang], **private)
    demo.load(rt.status, ui.lang, ui.status, show_progress="hidden", concurrency_limit=None, **private)
    demo.load(rt.backend_update, [ui.lang, ui.backend], ui.backend, show_progress="hidden", **private)
