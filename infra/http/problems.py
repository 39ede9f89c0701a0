"""application/problem+json answers with stable codes (api.md, Conventions)."""

from __future__ import annotations

from typing import Any

from domain.errors import DomainError
from infra.http.responses import FastJSONResponse

STATUS_BY_KIND = {
    "invalid": 422,
    "not_found": 404,
    "conflict": 409,
    "forbidden": 403,
    "unavailable": 503,
    "unauthenticated": 401,  # a provider's game-session token (rules.md 10)
}
TITLES = {
    400: "Bad request",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "Not found",
    409: "Conflict",
    405: "Method not allowed",
    413: "Payload too large",
    422: "Unprocessable request",
    500: "Internal error",
    503: "Service unavailable",
}


# Which field a validation error is about decides its stable code.
FIELD_CODES = {
    "amount": "invalid_amount",
    "mode": "unknown_mode",
    "player_id": "invalid_player_id",
    "shoe": "invalid_shoe",
}


class Problem(Exception):
    """An error answer raised from the HTTP layer itself."""

    def __init__(self, status: int, code: str, detail: str, **facts: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.facts = facts


def problem_response(status: int, code: str, detail: str, **facts: Any) -> FastJSONResponse:
    body = {
        "type": f"urn:casino:problem:{code}",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "code": code,
        **facts,
    }
    headers = {"Retry-After": "1"} if status == 503 else None
    return FastJSONResponse(body, status, media_type="application/problem+json", headers=headers)


def status_of(error: type[DomainError]) -> int:
    """The status a domain error is answered with."""
    return STATUS_BY_KIND[error.kind]


def from_domain(error: DomainError) -> FastJSONResponse:
    return problem_response(status_of(type(error)), error.code, error.detail, **error.facts)


def from_problem(problem: Problem) -> FastJSONResponse:
    return problem_response(problem.status, problem.code, problem.detail, **problem.facts)
