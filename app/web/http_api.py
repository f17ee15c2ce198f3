"""HTTP endpoints beside the web UI, on the same server: a health probe and the feedback API.

- ``GET /healthz`` — 200 ``{"status": "ok", "generation", "documents", "answer_workers", "answering"}`` when
  this process can answer; 503 ``{"status": "unavailable", "reason"}`` while the models load, when they
  failed, when the index is unavailable, when every answer worker is down, or when the feedback database
  cannot be reached. Always open (a load balancer probes it without a login).
- ``POST /api/feedback`` — JSON ``{"message_id", "question", "answer", "rating": "up"|"down", "comment"?,
  "citations"?, "language"?, "backend"?}`` → 201 with the stored record (a later rating of the same
  message id replaces it). Bad input → 400 (not JSON) or 422 ``{"error": "one line naming each bad field"}``,
  and nothing is stored. 503 when the database is unreachable.
- ``GET /api/feedback`` — every record, oldest first, as JSON Lines (``application/x-ndjson``).

The feedback endpoints need HTTP Basic credentials of a user of the users file when logins are required
(``app.web.access``), and are throttled like the login page.

Deliberately left out: deleting or editing ratings, paging the export, and answering questions over this
API (Gradio's own API does that, at ``/gradio_api``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from app.models import CitedSource
from app.web.feedback import MAX_COMMENT_CHARS, FeedbackRecord, records_jsonl
from app.web.feedback_db import StoreError
from ingest.store import IndexUnavailable

if TYPE_CHECKING:
    from app.web.handlers import Runtime

MAX_MESSAGE_ID_CHARS = 200
MAX_TEXT_CHARS = 100_000


class FeedbackIn(BaseModel):
    """What a client posts: one rating of one answer."""

    model_config = ConfigDict(extra="forbid")

    message_id: str = Field(min_length=1, max_length=MAX_MESSAGE_ID_CHARS)
    question: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    answer: str = Field(max_length=MAX_TEXT_CHARS)
    rating: Literal["up", "down"]
    comment: str = Field("", max_length=MAX_COMMENT_CHARS)
    citations: list[CitedSource] = Field(default_factory=list)
    language: Literal["en", "ja"] = "en"
    backend: str = Field("api", max_length=40)

    def record(self, now: datetime | None = None) -> FeedbackRecord:
        stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return FeedbackRecord(timestamp=stamp, **self.model_dump(exclude={"comment"}), comment=self.comment.strip())


def describe(exc: ValidationError) -> str:
    """One line naming every bad field: ``rating: Input should be 'up' or 'down'; comment: ...``."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "body"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        elif error["type"] == "missing":
            message = "required"
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def health(rt: Runtime) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) of the health probe; see the module docstring."""
    if not rt.ready.is_set():
        return 503, {"status": "unavailable", "reason": "starting: loading the models and the index"}
    if rt.model_error:
        return 503, {"status": "unavailable", "reason": f"the models failed to load ({rt.model_error})"}
    try:
        info = rt.advisor.status()
    except IndexUnavailable as exc:
        return 503, {"status": "unavailable", "reason": str(exc)}
    if info is None:
        return 503, {"status": "unavailable", "reason": "the index is empty — run `ingest` first"}
    live = rt.answering.live_workers()
    if rt.answering.pool is not None and live == 0:
        return 503, {"status": "unavailable", "reason": "no answer worker is running (they are being restarted)"}
    try:
        rt.feedback.get().ping()
    except StoreError as exc:
        return 503, {"status": "unavailable", "reason": str(exc)}
    return 200, {
        "status": "ok",
        "generation": info.generation,
        "documents": info.documents,
        "answer_workers": live,
        "answering": rt.answering.mode,
    }


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def api_router(rt: Runtime, require_user: Any = None) -> APIRouter:
    """The endpoints, bound to ``rt``; ``require_user`` (a FastAPI dependency) guards the feedback ones."""
    router = APIRouter()
    guarded = [Depends(require_user)] if require_user is not None else []

    @router.get("/healthz")
    def healthz() -> JSONResponse:
        status, body = health(rt)
        return JSONResponse(body, status_code=status)

    @router.post("/api/feedback", dependencies=guarded)
    async def post_feedback(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the body must be a JSON object (Content-Type: application/json)")
        if not isinstance(body, dict):
            return _error(400, "the body must be a JSON object")
        try:
            record = FeedbackIn.model_validate(body).record()
        except ValidationError as exc:
            return _error(422, describe(exc))
        try:
            stored = await run_in_threadpool(lambda: rt.feedback.get().save(record))
        except StoreError as exc:
            return _error(503, f"not stored: {exc}", {"Retry-After": "5"})
        return JSONResponse(stored.model_dump(mode="json"), status_code=201)

    @router.get("/api/feedback", dependencies=guarded)
    async def get_feedback() -> Response:
        try:
            records = await run_in_threadpool(lambda: rt.feedback.get().all())
        except StoreError as exc:
            return _error(503, str(exc), {"Retry-After": "5"})
        return Response(records_jsonl(records), media_type="application/x-ndjson; charset=utf-8")

    return router
