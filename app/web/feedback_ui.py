"""The chat's 👍/👎 and comment handlers: each rating is stored in the feedback database at once.

``FeedbackHandlers`` is mixed into the UI's ``Runtime`` (``app.web.handlers``), which gives it the settings
and the ``LazyStore``. A rating replaces an earlier one on the same answer (its message id); a comment is
saved with the rating it follows. When the database cannot be reached, the user is told the rating was not
saved, and the server log says why.

Deliberately left out: storage (``app.web.feedback_db``) and the HTTP API (``app.web.http_api``).
"""

from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from app.models import Answer
from app.web.feedback import Rating, make_record
from app.web.feedback_db import LazyStore, StoreError
from app.web.i18n import t

log = logging.getLogger(__name__)


def _entry(conv: dict[str, Any] | None, index: object) -> dict[str, Any] | None:
    """The stored answer of chat message ``index`` (``{"id", "answer"}``), if the conversation has it."""
    entry = ((conv or {}).get("answers") or {}).get(str(index))
    return entry if isinstance(entry, dict) else None


class FeedbackHandlers:
    feedback: LazyStore

    def vote(self, conv: dict[str, Any] | None, lang: str, like: gr.LikeData) -> tuple[Any, str, Any]:
        """A 👍/👎 on one answer: stored (replacing an earlier vote on it); opens the comment box by it."""
        index = like.index if isinstance(like.index, int) else like.index[0]
        entry = _entry(conv, index)
        if entry is None or like.liked not in (True, False):
            return gr.skip(), t("vote_first", lang), gr.skip()
        rating: Rating = "up" if like.liked else "down"
        if not self._save(Answer.model_validate(entry["answer"]), rating, "", entry["id"]):
            return gr.skip(), t("feedback_failed", lang), gr.skip()
        return gr.update(visible=True), t("vote_saved", lang), {"index": index, "rating": rating}

    def comment(
        self, text: str, conv: dict[str, Any] | None, voted: dict[str, Any] | None, lang: str
    ) -> tuple[str, Any]:
        entry = _entry(conv, voted["index"]) if voted else None
        if not voted or entry is None:
            return t("vote_first", lang), gr.skip()
        if not self._save(Answer.model_validate(entry["answer"]), voted["rating"], text or "", entry["id"]):
            return t("feedback_failed", lang), gr.skip()
        return t("comment_saved", lang), ""

    def _save(self, answer: Answer, rating: Rating, comment: str, message_id: str) -> bool:
        try:
            self.feedback.get().save(make_record(answer, rating, comment, message_id=message_id))
            return True
        except StoreError:
            log.exception("feedback not saved")
            return False
