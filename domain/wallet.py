"""The wallet aggregate: one per player and mode, the player's sub-ledger.

Every event that moves money carries its `postings`: [account, cents] pairs of
the double-entry journal. A wallet event posts the player's own leg, plus the
counter leg when the counterparty is a casino account or the cashier. A
transfer between two players (P2P settlement) posts one leg on each wallet in
the same atomic save; the application checks that every save balances.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.bonus import (
    ACTIVE,
    BONUSES_PAST_KEPT_MAX,
    BONUSES_WAITING_MAX,
    CASINO_BONUS,
    CONVERTED,
    ENDED,
    EXPIRED,
    FORFEITED,
    WAITING,
    Grant,
    Split,
    bonus_account,
    check_max_bet,
    check_surebet,
    conversion,
    split_return,
    split_stake,
)
from domain.copying import FastCopy
from domain.errors import (
    BalanceLimitExceeded,
    BonusEnded,
    BonusQueueFull,
    DomainError,
    InsufficientFunds,
    InvalidAmount,
    InvalidBonus,
    InvalidPointsChange,
    UnknownBonus,
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
BONUS_GRANTED = "casino:Wallet.BonusGranted"
BONUS_HELD = "casino:Wallet.BonusHeld"
BONUS_RELEASED = "casino:Wallet.BonusReleased"
BONUS_SETTLED = "casino:Wallet.BonusSettled"
BONUS_CONVERTED = "casino:Wallet.BonusConverted"
BONUS_FORFEITED = "casino:Wallet.BonusForfeited"
BONUS_EXPIRED = "casino:Wallet.BonusExpired"
# Held money of an ended bonus given back by a bet taken back or a void: it leaves the
# bonus account as it would have as its round settled (rules.md 9).
ENDED_BONUS_RELEASED = "casino:Wallet.EndedBonusReleased"
STAKE_TAKEN = "casino:Wallet.StakeTaken"  # a third-party game's bet (rules.md 10)
CREDITED = "casino:Wallet.Credited"  # a third-party game's win, or a bet rolled back
BONUS_WAGERED = "casino:Wallet.BonusWagered"  # a third-party round's stakes, counted at its end
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
    # taken before has none, as no player had one then. Version 3 holds bonus money
    # (rules.md 9), which no wallet had before.
    class_version = 3

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["protected"] = False

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        state.update(_no_bonus())

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
        # Bonus money (rules.md 9); `_no_bonus` says the same for older snapshots.
        self.bonus_cents = 0  # the bonus account: every bonus's balance, held included
        self.bonuses: dict[str, dict[str, Any]] = {}  # active, waiting, latest ended
        self.active_bonus_id: str | None = None
        self.bonus_waiting: list[str] = []  # in line, first in first out
        self.bonus_rounds: dict[str, dict[str, Any]] = {}  # round id -> bonus, held, before

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
        """Cash and bonus if every stake this wallet holds won the largest payout there is."""
        held = self.held_cents + self.bonus_held_cents
        return self.balance_cents + self.bonus_cents + WIN_PER_CENT_HELD_MAX * held

    @property
    def active_bonus(self) -> dict[str, Any] | None:
        """The bonus being wagered (rules.md 9), or None."""
        return None if self.active_bonus_id is None else self.bonuses[self.active_bonus_id]

    @property
    def bonus_available_cents(self) -> int:
        """The active bonus's money not held in open rounds: what a stake may use."""
        bonus = self.active_bonus
        return 0 if bonus is None else bonus["balance_cents"] - bonus["held_cents"]

    @property
    def bonus_held_cents(self) -> int:
        return sum(entry["held_cents"] for entry in self.bonus_rounds.values())

    def round_held_cents(self, round_id: str) -> int:
        """Cash and bonus held for one round."""
        entry = self.bonus_rounds.get(round_id)
        return self.holds.get(round_id, 0) + (entry["held_cents"] if entry else 0)

    def bonuses_in_order(self) -> list[dict[str, Any]]:
        """The active bonus, those waiting in line, then the ended ones, oldest first."""
        line = [self.active_bonus_id, *self.bonus_waiting]
        ended = [bonus for bonus in self.bonuses.values() if bonus["status"] in ENDED]
        return [self.bonuses[bonus_id] for bonus_id in line if bonus_id is not None] + ended

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

    def hold(
        self,
        round_id: str,
        amount_cents: int,
        house: bool = False,
        surebet: bool = False,
        spot_cents: int | None = None,
    ) -> Split:
        """Hold a stake: cash first, then the active bonus in a game the house banks
        (`house`); a player-banked game takes cash only. `surebet`: the player's bets in
        the round, this one included, win together more than 90% of the time (rules.md 9).
        `spot_cents`: the player's whole stake on the bet's spot (a blackjack hand, a
        double included) with this one, which the bonus's maximum stake bounds (the
        stake alone where not given). Returns how much of the stake was cash and how
        much bonus."""
        _check_positive(amount_cents)
        bonus = self.active_bonus if house else None
        entry = self.bonus_rounds.get(round_id)
        if bonus is not None and entry is not None and entry["bonus_id"] != bonus["bonus_id"]:
            bonus = None  # the round's stakes belong to a bonus now ended: cash only
        spot = max(amount_cents, spot_cents or 0)
        split = self._split(amount_cents, bonus, house, "hold", spot)
        if bonus is not None:
            before = bonus["balance_cents"] if entry is None else entry["before_cents"]
            staked = split.bonus_cents + (0 if entry is None else entry["held_cents"])
            check_surebet(surebet, staked, before)
        _raise(self.ceiling_problem(hold_cents=amount_cents))
        if split.cash_cents:
            self._funds_held(round_id, split.cash_cents)
        if bonus is not None:  # every bet under a bonus, for the audit to check it
            self._bonus_held(
                round_id,
                bonus["bonus_id"],
                split.bonus_cents,
                amount_cents,
                before,
                bonus["max_bet_cents"],
                spot,
            )
        return split

    def third_party_split(self, amount_cents: int, bonus_allowed: bool) -> Split:
        """How a third-party game's bet would take the money (rules.md 9, 10), changing
        nothing: cash first, then the active bonus where the provider allows it
        (`bonus_allowed`), within the bonus's maximum stake (409 `bonus_max_bet`);
        409 `insufficient_funds` when they do not cover it. The provider's call moves
        the cash part and the bonus part as this says (`used_cash`, `used_bonus`); the
        surebet rule does not apply (a provider's bets carry no outcome we know)."""
        _check_positive(amount_cents)
        return self._split(amount_cents, self.active_bonus if bonus_allowed else None, True, "bet")

    def bank_at(self, table_id: str) -> int:
        """The bank this wallet holds at a player-banked table (rules.md 2.3, 2.4)."""
        return self.holds.get(bank_key(table_id), 0)

    def hold_bank(self, table_id: str, round_id: str | None, amount_cents: int) -> None:
        """Put up (or add to) a bank: held like a stake, until the bank is released.
        `round_id` names the coup whose winnings grow it, if one does."""
        _check_positive(amount_cents)
        split_stake(amount_cents, self.available_cents, self.bonus_available_cents, False)
        self._check_available(amount_cents, "put up as the bank")
        if round_id is None:  # A bank grown by a coup's winnings is not refused mid-deal.
            _raise(self.ceiling_problem(hold_cents=amount_cents))
        self._bank_held(table_id, round_id, amount_cents)

    def release_bank(self, table_id: str, round_id: str | None, amount_cents: int) -> None:
        """Give part or all of a bank back: what a lost coup took, or the bank withdrawn."""
        assert 0 < amount_cents <= self.bank_at(table_id), (amount_cents, self.bank_at(table_id))
        self._bank_released(table_id, round_id, amount_cents)

    def release(self, round_id: str, amount_cents: int | None = None) -> None:
        """Give back part of a round's hold (bets taken back), or with no amount all of
        it (the round voided): the bonus first (it was taken last), then cash. Bets
        taken back keep the round's bonus record while its bonus is active (the
        balance before the round's first bet bounds a surebet until it settles, rules.md
        9), and leave the stakes it counts; a void ends it."""
        held = self._held_for(round_id)
        amount = held if amount_cents is None else amount_cents
        if not 0 < amount <= held:
            raise InvalidAmount(
                f"cannot release {format_cents(amount)}: round holds {format_cents(held)}"
            )
        entry = self.bonus_rounds.get(round_id)
        bonus_part = 0 if entry is None else min(amount, entry["held_cents"])
        if entry is not None and self.bonuses[entry["bonus_id"]]["status"] in ENDED:
            whole = bonus_part == entry["held_cents"]  # an ended bonus's record: done
            if bonus_part:  # (its records hold money: those without went as it ended)
                self._release_ended_bonus(round_id, entry["bonus_id"], bonus_part, whole)
        elif entry is not None:
            # A bet taken back leaves the stakes counted (never fewer than none); None:
            # a record kept from before they were.
            counted = entry.get("staked_cents")
            staked = None if counted is None else max(0, counted - amount)
            whole = amount_cents is None
            self._bonus_released(round_id, entry["bonus_id"], bonus_part, whole, staked)
        if amount > bonus_part:
            self._hold_released(round_id, amount - bonus_part)

    def void_round(self, round_id: str) -> None:
        """A round voided: what it holds goes back, and its bonus record goes with it,
        even one kept after its bets were all taken back."""
        entry = self.bonus_rounds.get(round_id)
        if self.round_held_cents(round_id):
            self.release(round_id)
        elif entry is not None:
            self._bonus_released(round_id, entry["bonus_id"], 0, True)

    def settle(
        self, round_id: str, net_cents: int, counter_account: str | None, wagered_cents: int = 0
    ) -> Split | None:
        """End a round for this wallet: release its hold and post the result.

        `counter_account` is the casino account on the other side (house games),
        or None when another wallet posts the other leg in the same save (P2P).
        What the round returns goes back to cash and bonus in the proportion they were
        staked; `wagered_cents` is what it counts towards the bonus active when it was
        staked (rules.md 9), met requirements convert in the same save. Returns the
        result's cash and bonus parts where a bonus was in the round, else None.
        """
        held = self.holds.get(round_id, 0)
        entry = self.bonus_rounds.get(round_id)
        bonus_held = 0 if entry is None else entry["held_cents"]
        available_after = self.available_cents + held + bonus_held + net_cents
        assert available_after >= 0, "a round's result can never exceed what it held"
        back = None
        if bonus_held:  # a house game: what it returns is never below zero
            back = split_return(held + bonus_held + net_cents, Split(held, bonus_held))
        cash_net = net_cents if back is None else back.cash_cents - held
        postings: Postings = [[self.account, cash_net]]
        if counter_account is not None:
            postings.append([counter_account, -cash_net])
        self._settled(round_id, cash_net, held, postings, self.balance_cents + cash_net)
        if entry is None:
            return None
        assert counter_account is not None, "bonus money is staked against the house only"
        bonus_net = self._settle_bonus(round_id, entry, back, counter_account, wagered_cents)
        return Split(cash_net, bonus_net)

    # Bonus money (rules.md 9).

    def grant_bonus(
        self, bonus_id: str, grant: Grant, wagering_cap: int, now: datetime.datetime
    ) -> None:
        """An operator's grant: active at once, or in line behind the active one."""
        if self.mode != "real":
            raise InvalidBonus("bonus money is real money only")
        grant.check(wagering_cap)
        if len(self.bonus_waiting) >= BONUSES_WAITING_MAX:
            raise BonusQueueFull(
                f"{BONUSES_WAITING_MAX} bonuses already wait in line behind the active one"
            )
        _raise(self.ceiling_problem(deposit_cents=grant.amount_cents))
        postings = [[bonus_account(self.player_id), grant.amount_cents],
                    [CASINO_BONUS, -grant.amount_cents]]  # fmt: skip
        self._bonus_granted(
            bonus_id,
            grant.amount_cents,
            grant.amount_cents * grant.wagering,
            grant.expires_at(now),
            grant.max_bet_cents,
            grant.max_conversion_cents,
            now.isoformat(),
            postings,
        )

    def bonus(self, bonus_id: str) -> dict[str, Any]:
        if bonus_id not in self.bonuses:
            raise UnknownBonus(f"player {self.player_id} has no bonus {bonus_id[:64]}")
        return self.bonuses[bonus_id]

    def forfeit_bonus(self, bonus_id: str, reason: str) -> dict[str, Any]:
        """The player or an operator gives a bonus up: what is not held goes back to
        casino:bonus at once, what is held as its rounds settle."""
        bonus = self.bonus(bonus_id)
        if bonus["status"] in ENDED:
            raise BonusEnded(f"bonus {bonus_id} is {bonus['status']} already")
        self._end_bonus(bonus, FORFEITED, reason)
        return bonus

    def forfeit_every_bonus(self, reason: str) -> list[str]:
        """A self-exclusion or time-out forfeits the active bonus and every waiting one."""
        ended = [self.active_bonus_id] if self.active_bonus_id is not None else []
        ended += self.bonus_waiting
        for bonus_id in ended:
            self._end_bonus(self.bonuses[bonus_id], FORFEITED, reason)
        return ended

    def expire_bonus(self, bonus_id: str, now: datetime.datetime) -> bool:
        """The worker's: end a bonus past its expiry; says whether it did."""
        bonus = self.bonuses.get(bonus_id)
        if bonus is None or bonus["status"] in ENDED:
            return False
        if not _expired_by(bonus, now):
            return False
        self._end_bonus(bonus, EXPIRED, "expired")
        return True

    def end_expired_bonuses(self, now: datetime.datetime) -> list[str]:
        """End as expired every bonus, active or waiting, whose expiry has come by `now`
        (the command's clock reading): a stake or a settlement calls this first, so a
        bonus past its expiry is never staked, counted or converted while the worker
        has yet to end it (rules.md 9). Returns the bonuses ended, in line order."""
        line = [bonus_id for bonus_id in (self.active_bonus_id, *self.bonus_waiting)
                if bonus_id is not None]  # fmt: skip
        due = [bonus_id for bonus_id in line if _expired_by(self.bonuses[bonus_id], now)]
        for bonus_id in due:
            self._end_bonus(self.bonuses[bonus_id], EXPIRED, "expired")
        return due

    def charge_commission(self, round_id: str, commission_cents: int) -> None:
        """Charge the P2P dealer's commission for a round into casino:commission."""
        assert commission_cents >= 0
        assert commission_cents <= self.available_cents, "commission is covered by the hold"
        postings = [[self.account, -commission_cents], [CASINO_COMMISSION, commission_cents]]
        self._commission_charged(
            round_id, commission_cents, postings, self.balance_cents - commission_cents
        )

    def take_stake(
        self,
        round_id: str,
        transaction_id: str,
        amount_cents: int,
        house_account: str,
        bonus_allowed: bool = False,
    ) -> Split:
        """A third-party game's stake, taken at once, nothing held (rules.md 10): the one
        way a provider's bet takes money. Cash first, then the active bonus where the
        provider allows it (`bonus_allowed`, within the bonus's maximum stake); the bonus
        part posts from the player's bonus account in the same event. Returns the split."""
        _check_positive(amount_cents)
        usable = self.third_party_bonus_cents(bonus_allowed)
        if amount_cents > self.available_cents + usable:
            raise InsufficientFunds(
                f"cannot bet {format_cents(amount_cents)}: "
                f"only {format_cents(self.available_cents + usable)} available",
                available=format_cents(self.available_cents + usable),
                shortfall=format_cents(amount_cents - self.available_cents - usable),
                balance=format_cents(self.balance_cents + usable),
            )
        split = self.third_party_split(amount_cents, bonus_allowed)
        bonus_id = self.active_bonus_id if bonus_allowed else None
        postings = [[self.account, -split.cash_cents],
                    [bonus_account(self.player_id), -split.bonus_cents],
                    [house_account, amount_cents]]  # fmt: skip
        self._stake_taken(
            round_id,
            transaction_id,
            amount_cents,
            [posting for posting in postings if posting[1] or posting[0] == self.account],
            self.balance_cents - split.cash_cents,
            bonus_id,
            split.bonus_cents,
        )
        return split

    def third_party_bonus_cents(self, bonus_allowed: bool) -> int:
        """The bonus a provider's game may stake: the active bonus's money not held,
        where the provider allows bonus money (rules.md 10), else none."""
        return self.bonus_available_cents if bonus_allowed else 0

    def credit(
        self,
        round_id: str,
        transaction_id: str,
        kind: str,
        amount_cents: int,
        house_account: str,
        bonus_cents: int = 0,
        bonus_id: str | None = None,
    ) -> None:
        """A third-party game's win (`kind` "win", may be zero), or what a rolled-back bet
        took given back ("rollback"): never refused but for the balance's ceiling.
        `bonus_cents` of it is the bonus share of `bonus_id` (rules.md 9): back to that
        bonus while it is active; once it ended, where its money went (converted: to
        cash, within its maximum conversion; forfeited or expired: to casino:bonus)."""
        assert kind in ("win", "rollback") and amount_cents >= 0, (kind, amount_cents)
        assert 0 <= bonus_cents <= amount_cents and (bonus_id is not None or not bonus_cents)
        _raise(self.ceiling_problem(deposit_cents=amount_cents))
        bonus = None if bonus_id is None else self.bonuses.get(bonus_id)
        status = None if not bonus_cents else FORFEITED if bonus is None else bonus["status"]
        to_cash = to_bonus = 0
        if status == ACTIVE:
            to_bonus = bonus_cents
        elif status == CONVERTED and bonus is not None:
            max_conversion, converted = bonus["max_conversion_cents"], bonus["converted_cents"]
            to_cash = conversion(bonus_cents, max_conversion, converted).cash_cents
        cash = amount_cents - bonus_cents + to_cash
        postings = [[self.account, cash], [bonus_account(self.player_id), to_bonus],
                    [CASINO_BONUS, bonus_cents - to_bonus - to_cash],
                    [house_account, -amount_cents]]  # fmt: skip
        self._credited(
            round_id,
            transaction_id,
            kind,
            amount_cents,
            [p for p in postings if p[1] or p[0] in (self.account, house_account)],
            self.balance_cents + cash,
            bonus_id if bonus_cents else None,
            bonus_cents,
            to_cash,
            status,
        )

    def count_wagering(self, round_id: str, bonus_id: str | None, wagered_cents: int) -> None:
        """A third-party round has ended: its stakes placed under `bonus_id` (net of
        rollbacks) count towards that bonus if it is still active (rules.md 9), and a
        met requirement converts in the same save, as a settled house round does."""
        bonus = None if bonus_id is None else self.bonuses.get(bonus_id)
        if bonus is None or bonus["status"] != ACTIVE or wagered_cents <= 0:
            return
        self._bonus_wagered(round_id, bonus["bonus_id"], wagered_cents)
        if bonus["wagered_cents"] >= bonus["wagering_required_cents"]:
            self._convert(bonus, round_id)

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
        bonus_id: str | None = None,  # the active bonus, where the provider allows it
        bonus_cents: int = 0,  # of `amount_cents`, from that bonus (older events: none)
    ) -> None:
        self._post(postings, balance_after_cents)
        if bonus_id is not None:
            self.bonuses[bonus_id]["balance_cents"] += self._post_bonus(postings)

    @event("Credited", topic=CREDITED)
    def _credited(
        self,
        round_id: str,
        transaction_id: str,
        kind: str,
        amount_cents: int,
        postings: Postings,
        balance_after_cents: int,
        bonus_id: str | None = None,  # the bonus a share came from (older events: none)
        bonus_cents: int = 0,  # that share of `amount_cents`
        to_cash_cents: int = 0,  # of the share, to cash: its bonus had converted
        bonus_status: str | None = None,  # that bonus's status then
    ) -> None:
        self._post(postings, balance_after_cents)
        bonus = None if bonus_id is None else self.bonuses.get(bonus_id)
        if bonus is not None:
            bonus["balance_cents"] += self._post_bonus(postings)
            bonus["converted_cents"] += to_cash_cents

    @event("BonusWagered", topic=BONUS_WAGERED)
    def _bonus_wagered(self, round_id: str, bonus_id: str, wagered_cents: int) -> None:
        self.bonuses[bonus_id]["wagered_cents"] += wagered_cents

    @event("Protected", topic=PROTECTED)
    def _protected(self) -> None:
        self.protected = True

    @event("BonusGranted", topic=BONUS_GRANTED)
    def _bonus_granted(
        self,
        bonus_id: str,
        amount_cents: int,
        wagering_required_cents: int,
        expires_at: str,
        max_bet_cents: int | None,
        max_conversion_cents: int | None,
        granted_at: str,
        postings: Postings,
    ) -> None:
        status = WAITING if self.active_bonus_id is not None else ACTIVE
        self.bonuses[bonus_id] = {
            "bonus_id": bonus_id,
            "status": status,
            "amount_cents": amount_cents,
            "balance_cents": amount_cents,
            "held_cents": 0,
            "wagering_required_cents": wagering_required_cents,
            "wagered_cents": 0,
            "expires_at": expires_at,
            "max_bet_cents": max_bet_cents,
            "max_conversion_cents": max_conversion_cents,
            "converted_cents": 0,
            "granted_at": granted_at,
        }
        if status == ACTIVE:
            self.active_bonus_id = bonus_id
        else:
            self.bonus_waiting.append(bonus_id)
        self._post_bonus(postings)

    @event("BonusHeld", topic=BONUS_HELD)
    def _bonus_held(
        self,
        round_id: str,
        bonus_id: str,
        amount_cents: int,
        stake_cents: int,
        balance_before_cents: int,
        max_bet_cents: int | None,
        spot_cents: int | None = None,
    ) -> None:
        """`amount_cents` of the bonus held for a bet of `stake_cents` (cash first); with
        what the audit checks the bet against: the bonus balance before the round's
        first bet, and the maximum stake, which bounds the player's whole stake on the
        spot, `spot_cents` (rules.md 9; None in events stored before it was recorded)."""
        bonus = self.bonuses[bonus_id]
        entry = self.bonus_rounds.get(round_id)
        if entry is None:
            entry = {"bonus_id": bonus_id, "held_cents": 0, "before_cents": balance_before_cents}
            # Since bets record their spot, the record counts its stakes; one replayed
            # from older events stays as it was (its snapshots compare equal).
            if spot_cents is not None:
                entry["staked_cents"] = 0
            self.bonus_rounds[round_id] = entry
        entry["held_cents"] += amount_cents
        bonus["held_cents"] += amount_cents
        if "staked_cents" in entry:  # the stakes the round counts towards the bonus
            entry["staked_cents"] += stake_cents

    @event("BonusReleased", topic=BONUS_RELEASED)
    def _bonus_released(
        self,
        round_id: str,
        bonus_id: str,
        amount_cents: int,
        whole: bool,
        staked_cents: int | None = None,
    ) -> None:
        """`amount_cents` of the active bonus given back; `whole`: the round's record
        goes (a void), else it stays, with `staked_cents` the round's stakes under the
        bonus still counted (None in events stored before it was recorded)."""
        self._unhold_bonus(round_id, bonus_id, amount_cents, whole)
        if not whole and staked_cents is not None:
            self.bonus_rounds[round_id]["staked_cents"] = staked_cents
        self._forget_bonus(bonus_id)

    @event("EndedBonusReleased", topic=ENDED_BONUS_RELEASED)
    def _ended_bonus_released(
        self,
        round_id: str,
        bonus_id: str,
        amount_cents: int,
        whole: bool,
        to_cash_cents: int,
        bonus_status: str,
        postings: Postings,
        balance_after_cents: int,
    ) -> None:
        """`amount_cents` of an ended bonus released, and gone from the bonus account:
        `to_cash_cents` of it to the cash (a converted bonus), the rest to casino:bonus."""
        self._unhold_bonus(round_id, bonus_id, amount_cents, whole)
        bonus = self.bonuses[bonus_id]
        bonus["converted_cents"] += to_cash_cents
        bonus["balance_cents"] += self._post_bonus(postings)
        self._post(postings, balance_after_cents)
        self._forget_bonus(bonus_id)

    @event("BonusSettled", topic=BONUS_SETTLED)
    def _bonus_settled(
        self,
        round_id: str,
        bonus_id: str,
        net_cents: int,
        released_cents: int,
        wagered_cents: int,
        to_cash_cents: int,
        bonus_status: str,
        postings: Postings,
        balance_after_cents: int,
    ) -> None:
        entry = self.bonus_rounds.pop(round_id)
        assert entry["held_cents"] == released_cents, "settled a bonus hold it did not have"
        bonus = self.bonuses[bonus_id]
        bonus["held_cents"] -= released_cents
        bonus["wagered_cents"] += wagered_cents
        bonus["converted_cents"] += to_cash_cents
        bonus["balance_cents"] += self._post_bonus(postings)
        self._post(postings, balance_after_cents)
        if self.last_round is not None and self.last_round["round_id"] == round_id:
            self.last_round["net_bonus_cents"] = net_cents
        self._forget_bonus(bonus_id)

    @event("BonusConverted", topic=BONUS_CONVERTED)
    def _bonus_converted(
        self,
        bonus_id: str,
        round_id: str,
        converted_cents: int,
        forfeited_cents: int,
        postings: Postings,
        balance_after_cents: int,
    ) -> None:
        self._bonus_over(bonus_id, CONVERTED, postings)
        self.bonuses[bonus_id]["converted_cents"] += converted_cents
        self._post(postings, balance_after_cents)
        self._forget_bonus(bonus_id)

    @event("BonusForfeited", topic=BONUS_FORFEITED)
    def _bonus_forfeited(
        self, bonus_id: str, reason: str, forfeited_cents: int, postings: Postings
    ) -> None:
        self._bonus_over(bonus_id, FORFEITED, postings)
        self._forget_bonus(bonus_id)

    @event("BonusExpired", topic=BONUS_EXPIRED)
    def _bonus_expired(
        self, bonus_id: str, reason: str, forfeited_cents: int, postings: Postings
    ) -> None:
        self._bonus_over(bonus_id, EXPIRED, postings)
        self._forget_bonus(bonus_id)

    @event("PointsChanged", topic=POINTS_CHANGED)
    def _points_changed(
        self, change: int, role: str, round_id: str | None, reason: str, points_after: int
    ) -> None:
        self.points = points_after

    # Helpers.

    def _split(
        self,
        amount_cents: int,
        bonus: dict[str, Any] | None,
        house: bool,
        action: str,
        spot_cents: int | None = None,
    ) -> Split:
        """A stake's cash and `bonus` parts, cash first, the player's stake on the spot
        (`spot_cents`, the stake alone by default) within the bonus's maximum stake;
        refused when they do not cover it (a player-banked game, `house` False, looks at
        the bonus only to say why it refuses)."""
        bonus_cents = self.bonus_available_cents if bonus is not None or not house else 0
        split = split_stake(amount_cents, self.available_cents, bonus_cents, house)
        if split is None:
            self._check_available(amount_cents, action)
        assert split is not None
        if bonus is not None:
            check_max_bet(spot_cents or amount_cents, bonus["max_bet_cents"])
        return split

    def _settle_bonus(
        self,
        round_id: str,
        entry: dict[str, Any],
        back: Split | None,
        counter_account: str,
        wagered_cents: int,
    ) -> int:
        """The bonus share of a settled round: back to its bonus while that is active;
        of an ended bonus, to cash (converted, within its maximum) or to casino:bonus."""
        bonus = self.bonuses[entry["bonus_id"]]
        held = entry["held_cents"]
        returned = 0 if back is None else back.bonus_cents
        net = returned - held
        postings: Postings = [[bonus_account(self.player_id), net], [counter_account, -net]]
        to_cash = 0
        if bonus["status"] != ACTIVE and returned:
            to_cash = self._ended_bonus_to_cash(bonus, returned)
            postings += self._ended_bonus_leaves(returned, to_cash)
        # Only stakes held while the bonus was active count (a record kept from before
        # knows no total: all of them).
        within = min(wagered_cents, entry.get("staked_cents", wagered_cents))
        counted = within if bonus["status"] == ACTIVE else 0
        postings = [posting for posting in postings if posting[1]]
        self._bonus_settled(
            round_id,
            bonus["bonus_id"],
            net,
            held,
            counted,
            to_cash,
            bonus["status"],
            postings,
            self.balance_cents + to_cash,
        )
        if counted and bonus["wagered_cents"] >= bonus["wagering_required_cents"]:
            self._convert(bonus, round_id)
        return int(net)

    def _release_ended_bonus(self, round_id: str, bonus_id: str, amount: int, whole: bool) -> None:
        """Held money of an ended bonus, given back by a bet taken back or voided: it
        leaves as a settling round's would (rules.md 9), never back to a bonus that
        can no longer be wagered."""
        bonus = self.bonuses[bonus_id]
        to_cash = self._ended_bonus_to_cash(bonus, amount)
        postings = [p for p in self._ended_bonus_leaves(amount, to_cash) if p[1]]
        self._ended_bonus_released(round_id, bonus_id, amount, whole, to_cash, bonus["status"],
                                   postings, self.balance_cents + to_cash)  # fmt: skip

    @staticmethod
    def _ended_bonus_to_cash(bonus: dict[str, Any], cents: int) -> int:
        """What of an ended bonus's `cents` becomes cash: a converted one's, within what
        is left of its maximum conversion; a forfeited or expired one's, nothing."""
        if bonus["status"] != CONVERTED:
            return 0
        return conversion(cents, bonus["max_conversion_cents"], bonus["converted_cents"]).cash_cents

    def _ended_bonus_leaves(self, cents: int, to_cash: int) -> Postings:
        """An ended bonus's `cents` leave the bonus account: `to_cash` to the cash, the
        rest back to casino:bonus."""
        return [[bonus_account(self.player_id), -cents], [self.account, to_cash],
                [CASINO_BONUS, cents - to_cash]]  # fmt: skip

    def _convert(self, bonus: dict[str, Any], round_id: str) -> None:
        """The requirement met: the bonus not held becomes cash up to the maximum
        conversion, the rest goes back to casino:bonus; what is held follows at settling."""
        available = bonus["balance_cents"] - bonus["held_cents"]
        split = conversion(available, bonus["max_conversion_cents"], bonus["converted_cents"])
        postings = [[bonus_account(self.player_id), -available], [self.account, split.cash_cents],
                    [CASINO_BONUS, split.bonus_cents]]  # fmt: skip
        self._bonus_converted(
            bonus["bonus_id"],
            round_id,
            split.cash_cents,
            split.bonus_cents,
            [posting for posting in postings if posting[1]],
            self.balance_cents + split.cash_cents,
        )

    def _end_bonus(self, bonus: dict[str, Any], status: str, reason: str) -> None:
        available = bonus["balance_cents"] - bonus["held_cents"]
        postings = [[bonus_account(self.player_id), -available], [CASINO_BONUS, available]]
        postings = [posting for posting in postings if posting[1]]
        end = self._bonus_expired if status == EXPIRED else self._bonus_forfeited
        end(bonus["bonus_id"], reason, available, postings)

    def _bonus_over(self, bonus_id: str, status: str, postings: Postings) -> None:
        """An event body's: the bonus ends, its money not held leaves, the next in line
        (if this one was active) starts."""
        bonus = self.bonuses[bonus_id]
        was = bonus["status"]
        bonus["status"] = status
        bonus["balance_cents"] += self._post_bonus(postings)
        assert bonus["balance_cents"] == bonus["held_cents"], "an ended bonus keeps only its holds"
        if was == WAITING:
            self.bonus_waiting.remove(bonus_id)
        elif self.bonus_waiting:
            self.active_bonus_id = self.bonus_waiting.pop(0)
            self.bonuses[self.active_bonus_id]["status"] = ACTIVE
        else:
            self.active_bonus_id = None
        # The records of its rounds whose bets were all taken back go with it.
        for round_id, entry in list(self.bonus_rounds.items()):
            if entry["bonus_id"] == bonus_id and not entry["held_cents"]:
                del self.bonus_rounds[round_id]

    def _unhold_bonus(self, round_id: str, bonus_id: str, amount_cents: int, whole: bool) -> None:
        """An event body's: part of a round's bonus hold released (`whole`: the last)."""
        entry = self.bonus_rounds[round_id]
        entry["held_cents"] -= amount_cents
        self.bonuses[bonus_id]["held_cents"] -= amount_cents
        if whole:
            assert entry["held_cents"] == 0
            del self.bonus_rounds[round_id]

    def _forget_bonus(self, bonus_id: str) -> None:
        """An event body's: a wallet remembers its last ended bonuses, held ones all."""
        bonus = self.bonuses[bonus_id]
        if bonus["status"] not in ENDED or bonus["held_cents"]:
            return
        ended = [key for key, kept in self.bonuses.items() if kept["status"] in ENDED]
        for key in ended[: max(0, len(ended) - BONUSES_PAST_KEPT_MAX)]:
            if not self.bonuses[key]["held_cents"]:
                del self.bonuses[key]

    def _post_bonus(self, postings: Postings) -> int:
        """Apply the player's bonus leg; returns it. The bonus account never goes below zero."""
        account = bonus_account(self.player_id)
        change = sum(cents for posted_to, cents in postings if posted_to == account)
        self.bonus_cents += change
        assert self.bonus_cents >= 0, "bonus money below zero"
        return int(change)

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
        if round_id not in self.holds and round_id not in self.bonus_rounds:
            raise UnknownHold(f"no funds are held for round {round_id}")
        return self.round_held_cents(round_id)


def _no_bonus() -> dict[str, Any]:
    """A wallet's bonus state before its first grant (rules.md 9)."""
    return {
        "bonus_cents": 0,
        "bonuses": {},
        "active_bonus_id": None,
        "bonus_waiting": [],
        "bonus_rounds": {},
    }


def _expired_by(bonus: dict[str, Any], now: datetime.datetime) -> bool:
    """Whether a bonus's expiry has come by `now`."""
    return datetime.datetime.fromisoformat(bonus["expires_at"]) <= now


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
