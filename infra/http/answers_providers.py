"""What the third-party-game routes answer (api.md, "Third-party games"), as the
OpenAPI document describes it (infra/http/answers.py says why these only describe)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from infra.http.answers import Answer, Mode, Money, Timestamp


class Provider(Answer):
    """A registered provider: never its secrets."""

    provider_id: str = Field(examples=["acme"])
    name: str
    bonus_allowed: bool
    theoretical_rtp: str | None


class GameSession(Answer):
    """A game session: its token goes to the provider at launch."""

    token: str
    player_id: str
    provider_id: str
    game_id: str
    mode: Mode
    expires_at: Timestamp


class ProviderBalance(Answer):
    player_id: str
    currency: Literal["USD"]
    cash: Money
    bonus: Money
    balance: Money


class WalletCredited(Answer):
    """A win's or rollback's answer: the wallet after it."""

    transaction_id: str
    cash: Money
    bonus: Money
    balance: Money


class StakeTaken(WalletCredited):
    """A bet's answer: the wallet after it, and what the stake took from each."""

    used_cash: Money
    used_bonus: Money


class EndedRound(Answer):
    round_id: str
    status: Literal["closed"]


class ProviderTransaction(Answer):
    transaction_id: str | None = Field(description="none for an end of round")
    kind: Literal["bet", "win", "rollback", "end_round"]
    round_id: str | None = Field(description="the provider's round id")
    player_id: str
    amount: Money
    at: Timestamp
    status: str = Field(description="ok, rolled_back (a bet), tombstone (a rollback first)")


class ProviderTransactions(Answer):
    provider_id: str
    transactions: list[ProviderTransaction]
    next_after: int | None = Field(description="pass back as `after` for the next page")
