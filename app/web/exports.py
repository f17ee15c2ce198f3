"""The files a user downloads: the conversation and the questionnaire's recommendation, as Markdown.

Each handler takes the browser's state and gives a ``gr.File`` update: shown with the file when there is
something to export, hidden otherwise. The text itself is rendered by ``app.web.panels``.

Deliberately left out: rendering (``app.web.panels``), the chat (``app.web.handlers``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gradio as gr

from app.models import Answer, Recommendation
from app.web import panels as web_panels


def export_conversation(conv: dict[str, Any] | None, lang: str) -> Any:
    conv = conv or {"turns": [], "answers": {}}
    questions = [turn["content"] for turn in conv["turns"] if turn["role"] == "user"]
    answers = [Answer.model_validate(a["answer"]) for _, a in sorted(conv["answers"].items(), key=lambda x: int(x[0]))]
    if not questions:
        return gr.update(value=None, visible=False)
    return gr.update(
        value=_write("conversation.md", web_panels.conversation_export(questions, answers, lang)), visible=True
    )


def export_recommendation(rec: dict[str, Any] | None, lang: str) -> Any:
    if not rec:
        return gr.update(value=None, visible=False)
    text = web_panels.recommendation_export(Recommendation.model_validate(rec), lang)
    return gr.update(value=_write("recommendation.md", text), visible=True)


def _write(name: str, text: str) -> str:
    """A file for the browser to download (Gradio copies it to its own cache and serves it from there)."""
    path = Path(tempfile.mkdtemp(prefix="advisor-export-")) / name
    path.write_text(text, encoding="utf-8")
    return str(path)
