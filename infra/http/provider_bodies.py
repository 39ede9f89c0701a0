"""What the third-party-game routes accept (api.md, "Third-party games"), checked at
the edge as every body is (infra/http/bodies.py): unknown fields refused, types
strict, every string bounded. A provider's call is read only once its signature over
the exact bytes has been checked (infra/http/provider_calls.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from domain.providers.provider import (
    EXTERNAL_ID_PATTERN,
    NAME_LENGTH_MAX,
    PROVIDER_ID_PATTERN,
    SECRET_LENGTH_MAX,
    SECRET_LENGTH_MIN,
    SECRETS_MAX,
)
from infra.http.bodies import Body, Mode

ExternalId = Annotated[
    str,
    Field(
        pattern=EXTERNAL_ID_PATTERN.pattern,
        description="the provider's id: 1-128 printable characters",
        examples=["tx-1001"],
    ),
]
ProviderId = Annotated[
    str,
    Field(
        pattern=PROVIDER_ID_PATTERN.pattern,
        description="1-32 lower-case letters, digits, '_' or '-'",
        examples=["acme"],
    ),
]
Secret = Annotated[str, Field(min_length=SECRET_LENGTH_MIN, max_length=SECRET_LENGTH_MAX)]
Secrets = Annotated[list[Secret], Field(min_length=1, max_length=SECRETS_MAX)]
Token = Annotated[str, Field(min_length=1, max_length=128, description="the game session's")]
Amount = Annotated[
    str, Field(max_length=40, description="decimal string, at most two places", examples=["1.00"])
]


class NewProvider(Body):
    provider_id: ProviderId
    name: str = Field(min_length=1, max_length=NAME_LENGTH_MAX, examples=["Acme Games"])
    secrets: Secrets
    bonus_allowed: bool = False
    theoretical_rtp: str | None = Field(
        default=None, max_length=10, description="declared return to player, a fraction",
        examples=["0.965"],
    )  # fmt: skip


class ProviderSecrets(Body):
    secrets: Secrets


class NewGameSession(Body):
    provider_id: ProviderId
    game_id: ExternalId
    mode: Mode


class BalanceCall(Body):
    token: Token


class BetCall(Body):
    token: Token
    transaction_id: ExternalId
    round_id: ExternalId
    game_id: ExternalId
    amount: Amount


class WinCall(Body):
    token: Token
    transaction_id: ExternalId
    round_id: ExternalId
    amount: Amount = Field(description='may be "0.00"')
    bet_transaction_id: ExternalId | None = None


class RollbackCall(Body):
    token: Token
    transaction_id: ExternalId
    bet_transaction_id: ExternalId


class EndRoundCall(Body):
    token: Token
    round_id: ExternalId
