"""The HTTP API: FastAPI app factory, error mapping, limits and request logs."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from domain.errors import DomainError
from infra.config import Settings
from infra.http.problems import Problem, from_domain, from_problem, problem_response
from infra.http.routes import (
    audit_pages,
    health,
    p2p,
    players,
    reports,
    round_index,
    rounds,
    tables,
)
from infra.logs import get_logger
from infra.store.store import Store
from infra.workers import (
    AbandonedRoundWorker,
    DueChoiceWorker,
    IdleRoundWorker,
    PeriodicWorker,
    ProjectorWorker,
)

BODY_BYTES_MAX = 64 * 1024
LOGGED_PATH_IDS = ("player_id", "round_id", "table_id")

log = get_logger("casino.http")


def create_app(store: Store, settings: Settings, *, background: bool = True) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        workers: list[PeriodicWorker] = []
        if background and store.projector_inside:
            workers.append(ProjectorWorker(store))
        if background:
            workers += [
                IdleRoundWorker(store, settings.idle_timeout_seconds),
                AbandonedRoundWorker(store, settings.resume_window_seconds),
                DueChoiceWorker(store, settings.decision_seconds),
            ]
        for worker in workers:
            worker.start()
        yield
        for worker in workers:
            worker.stop()

    api = FastAPI(
        title="Casino accounting",
        version="1.0.0",
        description="Event-sourced wallets, ledgers and game rounds. Amounts are decimal strings.",
        lifespan=lifespan,
    )
    api.state.store = store
    api.state.settings = settings
    api.state.api_keys = settings.keys()
    api.include_router(players.router)
    api.include_router(rounds.router)
    api.include_router(p2p.router)
    api.include_router(tables.router)
    api.include_router(reports.router)
    api.include_router(health.router)
    api.include_router(round_index.router)
    api.include_router(audit_pages.router)
    _add_error_handlers(api)
    # The last added runs outermost: every request is logged, refused ones included.
    api.add_middleware(BodySizeLimit, limit=BODY_BYTES_MAX)
    api.add_middleware(RequestLog)
    return api


def _add_error_handlers(api: FastAPI) -> None:
    @api.exception_handler(DomainError)
    async def domain_error(_: Request, error: DomainError) -> JSONResponse:
        return from_domain(error)

    @api.exception_handler(Problem)
    async def problem(_: Request, error: Problem) -> JSONResponse:
        return from_problem(error)

    @api.exception_handler(RequestValidationError)
    async def invalid(_: Request, error: RequestValidationError) -> JSONResponse:
        return _validation_problem(error.errors())

    @api.exception_handler(404)
    async def not_found(request: Request, _: Exception) -> JSONResponse:
        return problem_response(404, "not_found", f"no route {request.url.path}")

    @api.exception_handler(405)
    async def not_allowed(request: Request, _: Exception) -> JSONResponse:
        return problem_response(405, "method_not_allowed", f"{request.method} is not allowed here")


NOT_AN_OBJECT = {"model_attributes_type", "dict_type", "model_type", "missing"}
# Which field a validation error is about decides its stable code.
FIELD_CODES = {
    "amount": "invalid_amount",
    "mode": "unknown_mode",
    "player_id": "invalid_player_id",
}


def _validation_problem(errors: Any) -> JSONResponse:
    first = errors[0]
    location = [str(part) for part in first.get("loc", ())]
    if first.get("type") == "json_invalid":
        return problem_response(400, "malformed_json", "the body is not valid JSON")
    if location == ["body"] and first.get("type") in NOT_AN_OBJECT:
        return problem_response(422, "invalid_body", "the body must be a JSON object")
    field = location[-1] if location else ""
    code = FIELD_CODES.get(field, "invalid_request")
    detail = "; ".join(
        f"{'.'.join(str(part) for part in issue['loc'][1:]) or 'body'}: {issue['msg']}"
        for issue in errors
    )
    return problem_response(422, code, detail)


class RequestLog:
    """One structured line per request: id, route template, status, timing, role, ids.

    Plain ASGI rather than Starlette's BaseHTTPMiddleware, which costs a task and a
    stream copy per request.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        request_id = headers.get("x-request-id") or uuid.uuid4().hex
        started, status = time.perf_counter(), 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message).append("X-Request-ID", request_id)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            _log(scope, request_id, status, time.perf_counter() - started)


def _log(scope: Scope, request_id: str, status: int, seconds: float) -> None:
    state = scope.get("state", {})
    ids = {k: v for k, v in scope.get("path_params", {}).items() if k in LOGGED_PATH_IDS}
    ids |= {k: v[:64] for k, v in state.get("log_ids", {}).items() if k not in ids}
    route = scope.get("route")
    log.info(
        "request",
        request_id=request_id,
        method=scope["method"],
        route=getattr(route, "path", scope["path"]),
        status=status,
        duration_ms=round(seconds * 1000, 2),
        role=getattr(state.get("principal"), "role", None),
        **ids,
    )


class BodySizeLimit:
    """Refuses bodies over the limit before reading them whole (413 payload_too_large)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(scope, receive, send)
            return
        await self._guarded(scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Count a body with no declared length; past the limit, end it and answer 413."""
        seen = 0
        exceeded = False

        async def counted() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                exceeded = True
                return {"type": "http.disconnect"}
            return message

        async def send_unless_exceeded(message: Message) -> None:
            if not exceeded:
                await send(message)

        await self.app(scope, counted, send_unless_exceeded)
        if exceeded:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem_response(
            413, "payload_too_large", f"bodies are limited to {self.limit} bytes"
        )
        await response(scope, receive, send)
