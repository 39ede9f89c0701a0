"""What the report routes answer, as the OpenAPI document names and describes them
(`infra/http/answers.py` says how these models are used and checked)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from infra.http.answers import Answer, Mode, Money


class AccountBalance(Answer):
    account: str = Field(examples=["player:alice", "cashier", "casino:bank"])
    balance: Money


class TrialBalance(Answer):
    mode: Mode
    accounts: list[AccountBalance]
    total: Money = Field(description='always "0.00"')


class Liability(Answer):
    mode: Mode
    player_balances: Money
    held_in_open_rounds: Money
    available_to_players: Money
    wallets: int


class CommissionDay(Answer):
    day: str = Field(examples=["2026-05-01"])
    commission: Money
    rounds: int


class CommissionReport(Answer):
    mode: Mode
    first_day: str | None = Field(alias="from")
    last_day: str | None = Field(alias="to")
    days: list[CommissionDay]
    total: Money


class BonusDay(Answer):
    """Bonus money on one UTC day (rules.md 9): granted, become cash, forfeited
    (forfeits and what a maximum conversion leaves), expired, and what the players'
    bonus accounts held at the day's end."""

    day: str = Field(examples=["2026-05-01"])
    granted: Money
    converted: Money
    forfeited: Money
    expired: Money
    outstanding: Money


class BonusReport(Answer):
    first_day: str | None = Field(alias="from")
    last_day: str | None = Field(alias="to")
    days: list[BonusDay]


class RevenueFigures(Answer):
    """Settled rounds' figures: `returns` is what the stakes paid back, stake included;
    `ggr` the casino's gross gaming revenue (rules.md 7)."""

    rounds: int
    stakes: Money = Field(description="cash staked (rules.md 9)")
    returns: Money = Field(description="cash returned")
    ggr: Money = Field(description="on cash")
    commission: Money
    bonus_stakes: Money
    bonus_returns: Money
    bonus_converted: Money = Field(description="bonus money become cash in these rounds")
    ngr: Money = Field(description="ggr less bonus_converted")


class RevenueRow(RevenueFigures):
    period: str = Field(examples=["2026-05-01"], description="a day, or a month (2026-05)")
    game: str = Field(examples=["baccarat"])
    variant: str = Field(examples=["house"])


class RevenueTotals(Answer):
    """Every game together: over the rows' days, and month, year and life to `to`."""

    period: RevenueFigures
    mtd: RevenueFigures
    ytd: RevenueFigures
    ltd: RevenueFigures


class RevenueReport(Answer):
    mode: Mode
    first_day: str | None = Field(alias="from")
    last_day: str = Field(alias="to")
    group: Literal["day", "month"]
    rows: list[RevenueRow]
    totals: RevenueTotals


Ratio = Annotated[
    str,
    Field(
        pattern=r"^-?[0-9]+\.[0-9]{6}$",
        description="a decimal string with six places (0.989425 is 98.9425%)",
        examples=["0.989425"],
    ),
]


class RtpInterval(Answer):
    low: Ratio
    high: Ratio


class RtpReport(Answer):
    """Actual against theoretical return to player; null where there is nothing to
    compare (no stakes, no theoretical figure, fewer than two rounds)."""

    mode: Mode
    game: Literal["baccarat", "blackjack", "external"]
    variant: str | None
    first_day: str | None = Field(alias="from")
    last_day: str | None = Field(alias="to")
    rounds: int
    stakes: Money
    returns: Money
    actual_rtp: Ratio | None
    theoretical_rtp: Ratio | None
    theoretical_source: str | None
    difference: Ratio | None
    difference_ci95: RtpInterval | None
