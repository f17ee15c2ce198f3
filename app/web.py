"""The Gradio web UI: chat with cited, streamed answers, passages panel, feedback and the platform helper.

``build_app(settings, advisor)`` builds the page and starts loading models in a background thread, so
the page is usable at once and the status line says "loading" until the models are ready. Handlers
are thin: they call the ``Advisor`` and hand its ``Answer`` to ``app.render`` (which escapes every
user or document string). ``main()`` only parses ``app [--host] [--port] [--auth user:pass]`` and launches.

Safe defaults: bound to ``settings.web.host`` (loopback), never shared, analytics off, no ``allowed_paths``
(nothing served beyond the UI's own assets), bounded concurrency through the queue, optional login.

Deliberately left out: answer logic (``app.pipeline``), rendering (``app.render``) and any state beyond
one browser session — each session keeps its own conversation in ``gr.State``.
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Iterator
from typing import Any

import gradio as gr

from app import render
from app.feedback import Rating, record_feedback
from app.models import Answer, Turn
from app.pipeline import Advisor, QuestionError
from app.platform_helper import Choices, run
from ingest.settings import Settings, settings_or_exit
from ingest.store import IndexUnavailable

log = logging.getLogger(__name__)

WARM_UP_WAIT_S = 300.0  # a question waits this long for the models before giving up
STATUS_EVERY_S = 10.0
_SHOWN_QUESTION_CHARS = 600  # an over-long question is echoed shortened; the error states the limit

EXAMPLES = [
    "オンプレミスのGPUクラスタでLLMの分散学習をするなら、SlurmとKubernetesのどちらがよいですか？",
    "Which should we choose for distributed LLM training on an on-premises GPU cluster: Slurm or Kubernetes?",
    "KubernetesでGPUの利用率を上げるためのスケジューラには何がありますか？",
    "How does gang scheduling work for multi-node training on Kubernetes?",
]
BACKENDS = [("Extractive (offline) · 抽出型", "extractive"), ("OpenAI-compatible", "openai"), ("Ollama", "ollama")]
HELPER_OPTIONS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "where": (
        "Where does it run? · 実行環境",
        [("On-premises · オンプレミス", "on_prem"), ("Cloud · クラウド", "cloud")],
    ),
    "workload": (
        "Workload · ワークロード",
        [("Training only · 学習のみ", "training"), ("Training and serving · 学習と推論", "training_serving")],
    ),
    "fleet": ("GPU fleet · GPU台数", [("Fixed · 固定", "fixed"), ("Elastic · 伸縮", "elastic")]),
    "hpc": (
        "Team's HPC experience · チームのHPC経験",
        [("Experienced · 経験あり", "experienced"), ("New to HPC · 経験なし", "new")],
    ),
    "ops": ("Ops headcount · 運用体制", [("1–2 people · 1〜2人", "small"), ("Dedicated team · 専任チーム", "large")]),
    "priority": (
        "What matters most? · 最も重視すること",
        [
            ("GPU utilisation and cost · GPU利用率とコスト", "utilisation"),
            ("Integration with the stack · 統合", "integration"),
        ],
    ),
    "lang": ("Ask the knowledge base in · 質問の言語", [("English", "en"), ("日本語", "ja")]),
}


# Gradio 6 takes CSS at launch; kept here so every launch (main and tests) looks the same.
CSS = """
#passages th, #passages td:nth-child(-n+4) { white-space: nowrap; }
#chat .source { margin: 0.35em 0; }
#chat sup.cite a, #recommendation sup.cite a { text-decoration: none; font-weight: 600; }
#index-status p { margin: 0; }
"""


class _Runtime:
    """The advisor plus whether its models are loaded (set by the background warm-up)."""

    def __init__(self, settings: Settings, advisor: Advisor) -> None:
        self.settings = settings
        self.advisor = advisor
        self.ready = threading.Event()
        self.model_error: str | None = None
        threading.Thread(target=self._warm_up, name="advisor-warm-up", daemon=True).start()

    def _warm_up(self) -> None:
        try:
            self.advisor.warm_up()
        except IndexUnavailable:
            pass  # the models loaded; only the index is missing, which the status line reports itself
        except Exception as exc:
            log.exception("warm-up failed")
            self.model_error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ready.set()

    def status(self) -> str:
        if not self.ready.is_set():
            return render.status_line(None, loading=True)
        if self.model_error:
            return render.status_error(f"the models failed to load ({self.model_error}); see the server log")
        try:
            return render.status_line(self.advisor.status())
        except IndexUnavailable as exc:
            return render.status_error(str(exc))
        except Exception as exc:
            log.exception("status failed")
            return render.status_error(type(exc).__name__)

    def respond(
        self, question: str, messages: list[dict[str, Any]], turns: list[dict[str, str]], backend: str, k: float
    ) -> Iterator[tuple[Any, ...]]:
        """Chat handler: yields (textbox, chatbot, passages, feedback note, messages, turns, last answer)."""
        question = question or ""
        if not question.strip():
            yield (gr.skip(),) * 7
            return
        shown = question if len(question) <= _SHOWN_QUESTION_CHARS else question[:_SHOWN_QUESTION_CHARS] + " …"
        messages = [*messages, {"role": "user", "content": render.question_markdown(shown)}]
        key = f"a{len(messages)}"
        waiting = "…" if self.ready.is_set() else "⏳ Models are still loading… · モデルを読み込み中…"
        messages.append({"role": "assistant", "content": waiting})
        # A new question: the feedback buttons no longer refer to the previous answer.
        yield "", messages, gr.skip(), "", messages, turns, None
        self.ready.wait(WARM_UP_WAIT_S)
        final: Answer | None = None
        try:
            history = [Turn.model_validate(t) for t in turns]
            for partial in self.advisor.stream(question, history, backend=backend, k=int(k)):
                final = partial
                messages[-1] = {"role": "assistant", "content": render.answer_markdown(partial, key, partial=True)}
                yield "", messages, gr.skip(), gr.skip(), messages, turns, None
        except QuestionError as exc:
            messages[-1] = {"role": "assistant", "content": render.question_error(str(exc), self._limit)}
        except IndexUnavailable as exc:
            messages[-1] = {"role": "assistant", "content": render.index_error(str(exc))}
        except Exception as exc:
            log.exception("answering failed")
            messages[-1] = {"role": "assistant", "content": render.internal_error(exc)}
        if final is None:
            yield "", messages, gr.skip(), gr.skip(), messages, turns, None
            return
        messages[-1] = {"role": "assistant", "content": render.answer_markdown(final, key)}
        turns = [*turns, {"role": "user", "content": question}, {"role": "assistant", "content": final.answer}]
        yield "", messages, render.passages_markdown(final.passages), gr.skip(), messages, turns, final.model_dump()

    @property
    def _limit(self) -> int:
        return self.settings.answer.max_question_chars

    def feedback(self, rating: Rating, comment: str, last: dict[str, Any] | None) -> tuple[str, Any]:
        if not last:
            return "_Ask a question first, then rate its answer. · まず質問してください。_", gr.skip()
        record_feedback(self.settings.web.feedback_path, Answer.model_validate(last), rating, comment or "")
        thanks = "👍" if rating == "up" else "👎"
        return f"{thanks} Thank you — feedback saved. · フィードバックを保存しました。", ""

    def recommend(self, *values: Any) -> Iterator[str]:
        """Platform helper: questionnaire values (incl. lang), backend, k → progress, then the recommendation."""
        *choice_values, backend, k = values
        choices = Choices.model_validate(dict(zip(HELPER_OPTIONS, choice_values, strict=True)))
        if not self.ready.is_set():
            yield "⏳ Models are still loading… · モデルを読み込み中…"
            self.ready.wait(WARM_UP_WAIT_S)
        try:
            for done, total, rec in run(choices, lambda q: self.advisor.ask(q, backend=backend, k=int(k))):
                if rec is None:
                    yield f"⏳ Asking the knowledge base ({done + 1}/{total})… · ナレッジベースに質問中…"
                else:
                    yield render.recommendation_markdown(rec, key="ph")
        except IndexUnavailable as exc:
            yield render.index_error(str(exc))
        except Exception as exc:
            log.exception("platform helper failed")
            yield render.internal_error(exc)


def build_app(settings: Settings, advisor: Advisor | None = None) -> gr.Blocks:
    """The whole page; models start loading in the background right away."""
    rt = _Runtime(settings, advisor or Advisor(settings))
    with gr.Blocks(title="Slurm × Kubernetes Advisor", analytics_enabled=False) as demo:
        gr.Markdown(
            "# Slurm × Kubernetes Advisor · Slurm×K8s アドバイザー\n"
            "Ask about running distributed LLM training on Slurm or Kubernetes — every answer cites the "
            "knowledge base. · LLM分散学習の基盤選びについて質問してください。回答には出典が付きます。"
        )
        with gr.Row(equal_height=True):
            status = gr.Markdown(rt.status(), elem_id="index-status")
            refresh = gr.Button("🔄 Refresh · 更新", size="sm", scale=0, elem_id="refresh-status")
        messages = gr.State([])
        turns = gr.State([])
        last = gr.State(None)
        with gr.Tabs():
            with gr.Tab("💬 Ask · 質問", id="chat"):
                with gr.Row():
                    with gr.Column(scale=3):
                        chatbot = gr.Chatbot(
                            label="Conversation · 会話",
                            height=560,
                            latex_delimiters=[],
                            feedback_options=None,
                            buttons=["copy"],
                            elem_id="chat",
                            placeholder=(
                                "**Ask a question below or pick an example.** Answers quote the knowledge base "
                                "with numbered sources.<br>下の欄に質問するか、質問例を選んでください。"
                                "回答には番号付きの出典が付きます。"
                            ),
                        )
                        question = gr.Textbox(
                            show_label=False,
                            placeholder="Ask in English or 日本語… · 英語または日本語で質問してください",
                            max_lines=8,
                            elem_id="question",
                        )
                        with gr.Row():
                            send = gr.Button("Ask · 質問する", variant="primary", elem_id="send")
                            clear = gr.Button("Clear · クリア", elem_id="clear")
                        gr.Examples([[q] for q in EXAMPLES], inputs=[question], label="Examples · 質問例")
                    with gr.Column(scale=1):
                        with gr.Accordion("Settings · 設定", open=True):
                            backend = gr.Radio(
                                BACKENDS, value=settings.answer.backend, label="Answer backend · 回答方式"
                            )
                            k = gr.Slider(
                                1, 20, value=settings.retrieval.top_k, step=1, label="Passages · 参照するパッセージ数"
                            )
                        with gr.Group():
                            gr.Markdown("**Was the last answer helpful? · 直前の回答は役に立ちましたか？**")
                            comment = gr.Textbox(
                                label="Comment (optional) · コメント（任意）", lines=2, elem_id="feedback-comment"
                            )
                            with gr.Row():
                                up = gr.Button("👍 Helpful · 役立った", elem_id="thumbs-up", min_width=100)
                                down = gr.Button("👎 Not helpful · 改善が必要", elem_id="thumbs-down", min_width=100)
                            feedback_note = gr.Markdown(elem_id="feedback-status")
                with gr.Accordion(
                    "Retrieved passages and scores · 検索されたパッセージとスコア", open=False, elem_id="passages"
                ):
                    passages = gr.Markdown(render.passages_markdown([]))
            with gr.Tab("🧭 Which platform? · どちらの基盤？", id="helper"):
                gr.Markdown(
                    "Answer a few questions; each choice becomes a question to the knowledge base, and the "
                    "cited verdicts are weighed (your top priority counts double). · いくつかの質問に答えると、"
                    "ナレッジベースの出典付きの判定を重み付けして推奨を示します。"
                )
                with gr.Row():
                    with gr.Column(scale=1):
                        helper_inputs = [
                            gr.Radio(options, value=options[0][1], label=label)
                            for label, options in HELPER_OPTIONS.values()
                        ]
                        recommend_btn = gr.Button("Recommend · 推奨を表示", variant="primary", elem_id="recommend")
                    with gr.Column(scale=2):
                        recommendation = gr.Markdown(elem_id="recommendation")

        chat_outputs = [question, chatbot, passages, feedback_note, messages, turns, last]
        chat_inputs = [question, messages, turns, backend, k]
        send.click(rt.respond, chat_inputs, chat_outputs, api_name="ask")
        question.submit(rt.respond, chat_inputs, chat_outputs, api_visibility="private")

        def reset() -> tuple[Any, ...]:
            return [], [], [], render.passages_markdown([]), None, ""

        clear.click(reset, None, [chatbot, messages, turns, passages, last, feedback_note], api_visibility="private")

        def thumbs_up(comment_text: str, last_answer: dict[str, Any] | None) -> tuple[str, Any]:
            return rt.feedback("up", comment_text, last_answer)

        def thumbs_down(comment_text: str, last_answer: dict[str, Any] | None) -> tuple[str, Any]:
            return rt.feedback("down", comment_text, last_answer)

        up.click(thumbs_up, [comment, last], [feedback_note, comment], api_visibility="private")
        down.click(thumbs_down, [comment, last], [feedback_note, comment], api_visibility="private")
        recommend_btn.click(rt.recommend, [*helper_inputs, backend, k], recommendation, api_name="recommend")
        # Status is cheap (pointer metadata), so it skips the answer queue's concurrency limit.
        refresh.click(rt.status, None, status, api_name="status", concurrency_limit=None)
        gr.Timer(STATUS_EVERY_S).tick(
            rt.status, None, status, show_progress="hidden", concurrency_limit=None, api_visibility="private"
        )
        demo.load(rt.status, None, status, show_progress="hidden", concurrency_limit=None, api_visibility="private")
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
