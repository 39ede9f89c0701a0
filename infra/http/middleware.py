"""What wraps every request: its log line (and metrics), its id, the body size limit.

Plain ASGI rather than Starlette's BaseHTTPMiddleware, which costs a task and a
stream copy per request.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import time
from collections.abc import Callable
from urllib.parse import parse_qsl

import structlog
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from infra.fault_log import faults
from infra.http.problems import problem_response
from infra.logs import enabled, get_logger
from infra.store.faults import NOT_KNOWN, STORE, StoreDeadline, within

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
        started, status, answered = time.perf_counter(), 500, False

        async def send_with_id(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status, answered = message["status"], True
                MutableHeaders(scope=message).append("X-Request-ID", request_id)
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            try:
                if acceptable:
                    try:
                        await self.app(scope, receive, send_with_id)
                    except Exception as error:
                        if answered:
                            raise  # too late to answer otherwise: the server ends it
                        # Our bug, never the caller's: logged once with its traceback,
                        # answered without it, and with the request's id like any other.
                        log.exception("internal_error", error=repr(error)[:200])
                        await INTERNAL_ERROR(scope, receive, send_with_id)
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


INTERNAL_ERROR = problem_response(
    500, "internal_error", "the server failed; nothing is wrong with the request"
)


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


class Deadline:
    """Every request is answered within the deadline (CASINO_REQUEST_DEADLINE_SECONDS,
    rules.md 8): one that has not begun its answer by then gets 503 store_unavailable
    with Retry-After, and the work goes on to its end in the background, its answer
    dropped. Nothing is half done by that: a command's save is one transaction, which
    has landed or not, and a retry with the same Idempotency-Key settles which.

    The deadline is also given to the store (infra/store/faults.py: `within`): a
    thread still working for a caller who has had their 503 asks the store for no
    new connection. A long poll (`GET /v1/events?wait=`) gets its wait on top."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds
        self._late: set[asyncio.Task[None]] = set()  # answered already, still running

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        seconds = self.seconds + _long_poll_seconds(scope)
        started = late = False

        async def send_unless_late(message: Message) -> None:
            nonlocal started
            if late:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        with within(seconds):  # the task copies the context as it is now
            task = asyncio.ensure_future(self.app(scope, receive, send_unless_late))
        try:
            await asyncio.wait_for(asyncio.shield(task), seconds)
        except TimeoutError:
            if started:  # an answer under way is finished, not cut
                await task
                return
            late = True
            self._finish_late(task)
            # The store's fault (its end is seen by the store watch, infra/workers.py).
            faults.failed(STORE, StoreDeadline(f"no answer within {seconds:g} s"))
            await problem_response(503, "store_unavailable", DEADLINE_PASSED)(scope, receive, send)
        except asyncio.CancelledError:
            task.cancel()  # the caller went away: as without a deadline
            raise

    def _finish_late(self, task: asyncio.Task[None]) -> None:
        self._late.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._late.discard(finished)
            if not finished.cancelled() and (error := finished.exception()) is not None:
                faults.failed(STORE, error)

        task.add_done_callback(done)


DEADLINE_PASSED = (
    f"the store did not answer within the request's deadline; the request is {NOT_KNOWN}"
)
LONG_POLL_PATHS = {"/v1/events"}
LONG_POLL_SECONDS_MAX = 60.0


def _long_poll_seconds(scope: Scope) -> float:
    """The `wait` a long poll asks for (its route refuses more than it allows)."""
    if scope["path"] not in LONG_POLL_PATHS:
        return 0.0
    for name, value in parse_qsl(scope.get("query_string", b"").decode("latin-1")):
        if name == "wait":
            try:
                return min(max(float(value), 0.0), LONG_POLL_SECONDS_MAX)
            except ValueError:
                return 0.0
    return 0.0
