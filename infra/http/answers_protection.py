"""What the player-protection and significant-event routes answer (rules.md 7)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from infra.http.answers import AffectedRound, Answer, Money, Timestamp


class PendingLimit(Answer):
    """A raise (or removal) waiting out its cooling-off."""

    amount: Money | None = Field(description="null: no limit")
    effective_at: Timestamp


class Limit(Answer):
    """One limit on one rolling window, as it stands now."""

    limit: str = Field(examples=["deposit:day", "loss:month"])
    amount: Money | None = Field(description="in effect now; null: no limit")
    used: Money = Field(description="deposited, or lost (stakes open counted lost), in the window")
    left: Money | None = Field(description="what may still go in; null without a limit")
    resets_at: Timestamp | None = Field(description="when the oldest amount counted leaves")
    pending: PendingLimit | None


class Exclusion(Answer):
    kind: Literal["time_out", "self_exclusion"]
    period: str = Field(examples=["24h", "6m"])
    started_at: Timestamp
    ends_at: Timestamp


class Protection(Answer):
    """A player's limits on every window (real money), and their exclusion if one runs."""

    player_id: str
    limits: list[Limit]
    exclusion: Exclusion | None


class LimitsSet(Protection):
    effective_at: dict[str, Timestamp] = Field(
        description="when each limit the request named takes effect: now when lowered, "
        "after the 24-hour cooling-off when raised or removed"
    )


class Excluded(Answer):
    player_id: str
    exclusion: Exclusion
    affected_rounds: list[AffectedRound] = Field(
        description="the open rounds ended as if the player had disconnected"
    )


class SignificantEvent(Answer):
    position: int = Field(description="its place in the log; pass the last back as `after`")
    event_id: str
    at: Timestamp
    kind: str = Field(examples=["limit_changed", "authentication_refused"])
    details: dict[str, Any]


class SignificantEventPage(Answer):
    events: list[SignificantEvent]
    next_after: int | None
