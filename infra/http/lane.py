"""A request's route found and run in one step, past FastAPI's per-request layers.

FastAPI 0.165 tries every route in order, twice, and wraps the one it finds in an
exception middleware, an exit-stack middleware, its router's scope bookkeeping and
its request handler. Measured in process, a route with a command route's one
dependency that only answers took 207 us through all of that, 39 us called directly
(authentication, the Idempotency-Key, the answer): 170 us of a P2P command's 1,200
us on the event loop. Hand-rolled for that measurement, and kept small by doing
only what FastAPI would do once it has picked the route, with FastAPI's own pieces:

- the route is the one whose template matches the path and method: no two routes
  can match one path (tests/infra/http/test_routing.py), so no order is needed;
- its dependencies (each taking the request alone) are awaited in order, then its
  path and body are validated by FastAPI's own `request_params_to_args` and
  `request_body_to_args`, their errors raised together: what `solve_dependencies`
  does for a route of that shape, so refusals, validation and their order are FastAPI's;
- the body is the value StrictJsonBodies parsed (infra/http/strict_json.py), or none;
- an exception is answered by the app's own handler for it (what Starlette's
  exception middleware does); any other goes on up to the server-error handler.

A request it is not sure of goes to FastAPI untouched, before anything is read or
run: a route with query, header or cookie parameters or other dependencies, or that
answers other than with a Response; a body that is not parsed JSON (or has a
problem to report); a path no route here matches, a method the route does not take
(405 is FastAPI's to answer); any request while dependencies are overridden.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from re import Pattern
from typing import Any

from fastapi import FastAPI, params
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import request_body_to_args, request_params_to_args
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic_core import PydanticUndefined as Undefined  # FastAPI's "no body"
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from infra.http.strict_json import BODY_PROBLEM, PARSED_BODY, replay

Handler = Callable[[Request, Exception], Any]


@dataclass(frozen=True)
class LaneRoute:
    """One route as FastAPI resolved it (its prefix and its router's dependencies in)."""

    context: Any  # fastapi.routing.RouteContext: dependant, convertors, the APIRoute
    takes_body: bool
    # Copied out of the context, whose attributes are forwarded by __getattr__ at
    # each look: these two are read for every request.
    regex: Pattern[str]
    convertors: dict[str, Any]

    def params(self, path: str) -> dict[str, Any] | None:
        found = self.regex.match(path)
        if found is None:
            return None
        convertors = self.convertors
        return {name: convertors[name].convert(value) for name, value in found.groupdict().items()}


class CommandLane:
    """Runs the request of any route it can take exactly as FastAPI would; hands it
    every other request."""

    def __init__(self, app: ASGIApp, api: FastAPI) -> None:
        self.app = app
        self.api = api
        self.routes: dict[tuple[str, int], list[LaneRoute]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.routes is None:  # every route is in by the first request
            self.routes = _lane_routes(self.api)
        # Dependencies overridden (a test may, at any time): FastAPI resolves each request.
        laned = scope["type"] == "http" and not self.api.dependency_overrides
        found = _route_of(self.routes, scope) if laned else None
        state = scope.get("state", {})
        if found is None or BODY_PROBLEM in state:
            await self.app(scope, receive, send)
            return
        route, params = found
        body: Any = state.get(PARSED_BODY, Undefined)
        messages: list[Message] = []
        if route.takes_body and body is Undefined:
            message = await receive()  # BodySizeLimit and StrictJsonBodies read it whole
            messages.append(message)
            if message.get("body") or message.get("more_body") or message["type"] != "http.request":
                await self.app(scope, replay(messages, receive), send)  # not JSON: FastAPI's
                return
        # As FastAPI's router leaves the scope for its route.
        scope.setdefault("router", self.api.router)
        scope.update(endpoint=route.context.endpoint, path_params=params)
        scope["route"] = route.context.original_route
        await self._run(route, body, scope, replay(messages, receive), send)

    async def _run(
        self, route: LaneRoute, body: Any, scope: Scope, receive: Receive, send: Send
    ) -> None:
        request = Request(scope, receive, send)
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            response = await _respond(route, request, body)
            await response(scope, receive, sending)
        except Exception as error:
            handler = _handler_for(self.api, error)
            if handler is None:
                raise  # the server-error handler's, as past FastAPI's exception middleware
            if started:  # as Starlette's exception middleware says it
                raise RuntimeError(
                    "Caught handled exception, but response already started."
                ) from error
            answer = await _call(handler, request, error)
            await answer(scope, receive, sending)


async def _respond(route: LaneRoute, request: Request, body: Any) -> Response:
    """The route's answer, its dependencies and parameters solved as FastAPI's
    `solve_dependencies` solves a route of this shape (`_simple`): each dependency
    called with the request, in order (its refusal raised as it comes), then the path
    and the body validated by FastAPI's own functions, their errors together."""
    dependant = route.context.dependant
    values: dict[str, Any] = {}
    solved: dict[Any, Any] = {}  # a dependency named twice runs once, as in FastAPI
    for dependency in dependant.dependencies:
        if not dependency.use_cache or dependency.call not in solved:
            solved[dependency.call] = await dependency.call(request)
        if dependency.name is not None:
            values[dependency.name] = solved[dependency.call]
    path_values, errors = request_params_to_args(dependant.path_params, request.path_params)
    values.update(path_values)
    if dependant.body_params:
        body_values, body_errors = await request_body_to_args(
            body_fields=dependant.body_params,
            received_body=body,
            embed_body_fields=route.context._embed_body_fields,
        )
        values.update(body_values)
        errors += body_errors
    if errors:
        raise RequestValidationError(errors, body=body)
    values[dependant.request_param_name] = request
    response: Response = await dependant.call(**values)
    return response


def _lane_routes(api: FastAPI) -> dict[tuple[str, int], list[LaneRoute]]:
    """The routes it can take, by method and number of path segments."""
    routes: dict[tuple[str, int], list[LaneRoute]] = {}
    for context in iter_route_contexts(api.routes):
        route = context.original_route
        if not isinstance(route, APIRoute) or not _answers_with_a_response(context.endpoint):
            continue
        if not _simple(context.dependant):
            continue
        if context.body_field is not None and not _json_body(context.body_field):
            continue
        lane = LaneRoute(
            context=context,
            takes_body=context.body_field is not None,
            regex=context.path_regex,
            convertors=context.param_convertors,
        )
        for method in context.methods or ():
            routes.setdefault((method, str(context.path_format).count("/")), []).append(lane)
    return routes


def _route_of(
    routes: dict[tuple[str, int], list[LaneRoute]], scope: Scope
) -> tuple[LaneRoute, dict[str, Any]] | None:
    if scope.get("root_path"):
        return None  # mounted under a prefix: FastAPI's to work out
    path: str = scope["path"]
    for route in routes.get((scope["method"], path.count("/")), ()):
        params = route.params(path)
        if params is not None:
            return route, params
    return None


def _answers_with_a_response(endpoint: Any) -> bool:
    """An async route annotated to return a Response: FastAPI then sends that answer
    as it is (anything else it would serialize by the route's response model)."""
    try:
        answer = typing.get_type_hints(endpoint).get("return")
    except Exception:  # an annotation that does not resolve: FastAPI's to handle
        return False
    returns_response = isinstance(answer, type) and issubclass(answer, Response)
    return returns_response and inspect.iscoroutinefunction(endpoint)


def _simple(dependant: Dependant) -> bool:
    """A route whose dependencies each take the request alone and are awaited (a
    role check, a command's key), and whose parameters are its path and body (and the
    request): what `_respond` solves as FastAPI would."""
    if dependant.request_param_name is None or _extras(dependant):
        return False
    if dependant.query_params or dependant.header_params or dependant.cookie_params:
        return False
    return all(_takes_the_request_alone(dependency) for dependency in dependant.dependencies)


def _takes_the_request_alone(dependency: Dependant) -> bool:
    return (
        dependency.request_param_name is not None
        and not dependency.dependencies
        and not _extras(dependency)
        and not (dependency.path_params or dependency.query_params or dependency.body_params)
        and not (dependency.header_params or dependency.cookie_params)
        and dependency.concurrency is None
        and _awaited(dependency.call)  # not a generator, which FastAPI enters and exits
    )


def _awaited(call: Any) -> bool:
    """A coroutine function, or an object whose __call__ is one (as FastAPI tells)."""
    if inspect.isroutine(call):
        return inspect.iscoroutinefunction(call)
    return inspect.iscoroutinefunction(type(call).__call__)


def _extras(dependant: Dependant) -> bool:
    """Parameters FastAPI fills from elsewhere than the request: none here."""
    return any(
        (
            dependant.http_connection_param_name,
            dependant.websocket_param_name,
            dependant.response_param_name,
            dependant.background_tasks_param_name,
            dependant.security_scopes_param_name,
        )
    )


def _json_body(field: Any) -> bool:
    """A JSON body (not a form, which FastAPI reads otherwise)."""
    return not isinstance(field.field_info, params.Form)


def _handler_for(api: FastAPI, error: Exception) -> Handler | None:
    """The app's handler for the error, by its class's ancestry, as Starlette's
    exception middleware looks it up; never the catch-all (500) handler, which sits
    outside every middleware."""
    handlers = api.exception_handlers
    # A 500 handler, like the catch-all, is the server-error middleware's (Starlette).
    if isinstance(error, HTTPException) and error.status_code in handlers.keys() - {500}:
        return typing.cast(Handler, handlers[error.status_code])
    for kind in type(error).__mro__:
        if kind is Exception:
            return None
        if kind in handlers:
            return typing.cast(Handler, handlers[kind])
    return None


async def _call(handler: Handler, request: Request, error: Exception) -> Response:
    if inspect.iscoroutinefunction(handler):
        answer = await handler(request, error)
    else:
        answer = await run_in_threadpool(handler, request, error)
    return typing.cast(Response, answer)
