"""The page's stylesheet and script (``app/web/assets/style.css`` and ``app.js``), read once at import.

Gradio 6 takes CSS and ``<head>`` HTML at launch (``app.web.ui.launch_options``), so every launch — the
``app`` command and the tests — looks and behaves the same. The script adds what Gradio has no component
for: plain-text copy, citation jumps, opening a source title in the source panel, plain-text labels for
screen readers, the question's live character count, placing the comment box by the rated answer, and
taking a "Read as" answer of the questionnaire back to its question in the form.

Deliberately left out: any server-side behaviour (``app.web.wiring``) and the page layout (``app.web.ui``).
"""

from __future__ import annotations

from importlib.resources import files


def _read(name: str) -> str:
    return (files("app.web") / "assets" / name).read_text(encoding="utf-8")


CSS = _read("style.css")
HEAD = f"<script>\n{_read('app.js')}\n</script>\n"
