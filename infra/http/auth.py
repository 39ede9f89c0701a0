"""Bearer keys with three roles: service, operator, auditor (api.md, Conventions)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request

from infra.http.problems import Problem


@dataclass(frozen=True)
class Principal:
    role: str
    key_digest: str  # Scopes idempotency keys per caller without keeping the key itself.


def authenticate(request: Request) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Problem(401, "unauthenticated", "send Authorization: Bearer <key>")
    keys: dict[str, str] = request.app.state.api_keys
    role = _lookup(keys, key.strip())
    if role is None:
        raise Problem(401, "unauthenticated", "the API key is not known")
    digest = hashlib.sha256(key.strip().encode()).hexdigest()[:24]
    return Principal(role=role, key_digest=digest)


def allow(*roles: str) -> Callable[[Request], Awaitable[Principal]]:
    """A dependency that admits only the given roles.

    Async although it awaits nothing: FastAPI would otherwise run it in the thread
    pool, a hop per request for a dictionary lookup.
    """

    async def check(request: Request) -> Principal:
        principal = authenticate(request)
        request.state.principal = principal
        if principal.role not in roles:
            raise Problem(
                403,
                "forbidden_role",
                f"the {principal.role} role may not do this; it needs: {', '.join(roles)}",
            )
        return principal

    return check


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
