"""Bearer keys with three roles: service, operator, auditor (api.md, Conventions)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from fastapi import Request

from infra.http.problems import Problem
from infra.http.strict_json import raise_body_problem

# Longer than any key worth configuring: refused before it is compared with any.
KEY_LENGTH_MAX = 512


@dataclass(frozen=True)
class Principal:
    role: str
    key_digest: str  # Scopes idempotency keys per caller without keeping the key itself.


def authenticate(request: Request) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise _refused(request, "no bearer key", "send Authorization: Bearer <key>")
    if len(key) > KEY_LENGTH_MAX:
        raise _refused(request, "key too long", "the API key is not known")
    keys: dict[str, str] = request.app.state.api_keys
    offered = key.strip()
    role = _lookup(keys, offered)
    if role is None:
        raise _refused(request, "unknown key", "the API key is not known")
    digests: dict[str, str] = getattr(request.app.state, "key_digests", {})
    return Principal(role=role, key_digest=digests.get(offered) or digest_of(offered))


def digest_of(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def key_digests(keys: dict[str, str]) -> dict[str, str]:
    """Each configured key's digest, made once at start-up rather than per request."""
    return {key: digest_of(key) for key in keys}


def _refused(request: Request, reason: str, detail: str) -> Problem:
    """A refused authentication, counted as a significant event (infra/significant.py)."""
    refusals = getattr(request.app.state, "refusals", None)
    if refusals is not None:
        where = f"{request.method} {request.url.path[:200]}"
        refusals.note("authentication_refused", {"reason": reason, "last": where})
    return Problem(401, "unauthenticated", detail)


class Allow:
    """A dependency that admits only the given roles (the OpenAPI document reads
    `roles` to name the security schemes of each route).

    Its check is async although it awaits nothing: FastAPI would otherwise run it in
    the thread pool, a hop per request for a dictionary lookup. A body found malformed
    (`infra/http/strict_json.py`) is refused here, once the caller is known.
    """

    def __init__(self, *roles: str) -> None:
        self.roles = roles

    async def __call__(self, request: Request) -> Principal:
        principal = authenticate(request)
        request.state.principal = principal
        if principal.role not in self.roles:
            raise Problem(
                403,
                "forbidden_role",
                f"the {principal.role} role may not do this; it needs: {', '.join(self.roles)}",
            )
        raise_body_problem(request.scope)
        return principal


def allow(*roles: str) -> Allow:
    return Allow(*roles)


def _lookup(keys: dict[str, str], offered: str) -> str | None:
    # Compare in constant time, so response timing tells nothing about the keys.
    found = None
    for key, role in keys.items():
        if hmac.compare_digest(key.encode(), offered.encode()):
            found = role
    return found


READ = allow("service", "operator", "auditor")
COMMAND = allow("service", "operator")
OPERATOR = allow("operator")
REPORT = allow("operator", "auditor")
