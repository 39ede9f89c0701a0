"""The wallet aggregate: one per player and mode, the player's sub-ledger.

Every event that moves money carries its `postings`: [account, cents] pairs of
the double-entry journal. A wallet event posts the player's own leg, plus the
counter leg when the counterparty is a casino account or the cashier. A
transfer between two players (P2P settlement) posts one leg on each wallet in
the same atomic save; the application checks that every save balances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.errors import (
    BalanceLimitExceeded,
    DomainError,
    InsufficientFunds,
    InvalidAmount,
    InvalidPointsChange,
    UnknownHold,
)
from domain.ids import check_mode, check_player_id, player_account, wallet_uuid
from domain.money import format_cents
from domain.player import unknown_player
from domain.unit import Unit

CASHIER = "cashier"
CASINO_BANK = "casino:bank"
CASINO_COMMISSION = "casino:commission"
# Stable event topics: stored with every event, so they never change (classes may move).
WALLET = "casino:Wallet"
OPENED = "casino:Wallet.Created"
DEPOSITED = "casino:Wallet.Deposited"
WITHDRAWN = "casino:Wallet.Withdrawn"
FUNDS_HELD = "casino:Wallet.FundsHeld"
HOLD_RELEASED = "casino:Wallet.HoldReleased"
ROUND_SETTLED = "casino:Wallet.RoundSettled"
COMMISSION_CHARGED = "casino:Wallet.CommissionCharged"
POINTS_CHANGED = "casino:Wallet.PointsChanged"
BANK_HELD = "casino:Wallet.BankHeld"
BANK_RELEASED = "casino:Wallet.BankReleased"
PROTECTED = "casino:Wallet.Protected"
STAKE_TAKEN = "casino:Wallet.StakeTaken"  # a third-party game's bet (rules.md 10)
CREDITED = "casino:Wallet.Credited"  # a third-party game's win, or a bet rolled back
POINTS_CHANGE_MAX = 1_000_000_000  # One operator adjustment, either way.
REASON_LENGTH_MAX = 500
# A wallet's balance never passes this (rules.md 6), even if every stake it holds won.
BALANCE_CENTS_MAX = 100_000_000_000_000  # $1,000,000,000,000.00
# The most one held cent can win: a tie pays at most 100 to 1 (the bound of every
# CASINO_*_TIE_PAYS), every other bet less, and a dealer's or a bank's hold covers at
# least what it can win. So `balance + 100 * held` bounds the balance after any deal.
WIN_PER_CENT_HELD_MAX = 100
Postings = list[list[Any]]  # [[account: str, cents: int], ...]; lists survive JSON, tuples do not


class Wallet(FastCopy, Aggregate):
    TOPIC = WALLET
    # Version 2 says whether the player has a protection (rules.md 7); a snapshot
    # taken before has none, as no player had one then.
    class_version = 2

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["protected"] = False

    class Created(Aggregate.Created):
        TOPIC = OPENED
        player_id: str
        mode: str

    @staticmethod
    def create_id(player_id: str, mode: str) -> UUID:
        return wallet_uuid(player_id, mode)

    @event(Created)
    def __init__(self, player_id: str, mode: str) -> None:
        self.player_id = player_id
        self.mode = mode
        self.balance_cents = 0
        self.holds: dict[str, int] = {}  # round id -> cents reserved for that round
        self.points = 0
        self.last_round: dict[str, Any] | None = None
        # Whether the player has limits or an exclusion (domain/protection.py): every
        # save reads it here, in the wallet it saves anyway, before looking for them.
        self.protected = False

    # Read side.

    @property
    def account(self) -> str:
        return player_account(self.player_id)

    @property
    def held_cents(self) -> int:
        return sum(self.holds.values())

    @property
    def available_cents(self) -> int:
        return self.balance_cents - self.held_cents

    @property
    def worst_case_balance_cents(self) -> int:
        """The balance if every stake this wallet holds won the largest payout there is."""
        return self.balance_cents + WIN_PER_CENT_HELD_MAX * self.held_cents

    def ceiling_problem(self, deposit_cents: int = 0, hold_cents: int = 0) -> DomainError | None:
        """The refusal of a deposit or a hold that could take the balance past its ceiling,
        or None; it says how much more would still be allowed."""
        room = BALANCE_CENTS_MAX - self.worst_case_balance_cents
        if deposit_cents + WIN_PER_CENT_HELD_MAX * hold_cents <= room:
            return None
        allowed = max(room, 0) if deposit_cents else max(room, 0) // WIN_PER_CENT_HELD_MAX
        what = "deposit" if deposit_cents else "hold"
        return BalanceLimitExceeded(
            f"cannot {what} {format_cents(deposit_cents or hold_cents)}: the balance could pass "
            f"the ceiling of {format_cents(BALANCE_CENTS_MAX)} per wallet; at most "
            f"{format_cents(allowed)} is allowed",
            limit=format_cents(BALANCE_CENTS_MAX),
            allowed=format_cents(allowed),
        )

    # Commands: each validates, then triggers one event.

    def deposit(self, transaction_id: str, amount_cents: int) -> None:
        _check_positive(amount_cents)
        _raise(self.ceiling_problem(deposit_cents=amount_cents))
        postings = [[self.account, amount_cents], [CASHIER, -amount_cents]]
        self._deposited(transaction_id, amount_cents, postings, self.balance_cents + amount_cents)

    def withdraw(self, transaction_id: str, amount_cents: int) -> None:
        _check_positive(amount_cents)
        self._check_available(amount_cents, "withdraw")
        postings = [[self.account, -amount_cents], [CASHIER, amount_cents]]
        self._withdrawn(transaction_id, amount_cents, postings, self.balance_cents - amount_cents)

    def hold(self, round_id: str, amount_cents: int) -> None:
        _check_positive(amount_cents)
        self._check_available(amount_cents, "hold")
        _raise(self.ceiling_problem(hold_cents=amount_cents))
        self._funds_held(round_id, amount_cents)

    def bank_at(self, table_id: str) -> int:
        """The bank this wallet holds at a player-banked table (rules.md 2.3, 2.4)."""
        return self.holds.get(bank_key(table_id), 0)

    def hold_bank(self, table_id: str, round_id: str | None, amount_cents: int) -> None:
        """Put up (or add to) a bank: held like a stake, until the bank is released.
        `round_id` names the coup whose winnings grow it, if one does."""
        _check_positive(amount_cents)
        self._check_available(amount_cents, "put up as the bank")
        if round_id is None:  # A bank grown by a coup's winnings is not refused mid-deal.
            _raise(self.ceiling_problem(hold_cents=amount_cents))
        self._bank_held(table_id, round_id, amount_cents)

    def release_bank(self, table_id: str, round_id: str | None, amount_cents: int) -> None:
        """Give part or all of a bank back: what a lost coup took, or the bank withdrawn."""
        assert 0 < amount_cents <= self.bank_at(table_id), (amount_cents, self.bank_at(table_id))
        self._bank_released(table_id, round_id, amount_cents)

    def release(self, round_id: str, amount_cents: int | None = None) -> None:
        """Give back part (or, with no amount, all) of a round's hold."""
        held = self._held_for(round_id)
        amount = held if amount_cents is None else amount_cents
        if not 0 < amount <= held:
            raise InvalidAmount(
                f"cannot release {format_cents(amount)}: round holds {format_cents(held)}"
            )
        self._hold_released(round_id, amount)

    def settle(self, round_id: str, net_cents: int, counter_account: str | None) -> None:
        """End a round for this wallet: release its hold and post the result.

        `counter_account` is the casino account on the other side (house games),
        or None when another wallet posts the other leg in the same save (P2P).
        """
        held = self.holds.get(round_id, 0)
        available_after = self.available_cents + held + net_cents
        assert available_after >= 0, "a round's result can never exceed what it held"
        postings: Postings = [[self.account, net_cents]]
        if counter_account is not None:
            postings.append([counter_account, -net_cents])
        self._settled(round_id, net_cents, held, postings, self.balance_cents + net_cents)

    def charge_commission(self, round_id: str, commission_cents: int) -> None:
        """Charge the P2P dealer's commission for a round into casino:commission."""
        assert commission_cents >= 0
        assert commission_cents <= self.available_cents, "commission is covered by the hold"
        postings = [[self.account, -commission_cents], [CASINO_COMMISSION, commission_cents]]
        self._commission_charged(
            round_id, commission_cents, postings, self.balance_cents - commission_cents
        )

    def take_stake(
        self, round_id: str, transaction_id: str, amount_cents: int, house_account: str
    ) -> int:
        """A third-party game's stake, taken at once, nothing held (rules.md 10): the one
        way a provider's bet takes money. Cash only for now; bonus money (rules.md 9)
        is to take what cash lacks, where the provider allows it. Returns the cash taken."""
        _check_positive(amount_cents)
        if amount_cents > self.available_cents:
            raise InsufficientFunds(
                f"cannot bet {format_cents(amount_cents)}: "
                f"only {format_cents(self.available_cents)} available",
                available=format_cents(self.available_cents),
                shortfall=format_cents(amount_cents - self.available_cents),
                balance=format_cents(self.balance_cents),
            )
        postings = [[self.account, -amount_cents], [house_account, amount_cents]]
        balance_after = self.balance_cents - amount_cents
        self._stake_taken(round_id, transaction_id, amount_cents, postings, balance_after)
        return amount_cents

    def credit(
        self, round_id: str, transaction_id: str, kind: str, amount_cents: int, house_account: str
    ) -> None:
        """A third-party game's win (`kind` "win", may be zero), or what a rolled-back bet
        took given back ("rollback"): never refused but for the balance's ceiling."""
        assert kind in ("win", "rollback") and amount_cents >= 0, (kind, amount_cents)
        _raise(self.ceiling_problem(deposit_cents=amount_cents))
        postings = [[self.account, amount_cents], [house_account, -amount_cents]]
        balance_after = self.balance_cents + amount_cents
        self._credited(round_id, transaction_id, kind, amount_cents, postings, balance_after)

    def adjust_points(self, change: int, reason: str) -> None:
        """An operator's adjustment: a non-zero whole number of points, with a reason."""
        check_points_change(change, reason)
        self.change_points(change, "operator", None, reason.strip())

    def protect(self) -> None:
        """The player now has a protection: every later save of this wallet is guarded."""
        if not self.protected:
            self._protected()

    def change_points(self, change: int, role: str, round_id: str | None, reason: str) -> None:
        """Move dealer points; they may go below zero (rules.md 2.1)."""
        self._points_changed(change, role, round_id, reason, self.points + change)

    # Events: the bodies re-run on every replay, so they only check and assign.

    @event("Deposited", topic=DEPOSITED)
    def _deposited(
        self, transaction_id: str, amount_cents: int, postings: Postings, balance_after_cents: int
    ) -> None:
        self._post(postings, balance_after_cents)

    @event("Withdrawn", topic=WITHDRAWN)
    def _withdrawn(
        self, transaction_id: str, amount_cents: int, postings: Postings, balance_after_cents: int
    ) -> None:
        self._post(postings, balance_after_cents)

    @event("FundsHeld", topic=FUNDS_HELD)
    def _funds_held(self, round_id: str, amount_cents: int) -> None:
        self.holds[round_id] = self.holds.get(round_id, 0) + amount_cents

    @event("HoldReleased", topic=HOLD_RELEASED)
    def _hold_released(self, round_id: str, amount_cents: int) -> None:
        remaining = self.holds[round_id] - amount_cents
        if remaining:
            self.holds[round_id] = remaining
        else:
            del self.holds[round_id]

    @event("BankHeld", topic=BANK_HELD)
    def _bank_held(self, table_id: str, round_id: str | None, amount_cents: int) -> None:
        key = bank_key(table_id)
        self.holds[key] = self.holds.get(key, 0) + amount_cents

    @event("BankReleased", topic=BANK_RELEASED)
    def _bank_released(self, table_id: str, round_id: str | None, amount_cents: int) -> None:
        key = bank_key(table_id)
        remaining = self.holds[key] - amount_cents
        if remaining:
            self.holds[key] = remaining
        else:
            del self.holds[key]

    @event("RoundSettled", topic=ROUND_SETTLED)
    def _settled(
        self,
        round_id: str,
        net_cents: int,
        released_cents: int,
        postings: Postings,
        balance_after_cents: int,
    ) -> None:
        assert self.holds.pop(round_id, 0) == released_cents, "settled a hold it did not have"
        self._post(postings, balance_after_cents)
        self.last_round = {"round_id": round_id, "net_cents": net_cents, "commission_cents": 0}

    @event("CommissionCharged", topic=COMMISSION_CHARGED)
    def _commission_charged(
        self, round_id: str, commission_cents: int, postings: Postings, balance_after_cents: int
    ) -> None:
        self._post(postings, balance_after_cents)
        if self.last_round is not None and self.last_round["round_id"] == round_id:
            self.last_round["net_cents"] -= commission_cents
            self.last_round["commission_cents"] += commission_cents

    @event("StakeTaken", topic=STAKE_TAKEN)
    def _stake_taken(
        self,
        round_id: str,
        transaction_id: str,
        amount_cents: int,
        postings: Postings,
        balance_after_cents: int,
    ) -> None:
        self._post(postings, balance_after_cents)

    @event("Credited", topic=CREDITED)
    def _credited(
        self,
        round_id: str,
        transaction_id: str,
        kind: str,
        amount_cents: int,
        postings: Postings,
        balance_after_cents: int,
    ) -> None:
        self._post(postings, balance_after_cents)

    @event("Protected", topic=PROTECTED)
    def _protected(self) -> None:
        self.protected = True

    @event("PointsChanged", topic=POINTS_CHANGED)
    def _points_changed(
        self, change: int, role: str, round_id: str | None, reason: str, points_after: int
    ) -> None:
        self.points = points_after

    # Helpers.

    def _post(self, postings: Postings, balance_after_cents: int) -> None:
        """Apply the player's leg; the balance it yields must match the recorded one."""
        own_change = sum(cents for account, cents in postings if account == self.account)
        assert self.balance_cents + own_change == balance_after_cents, "ledger out of step"
        self.balance_cents = balance_after_cents

    def _check_available(self, amount_cents: int, action: str) -> None:
        if amount_cents > self.available_cents:
            raise InsufficientFunds(
                f"cannot {action} {format_cents(amount_cents)}: "
                f"only {format_cents(self.available_cents)} available",
                available=format_cents(self.available_cents),
                shortfall=format_cents(amount_cents - self.available_cents),
            )

    def _held_for(self, round_id: str) -> int:
        if round_id not in self.holds:
            raise UnknownHold(f"no funds are held for round {round_id}")
        return self.holds[round_id]


