"""What the player-protection and significant-event routes answer (rules.md 7)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from infra.http.answers import AffectedRound, Answer, Money, Timestamp

Kind = Literal["deposit", "loss"]
Period = Literal["day", "week", "month"]


class LimitAmounts(Answer):
    """One kind's limits per rolling window (a day, 7 days, 30 days); null: none."""

    day: Money | None
    week: Money | None
    month: Money | None


class LimitsInEffect(Answer):
    deposit: LimitAmounts
    loss: LimitAmounts


class PendingLimit(Answer):
    """A raise (or removal) waiting out its 24-hour cooling-off."""

    kind: Kind
    period: Period
    amount: Money | None = Field(description="null: no limit")
    effective_at: Timestamp


class LimitWindow(Answer):
    """What a limit in effect leaves now in its rolling window."""

    kind: Kind
    period: Period
    used: Money = Field(
        description="deposited, or lost (stakes minus returns, open stakes counted lost)"
    )
    remaining: Money
    resets_at: Timestamp | None = Field(description="when the oldest amount counted leaves")


class PlayerLimits(Answer):
    """A player's deposit and loss limits, real money."""

    player_id: str
    mode: Literal["real"]
    limits: LimitsInEffect = Field(description="in effect now")
    pending: list[PendingLimit]
    windows: list[LimitWindow] = Field(description="each limit in effect, as it stands now")


class Exclusion(Answer):
    kind: Literal["time_out", "self_exclusion"]
    period: str = Field(description="ISO 8601: P3D, P6M", examples=["P3D", "P6M"])
    started: Timestamp = Field(alias="from")
    until: Timestamp


class Excluded(Exclusion):
    player_id: str
    affected_rounds: list[AffectedRound] = Field(
        description="the open rounds ended as if the player had disconnected"
    )


class Exclusions(Answer):
    player_id: str
    current: Exclusion | None
    past: list[Exclusion] = Field(description="oldest first; the latest 100")


class SignificantEvent(Answer):
    position: int = Field(description="its place in the log; pass the last back as `after`")
    event_id: str
    at: Timestamp
    kind: str = Field(examples=["limit_changed", "authentication_refused"])
    actor: str = Field(description="the role that asked for it, or system", examples=["operator"])
    detail: dict[str, Any]


class SignificantEventPage(Answer):
    events: list[SignificantEvent]
    next_after: int | None
