"""What the routes answer, as the OpenAPI document names and describes it.

The views (`infra/http/views/`) shape answers as plain dictionaries; these
models only describe them, for the document and for clients generated from it
(nothing here runs on a request). The tests hold the two together: every
answer any HTTP test receives is checked against the document, closed - a field
the document does not name fails (`tests/contract.py`).

Money is a decimal string with two places (`Money`); a field that can be null
says so and is always present.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from infra.http.answers_rounds import Round

Money = Annotated[
    str,
    Field(
        pattern=r"^-?[0-9]+\.[0-9]{2}$",
        description="a decimal string with two places",
        examples=["10.00"],
    ),
]
Mode = Literal["real", "play"]
Timestamp = Annotated[
    str, Field(description="ISO 8601, UTC", examples=["2026-05-01T12:00:00.000000+00:00"])
]


class Answer(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


# Players and wallets.


class Player(Answer):
    """A registered player."""

    player_id: str = Field(examples=["alice"])
    display_name: str = Field(examples=["Alice"])


class LastRound(Answer):
    round_id: str
    net: Money
    commission: Money


class WalletBonus(Answer):
    """The bonus being wagered, beside the cash (rules.md 9)."""

    bonus_id: str
    balance: Money = Field(description="bonus money, held money included")
    held: Money = Field(description="bonus money held in open rounds")
    wagering_required: Money
    wagered: Money
    expires_at: Timestamp


class Wallet(Answer):
    """One of a player's two wallets; `available` is `balance` less `held`, all cash;
    the bonus stands apart."""

    player_id: str = Field(examples=["alice"])
    mode: Mode
    balance: Money
    held: Money = Field(description="held in open rounds")
    available: Money
    dealer_points: int
    last_round: LastRound | None
    # Present in every answer given now; an answer replayed from its Idempotency-Key's
    # receipt, given before bonus money was built (issue 39), has none.
    bonus: WalletBonus | None = Field(
        default=None, description="the bonus being wagered, or null (rules.md 9)"
    )


class Bonus(Answer):
    """A bonus (rules.md 9)."""

    bonus_id: str
    player_id: str = Field(examples=["alice"])
    status: Literal["active", "waiting", "converted", "forfeited", "expired"]
    amount: Money
    balance: Money = Field(description="bonus money, held money included")
    held: Money
    wagering_required: Money
    wagered: Money
    expires_at: Timestamp
    max_bet: Money | None
    max_conversion: Money | None


class Bonuses(Answer):
    """A player's bonuses: the active one, those waiting in line, the latest ended."""

    active: Bonus | None
    waiting: list[Bonus]
    past: list[Bonus]


class Movement(Answer):
    """A deposit or withdrawal, and the wallet after it."""

    transaction_id: str
    wallet: Wallet


class LedgerEntry(Answer):
    entry_id: str = Field(description="pass the last one back as `after` for the next page")
    at: Timestamp
    kind: str = Field(examples=["deposit"])
    amount: Money = Field(description="the signed change")
    balance_after: Money
    round_id: str | None
    transaction_id: str | None


class LedgerPage(Answer):
    """A page of a wallet's ledger, oldest first."""

    player_id: str
    mode: Mode
    entries: list[LedgerEntry]
    next_after: str | None = Field(description="null on the last page")


class PointsEntry(Answer):
    at: Timestamp
    round_id: str | None
    change: int
    role: str = Field(examples=["player", "dealer", "operator"])
    reason: str | None


class DealerPoints(Answer):
    """A wallet's dealer points and their latest 1,000 entries, oldest first."""

    player_id: str
    mode: Mode
    points: int
    entries: list[PointsEntry]


class PointsAdjusted(Answer):
    player_id: str
    points: int


class HistoryEntry(Answer):
    round_id: str
    started_at: Timestamp | None
    settled_at: Timestamp
    role: Literal["player", "dealer"]
    net: Money
    commission: Money
    balance_before: Money
    balance_after: Money
    bets: list[dict[str, Any]] = Field(description="the player's own bets in the round")
    round: Round


class History(Answer):
    """A player's last settled rounds, newest first, card by card."""

    player_id: str
    mode: Mode
    rounds: list[HistoryEntry]


