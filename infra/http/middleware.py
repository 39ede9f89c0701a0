"""What wraps every request: its log line (and metrics), its id, the body size limit.

Plain ASGI rather than Starlette's BaseHTTPMiddleware, which costs a task and a
stream copy per request.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import time
from collections.abc import Callable

import structlog
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from infra.http.problems import problem_response
from infra.logs import enabled, get_logger

LOGGED_PATH_IDS = ("player_id", "round_id", "table_id")
# A caller's X-Request-ID is echoed and logged: visible ASCII, and short.
REQUEST_ID_LENGTH_MAX = 128
REQUEST_ID_PATTERN = re.compile(rf"[!-~]{{1,{REQUEST_ID_LENGTH_MAX}}}")
# Told of each answered request: its method, route template, status and seconds taken.
RequestObserver = Callable[[str, str, int, float], None]
UNMATCHED = "(unmatched)"  # the route label of a path no route matched
# Request ids made here: a random prefix per process and a counter, unique like a
# uuid4 at a fraction of its cost (one urandom call per process, not per request).
_ID_PREFIX = os.urandom(8).hex()
_ID_COUNTER = itertools.count()


def _new_id_prefix() -> None:
    global _ID_PREFIX
    _ID_PREFIX = os.urandom(8).hex()


os.register_at_fork(after_in_child=_new_id_prefix)  # a forked worker is a new process too

log = get_logger("casino.http")


class RequestLog:
    """One structured line per request: id, route template, status, timing, role, ids.

    The request id is bound for the whole request (structlog's contextvars), so every
    line logged while it is handled, in the route's thread too, carries it. A caller's
    X-Request-ID that is not 1-128 visible ASCII characters is refused (400
    invalid_request_id) rather than logged.
    """

    def __init__(self, app: ASGIApp, observe: RequestObserver | None = None) -> None:
        self.app = app
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        offered = Headers(scope=scope).get("x-request-id")
        acceptable = offered is None or REQUEST_ID_PATTERN.fullmatch(offered) is not None
        request_id = offered if offered is not None and acceptable else _new_request_id()
        started, status = time.perf_counter(), 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message).append("X-Request-ID", request_id)
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            try:
                if acceptable:
                    await self.app(scope, receive, send_with_id)
                else:
                    refusal = problem_response(
                        400,
                        "invalid_request_id",
                        f"X-Request-ID must be 1-{REQUEST_ID_LENGTH_MAX} visible ASCII characters",
                    )
                    await refusal(scope, receive, send_with_id)
            finally:
                seconds = time.perf_counter() - started
                route = _route_of(scope)
                if enabled(logging.INFO):  # made only to be written (2% of a command's CPU)
                    _log(scope, request_id, route, status, seconds)
                if self.observe is not None:
                    self.observe(scope["method"], route, status, seconds)


def _new_request_id() -> str:
    return f"{_ID_PREFIX}{next(_ID_COUNTER):016x}"


def _route_of(scope: Scope) -> str:
    """The route's template; a path no route matched is not worth a label of its own."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else UNMATCHED


def _log(scope: Scope, request_id: str, route: str, status: int, seconds: float) -> None:
    state = scope.get("state", {})
    ids = {k: v for k, v in scope.get("path_params", {}).items() if k in LOGGED_PATH_IDS}
    ids |= {k: v[:64] for k, v in state.get("log_ids", {}).items() if k not in ids}
    log.info(
        "request",
        request_id=request_id,
        method=scope["method"],
        route=route if route != UNMATCHED else scope["path"][:200],
        status=status,
        duration_ms=round(seconds * 1000, 2),
        role=getattr(state.get("principal"), "role", None),
        **{k: str(v)[:64] for k, v in ids.items()},
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

        try:
            await self.app(scope, counted, send_unless_exceeded)
        except Exception:
            # What the cut-off body made fail (a route reading it whole meets a
            # disconnect) is the 413's to answer; any other failure is the app's own.
            if not exceeded:
                raise
        if exceeded:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem_response(
            413, "payload_too_large", f"bodies are limited to {self.limit} bytes"
        )
        await response(scope, receive, send)