def bank_key(table_id: str) -> str:
    """A bank is held under its table, beside the holds of rounds (kept by round id)."""
    return f"bank:{table_id}"


@dataclass(frozen=True)
class Movement:
    """A deposit or withdrawal: the wallet after it, and the transaction's id."""

    wallet: Wallet
    transaction_id: str


def load_wallet(unit: Unit, player_id: str, mode: str) -> Wallet:
    check_player_id(player_id)
    check_mode(mode)
    return unit.get(Wallet, wallet_uuid(player_id, mode), lambda: unknown_player(player_id))


def check_points_change(change: int, reason: str) -> None:
    """An operator's adjustment of dealer points: non-zero, bounded, with a reason."""
    if change == 0 or abs(change) > POINTS_CHANGE_MAX:
        raise InvalidPointsChange(
            f"change must be a non-zero whole number of points within ±{POINTS_CHANGE_MAX}"
        )
    if not reason.strip() or len(reason) > REASON_LENGTH_MAX:
        raise InvalidPointsChange(f"a reason of 1-{REASON_LENGTH_MAX} characters is required")


def check_postings_balance(aggregates: list[Aggregate]) -> None:
    """Pair assertion on the write path: every save's postings sum to zero per mode."""
    totals: dict[str, int] = {}
    for aggregate in aggregates:
        if not isinstance(aggregate, Wallet):
            continue
        for pending in aggregate.pending_events:
            for _account, cents in getattr(pending, "postings", ()):
                totals[aggregate.mode] = totals.get(aggregate.mode, 0) + cents
    if any(totals.values()):
        # Not an assert: this must hold even when Python runs with -O.
        raise UnbalancedPostings(f"a save's postings do not sum to zero per mode: {totals}")


class UnbalancedPostings(Exception):
    """Our bug, never a client's: a save would break double entry. Nothing is saved."""


def _raise(problem: DomainError | None) -> None:
    if problem is not None:
        raise problem


def _check_positive(amount_cents: int) -> None:
    if amount_cents <= 0:
        raise InvalidAmount("amount must be greater than zero")


def topic_of(event: object) -> str:
    """The stable topic of a stored event (how read models recognise events)."""
    return str(getattr(type(event), "TOPIC", ""))
