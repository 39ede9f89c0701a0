"""The OpenAPI document as the contract: every answer a route can give, described.

A route declares what it answers and the domain refusals it can meet:

    @router.post("/{player_id}/withdrawals", **answers(201, Movement, UnknownPlayer,
                                                         InsufficientFunds))

Everything else is read off the route itself, so it cannot drift: the roles its
`Allow` dependency admits (the bearer security schemes, 401 and 403), whether it
is a command (the `Idempotency-Key` header, optional on a PUT, with the pattern
the server enforces; 400, 422 idempotency_key_reused and idempotency_key_expired, 503
concurrent_update, receipt_unsealed and log_tampered; `Casino-Position` and
`Idempotent-Replayed` on its answer),
whether it reads read models (503 projection_behind), its body and parameters
(400 malformed_json, 413, 422 with the codes its fields carry). Each refusal is
`application/problem+json` whose `code` is one of those the status lists.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts

from domain.errors import DomainError
from infra.http.answers import Problem
from infra.http.auth import Allow
from infra.http.idempotency import KEY_OPTIONAL_METHODS, KEY_PATTERN, POSITION_HEADER, CommandOf
from infra.http.middleware import REQUEST_ID_LENGTH_MAX
from infra.http.problems import FIELD_CODES, TITLES, status_of
from infra.http.reading import min_position

REFUSALS = "x-casino-refusals"
# A route idempotent by a key of its body (a provider's transaction id, rules.md 10):
# its answer carries Casino-Position and Idempotent-Replayed as a command's does.
KEYED = "x-casino-keyed"
ROLES = {
    "service": "an upstream service: commands, and reads of players, wallets, rounds, tables",
    "operator": "everything a service can, plus reports and point adjustments",
    "auditor": "every read, never a command",
}
Refusal = type[DomainError] | tuple[int, str]


def answers(
    status: int,
    model: Any,
    *refusals: Refusal,
    description: str = "",
    also: tuple[str, ...] = (),
    keyed: bool = False,
) -> dict[str, Any]:
    """A route decorator's arguments: its status and answer, and the refusals of the
    domain (or of the route, as (status, code)) it can meet. `also` names the other
    media types the answer comes in, besides JSON, when the caller's Accept asks;
    `keyed`, a route idempotent by a key in its body (its answer's headers a command's)."""
    codes = [(status_of(r), r.code) if isinstance(r, type) else r for r in refusals]
    answer: dict[str, Any] = {"model": model, "description": description or "the answer"}
    if also:
        answer["content"] = {media: {"schema": {"type": "string"}} for media in also}
    return {
        "status_code": status,
        "response_model": None,
        "responses": {status: answer},
        "openapi_extra": {REFUSALS: codes, **({KEYED: True} if keyed else {})},
    }


@dataclass
class Traits:
    """What a route's dependencies and parameters say it can answer."""

    roles: tuple[str, ...] = ()
    command: bool = False
    reads_projections: bool = False
    refusals: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))


# Documents made, by the routes they describe: every app of a process (a test suite
# makes hundreds) has the same routes, and making one takes a quarter of a second.
_MADE: dict[tuple[Any, ...], dict[str, Any]] = {}


def document(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI document, completed from its routes (cached; not to be changed)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    key = (app.title, app.version, *(id(route.original_route) for route in _routes(app)))
    if key not in _MADE:
        _MADE[key] = _make(app)
    app.openapi_schema = _MADE[key]
    return app.openapi_schema


def _make(app: FastAPI) -> dict[str, Any]:
    doc = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
        tags=app.openapi_tags,
    )
    components = doc.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    components["securitySchemes"] = {
        role: {
            "type": "http",
            "scheme": "bearer",
            "description": f"a key of the {role} role: {what}",
        }
        for role, what in ROLES.items()
    }
    for route in _routes(app):
        for method in sorted(route.methods or ()):
            operation = doc["paths"][route.path_format][method.lower()]
            _complete(operation, route, method)
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return doc


def _routes(app: FastAPI) -> Iterator[Any]:
    """Every route in the document, as FastAPI sees it once included: its path with the
    router's prefix, its dependencies with the router's (`APIRoute`'s attributes)."""
    for context in iter_route_contexts(app.routes):
        if isinstance(context.original_route, APIRoute) and context.include_in_schema:
            yield context