class AffectedRound(Answer):
    round_id: str
    effect: str = Field(examples=["voided", "interrupted"])


class Disconnection(Answer):
    player_id: str
    affected_rounds: list[AffectedRound]


class Reconnection(Answer):
    player_id: str
    open_rounds: list[Round]


# P2P tables.


class Person(Answer):
    player_id: str
    display_name: str


class StakeLimits(Answer):
    min: Money
    max: Money


class P2PTable(Answer):
    """A P2P baccarat table: who deals, who plays, what it takes to deal there."""

    table_id: str
    status: str = Field(examples=["waiting", "ready", "in_round", "closed"])
    mode: Mode
    table_type: str = Field(examples=["II"])
    limits: StakeLimits
    dealer_points_min: int
    dealer_worst_case: Money
    auto_confirm: bool
    dealer: Person
    player: Person | None
    round_id: str | None
    rounds_played: int
    notice: str | None


class P2PTableWithRound(P2PTable):
    """A P2P table as read, with its current round in full."""

    current_round: Round | None


# Multi-player tables.


class TableLimits(Answer):
    bet_min: Money
    bet_max: Money
    bank_min: Money | None
    bank_max: Money | None


class Seat(Answer):
    seat: str = Field(examples=["7", "R1", "B"], description="en banque's banker sits at `B`")
    player_id: str
    leaving: bool = Field(description="leaves when the coup holding their stakes ends")


class Banker(Answer):
    player_id: str
    seat: str = Field(examples=["1", "B"], description="at en banque, `B`, the middle")
    bank: Money


class MultiPlayerTable(Answer):
    """A punto banco, chemin de fer or en banque table (rules.md 2.2-2.4)."""

    table_id: str
    game: Literal["punto_banco", "chemin_de_fer", "en_banque"]
    mode: Mode
    status: str
    limits: TableLimits
    seats: list[Seat]
    banker: Banker | None
    bank_offered_to: str | None
    current_round: Round | None
    coups_played: int


# The round index.


class RoundPlayer(Answer):
    player_id: str
    role: str = Field(examples=["player", "dealer", "banker"])


class IndexedRound(Answer):
    round_id: str
    position: int
    game: str
    variant: str
    mode: Mode
    table_id: str | None
    status: str
    players: list[RoundPlayer]
    started_at: Timestamp
    ended_at: Timestamp | None


class RoundIndex(Answer):
    """Rounds of every game in the order they opened; `next_after` goes on."""

    rounds: list[IndexedRound]
    next_after: int | None


# A round's audit trail and the event feed.


class LoggedEvent(Answer):
    """One stored event; secrets of a round not over read null."""

    position: int = Field(description="in the whole log")
    aggregate_id: str
    version: int = Field(description="in the event's own aggregate")
    at: Timestamp
    type: str = Field(examples=["Deposited"])
    topic: str = Field(examples=["casino:Wallet.Deposited"])
    data: dict[str, Any]


class AuditTrail(Answer):
    """Every event of a round in log order, the wallets' included."""

    round_id: str
    status: str
    events: list[LoggedEvent]


class EventPage(Answer):
    """Events of the log in order; pass `next_after` back as `after` to go on."""

    events: list[LoggedEvent]
    next_after: int = Field(description="the position of the last event read (or `after`)")


# Health.


class ProjectionState(Answer):
    position: int
    lag: int
    runs: Literal["inside", "separate"]


class Health(Answer):
    status: Literal["ok"]
    store: Literal["sqlite", "postgres"]
    events: int
    projections: ProjectionState


class Check(Answer):
    name: str = Field(examples=["store", "projector", "workers"])
    ok: bool
    detail: str


class Readiness(Answer):
    # "degraded": this server saves commands, but a check failed (the projector, a
    # worker, the witness): the failing checks say which.
    status: Literal["ready", "degraded"]
    checks: list[Check]


class Liveness(Answer):
    status: Literal["alive"]


class Problem(Answer):
    """application/problem+json (RFC 9457), with a stable `code` and, where useful,
    facts such as `available` or `shortfall`."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(examples=["urn:casino:problem:insufficient_funds"])
    title: str
    status: int
    detail: str
    code: str
