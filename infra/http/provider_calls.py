"""A provider's call (api.md, "Third-party games"): no bearer key, the signature is
the credential. Before anything else is read, the exact bytes of the body are
checked against `X-Casino-Signature` with each of the provider's secrets (two during
a rotation), in constant time; an unknown provider is refused as a bad signature, so
the answer tells no one which providers exist. Then the body is read as any other
(400 malformed_json, 422 an unknown field), and the provider's transaction id is
the call's idempotency key: one receipt per provider and id, in the same save as
the money it moves (infra/commands/).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from fastapi import Header, Path, Request
from starlette.concurrency import run_in_threadpool

from domain.errors import DomainError, DuplicateTransaction
from domain.providers.provider import PROVIDER_ID_PATTERN, secrets_context
from domain.providers.signing import signed_by_one_of
from infra.http.idempotency import Command, fingerprint_of
from infra.http.problems import Problem
from infra.http.reading import app_of
from infra.http.strict_json import RAW_BODY, raise_body_problem

OPENED_KEPT_MAX = 1_000  # providers' opened secrets kept, by provider
# How long a provider's secrets, once read, sign its calls without a look at the store:
# a rotation is seen by every server within this (a read and a thread hop a call, else).
SECRETS_KEPT_SECONDS = 1.0


@dataclass(frozen=True)
class SignedCall:
    """A call whose signature holds: its provider, and its body's fingerprint."""

    provider_id: str
    fingerprint: str

    def command(self, transaction_id: str) -> Command:
        """The call as an idempotent command keyed by the provider's transaction id."""
        return Command(
            scoped_key=f"provider/{self.provider_id}/{transaction_id}",
            fingerprint=self.fingerprint,
            reused=lambda: DuplicateTransaction(
                f"transaction {transaction_id} was already used with another request"
            ),
        )


async def signed_call(
    request: Request,
    provider_id: str = Path(
        pattern=PROVIDER_ID_PATTERN.pattern, description="the provider's id", examples=["acme"]
    ),
    signature: str | None = Header(
        default=None,
        alias="X-Casino-Signature",
        description="sha256=<hex HMAC-SHA256 of the exact body bytes with a secret of the "
        "provider's>; missing or wrong: 401 invalid_signature",
    ),
) -> SignedCall:
    """The route's one dependency: 401 invalid_signature unless the body is signed."""
    body = request.scope.get("state", {}).get(RAW_BODY)
    if body is None:
        body = await request.body()
    kept: dict[str, tuple[float, list[str]]] = request.app.state.provider_secrets
    found = kept.get(provider_id)
    if found is not None and time.monotonic() - found[0] < SECRETS_KEPT_SECONDS:
        secrets = found[1]
    else:
        secrets = await run_in_threadpool(_secrets_of, request, provider_id)
    if not signed_by_one_of(secrets, body, signature):
        raise Problem(
            401,
            "invalid_signature",
            "X-Casino-Signature must be sha256=<hex HMAC-SHA256 of the exact body bytes "
            "with one of the provider's secrets>",
        )
    raise_body_problem(request.scope)
    return SignedCall(provider_id, fingerprint_of(request, body))


def _secrets_of(request: Request, provider_id: str) -> list[str]:
    """The provider's secrets as the store has them now, opened with the service's
    secret box, and kept (none for a provider that is not registered)."""
    try:
        provider = app_of(request).provider(provider_id)
    except DomainError:
        return []
    state = request.app.state
    box = state.store.commands.box
    clear = box.open(provider.sealed_secrets, secrets_context(provider_id))
    found = [str(secret) for secret in json.loads(clear)]
    kept: dict[str, tuple[float, list[str]]] = state.provider_secrets  # set by create_app
    if len(kept) >= OPENED_KEPT_MAX:
        kept.clear()
    kept[provider_id] = (time.monotonic(), found)
    return found