def traits_of(route: Any, method: str) -> Traits:
    traits = Traits()
    for dependant in _dependants(route.dependant):
        call = dependant.call
        if isinstance(call, Allow):
            traits.roles = call.roles
        elif isinstance(call, CommandOf):
            traits.roles, traits.command = call.roles, True
        elif call is min_position:
            traits.reads_projections = True
    refusals = traits.refusals
    refusals[400].add("invalid_request_id")
    # Any route meets a store that does not answer in time (rules.md 8).
    refusals[503].add("store_unavailable")
    if traits.roles:
        refusals[401].add("unauthenticated")
        if set(traits.roles) != set(ROLES):
            refusals[403].add("forbidden_role")
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        refusals[413].add("payload_too_large")
        if traits.roles:  # A body's own problem is answered once the caller is known.
            refusals[400].add("malformed_json")
            refusals[422].add("invalid_body")
    if traits.command:
        refusals[400].add("invalid_idempotency_key")
        if method not in KEY_OPTIONAL_METHODS:
            refusals[400].add("idempotency_key_missing")
        refusals[422] |= {"idempotency_key_reused", "idempotency_key_expired"}
        refusals[503] |= {"concurrent_update", "receipt_unsealed", "log_tampered",
                          "seal_key_retired", "secret_key_mismatch"}  # fmt: skip
    if traits.reads_projections:
        refusals[503] |= {"projection_behind", "projection_failed", "read_model_unavailable"}
    for name in _validated_names(route):
        refusals[422].add(FIELD_CODES.get(name, "invalid_request"))
    for status, code in (route.openapi_extra or {}).get(REFUSALS, []):
        refusals[status].add(code)
    return traits


def _dependants(dependant: Dependant) -> Iterator[Dependant]:
    for sub in dependant.dependencies:
        yield sub
        yield from _dependants(sub)


def _validated_names(route: Any) -> Iterator[str]:
    """The names of every parameter and body field FastAPI validates."""
    for dependant in (route.dependant, *_dependants(route.dependant)):
        for param in (*dependant.path_params, *dependant.query_params):
            yield param.name
    if route.body_field is not None:
        model = route.body_field.field_info.annotation
        fields = getattr(model, "model_fields", None)
        if fields is None:  # Optional[Model]
            for arg in getattr(model, "__args__", ()):
                fields = fields or getattr(arg, "model_fields", None)
        yield from (fields or {})
        yield "body"


def _complete(operation: dict[str, Any], route: Any, method: str) -> None:
    traits = traits_of(route, method)
    operation.pop(REFUSALS, None)
    keyed = bool(operation.pop(KEYED, False))
    if traits.roles:
        operation["security"] = [{role: []} for role in traits.roles]
    parameters = operation.setdefault("parameters", [])
    parameters.append(_request_id_parameter())
    if traits.command:
        parameters.append(_idempotency_key_parameter(method not in KEY_OPTIONAL_METHODS))
    responses = operation["responses"]
    for status, answer in responses.items():
        if status.startswith("2"):
            answer["headers"] = _success_headers(traits.command or keyed)
    for status, codes in traits.refusals.items():
        responses[str(status)] = _problem_response(status, codes)
    operation["responses"] = dict(sorted(responses.items()))


def _problem_response(status: int, codes: set[str]) -> dict[str, Any]:
    listed = sorted(codes)
    headers = {"X-Request-ID": _request_id_header()}
    if status == 503:
        headers["Retry-After"] = {
            "description": "seconds to wait before retrying",
            "schema": {"type": "integer"},
        }
    return {
        "description": f"{TITLES.get(status, 'Error')}: {', '.join(listed)}",
        "headers": headers,
        "content": {
            "application/problem+json": {
                "schema": {
                    "allOf": [{"$ref": "#/components/schemas/Problem"}],
                    "properties": {"status": {"const": status}, "code": {"enum": listed}},
                }
            }
        },
    }


def _success_headers(command: bool) -> dict[str, Any]:
    headers: dict[str, Any] = {"X-Request-ID": _request_id_header()}
    if command:
        headers[POSITION_HEADER] = {
            "description": "the log position that includes the command: pass it as "
            "`min_position` to read your write",
            "required": True,
            "schema": {"type": "integer", "minimum": 0},
        }
        headers["Idempotent-Replayed"] = {
            "description": "`true` when this is the stored answer to an earlier request "
            "with the same Idempotency-Key",
            "schema": {"type": "string", "enum": ["true"]},
        }
    return headers


def _request_id_header() -> dict[str, Any]:
    return {
        "description": "the request's id: the caller's X-Request-ID, or one made up",
        "required": True,
        "schema": {"type": "string"},
    }


def _request_id_parameter() -> dict[str, Any]:
    return {
        "name": "X-Request-ID",
        "in": "header",
        "required": False,
        "description": "an id to find this request by in the logs; echoed back",
        "schema": {"type": "string", "pattern": f"^[!-~]{{1,{REQUEST_ID_LENGTH_MAX}}}$"},
    }


def _idempotency_key_parameter(required: bool) -> dict[str, Any]:
    optional = "" if required else " (a PUT is idempotent by itself: the key is optional)"
    return {
        "name": "Idempotency-Key",
        "in": "header",
        "required": required,
        "description": "one per intended command, scoped to the API key: a repeat with the "
        f"same body gets the first answer and changes nothing{optional}",
        # The pattern the server enforces (infra/http/idempotency.py), not a copy of it.
        "schema": {"type": "string", "pattern": KEY_PATTERN.pattern},
        "examples": {"a key": {"value": "deposit-7f3a"}},
    }
