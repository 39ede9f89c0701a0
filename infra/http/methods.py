"""The methods a path accepts: HEAD wherever GET is, and the `Allow` header of a 405
(api.md, Conventions; RFC 9110 9.3.2 and 15.5.6).

FastAPI's routes answer only the methods they name, and a 405 names no others:
Starlette stops at the first route whose path matches, while a path's GET and its
PUT are routes of their own. Both are answered here from every route of the app.
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi.routing import iter_route_contexts
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def allowed_methods(routes: Sequence[BaseRoute], scope: Scope) -> list[str]:
    """Every method some route of this path accepts, HEAD wherever GET is, sorted."""
    # Asked afresh: a routed request's scope holds what the router found (FastAPI's
    # route context among it), which would answer for the route found alone.
    fresh = {key: scope[key] for key in ("type", "path", "root_path", "method") if key in scope}
    methods: set[str] = set()
    for route in iter_route_contexts(routes):  # each route, inside its router
        if route.matches(fresh)[0] is not Match.NONE:
            methods |= set(route.methods or ())
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


class HeadAsGet:
    """A HEAD on a path some route GETs is answered as that GET is, headers and all
    (`Content-Length` included), without the body. Any other HEAD goes on as it came
    (a 405 that lists what the path allows, or a 404)."""

    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.routes = routes  # the app's own list: routes added later are in it too

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD" or not self._gettable(scope):
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        # The scope itself, not a copy: the router notes the route it found in it, for
        # the request's log line. Its method is HEAD again for that line.
        scope["method"] = "GET"
        try:
            await self.app(scope, receive, without_body)
        finally:
            scope["method"] = "HEAD"

    def _gettable(self, scope: Scope) -> bool:
        as_get = {**scope, "method": "GET"}
        return any(route.matches(as_get)[0] is Match.FULL for route in self.routes)
