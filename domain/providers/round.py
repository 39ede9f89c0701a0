"""A provider's round for one player, and a bet by the provider's transaction id
(rules.md 10).

The round records every call that moves money in it, in order: its audit trail.
It ends when the provider ends it, or when it has seen no call for the configured
time (it then counts as ended: no bet or rollback, while a late win still lands).
A bet is also kept under its transaction id (`ProviderBet`), so that a rollback,
which names only the bet, finds what it took; a rollback of a bet never seen
leaves one as a tombstone, which refuses that bet should it come late.
"""

from __future__ import annotations

import datetime
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.bonus import Split, split_return
from domain.copying import FastCopy
from domain.errors import (
    DuplicateTransaction,
    NoBetInRound,
    RoundClosed,
    RoundTransactionsExceeded,
)
from domain.ids import named_uuid
from domain.unit import Unit, parse_public_id

ROUND = "casino:ProviderRound"
OPENED = "casino:ProviderRound.Opened"
BET_TAKEN = "casino:ProviderRound.BetTaken"
WIN_PAID = "casino:ProviderRound.WinPaid"
BET_ROLLED_BACK = "casino:ProviderRound.BetRolledBack"
ENDED = "casino:ProviderRound.Ended"
BET = "casino:ProviderBet"
BET_RECORDED = "casino:ProviderBet.Recorded"
GAME = "external"  # the game a provider's round is, in the round index and the reports
OPEN, CLOSED = "open", "closed"
BY_PROVIDER, INACTIVE = "provider", "inactive"  # why a round ended
TRANSACTIONS_PER_ROUND_MAX = 1_000


def round_uuid(provider_id: str, player_id: str, mode: str, round_ref: str) -> UUID:
    """A player's round of a provider's, in one mode: real and play money never share
    a round, whatever id the provider gives them."""
    return named_uuid(f"provider-round/{provider_id}/{player_id}/{mode}/{round_ref}")


def bet_uuid(provider_id: str, transaction_id: str) -> UUID:
    return named_uuid(f"provider-bet/{provider_id}/{transaction_id}")


def lapsed(last_call_at: str, now: datetime.datetime, round_seconds: int) -> bool:
    """Whether a round with no call since `last_call_at` counts as ended by now."""
    idle = now - datetime.datetime.fromisoformat(last_call_at)
    return idle.total_seconds() >= round_seconds


class ProviderRound(FastCopy, Aggregate):
    TOPIC = ROUND
    NEVER_SNAPSHOTTED = True  # a round ends; loaded from its events (infra/commands/unit.py)

    class Created(Aggregate.Created):
        TOPIC = OPENED
        provider_id: str
        player_id: str
        round_ref: str
        game_id: str
        mode: str
        at: str
        theoretical_rtp: str | None  # the provider's declared figure (the RTP report's)

    @staticmethod
    def create_id(
        provider_id: str,
        player_id: str,
        round_ref: str,
        game_id: str,
        mode: str,
        at: str,
        theoretical_rtp: str | None,
    ) -> UUID:
        return round_uuid(provider_id, player_id, mode, round_ref)

    @event(Created)
    def __init__(
        self,
        provider_id: str,
        player_id: str,
        round_ref: str,
        game_id: str,
        mode: str,
        at: str,
        theoretical_rtp: str | None,
    ) -> None:
        self.provider_id = provider_id
        self.player_id = player_id
        self.round_ref = round_ref  # the provider's own id of the round
        self.game_id = game_id
        self.mode = mode
        self.status = OPEN
        self.ended_by: str | None = None  # BY_PROVIDER, or INACTIVE
        self.last_call_at = at
        self.bets: dict[str, int] = {}  # transaction id -> cents taken, while not rolled back
        self.rolled_back: dict[str, int] = {}  # bet's transaction id -> cents given back
        self.wins: list[str] = []  # transaction ids
        self.staked_cents = 0
        self.won_cents = 0
        # Bonus money (rules.md 9, 10): the bonus the round's bets were placed under (the
        # first active one where the provider allows it), and each such bet's bonus part.
        self.bonus_id: str | None = None
        self.bonus_bets: dict[str, int] = {}  # transaction id -> cents from the bonus

    @property
    def round_id(self) -> str:
        return str(self.id)

    @property
    def calls(self) -> int:
        return len(self.bets) + len(self.rolled_back) + len(self.wins)

    def over(self, now: datetime.datetime, round_seconds: int) -> bool:
        """Ended by the provider, or without a call for `round_seconds`."""
        return self.status == CLOSED or lapsed(self.last_call_at, now, round_seconds)

    @property
    def staked(self) -> Split:
        """The stakes standing (not rolled back): cash and bonus."""
        bonus = sum(self.bonus_bets.get(transaction_id, 0) for transaction_id in self.bets)
        return Split(self.staked_cents - bonus, bonus)

    @property
    def wagered_cents(self) -> int:
        """What the round counts towards its bonus (rules.md 9): every stake placed under
        it, cash or bonus, net of rolled-back bets."""
        return sum(cents for key, cents in self.bets.items() if key in self.bonus_bets)

    def takes_bonus(self, active_bonus_id: str | None) -> bool:
        """Whether a bet now may be placed under the active bonus: not when the round's
        bets belong to another, now ended (cash only then, as in a house round)."""
        return active_bonus_id is not None and self.bonus_id in (None, active_bonus_id)

    def check_bet(self, transaction_id: str, now: datetime.datetime, round_seconds: int) -> None:
        """Refuse a bet the round cannot take, before the wallet is asked for it."""
        if self.over(now, round_seconds):
            raise RoundClosed(f"round {self.round_ref} is over: it takes no more bets")
        if transaction_id in self.bets or transaction_id in self.rolled_back:
            raise DuplicateTransaction(f"transaction {transaction_id} was already a bet here")
        self._check_room()

    def take_bet(
        self,
        transaction_id: str,
        amount_cents: int,
        now: datetime.datetime,
        round_seconds: int,
        taken: Split | None = None,
        bonus_id: str | None = None,
    ) -> None:
        """`taken`: the cash and bonus parts the wallet took, under `bonus_id` (the
        bonus active then, where the provider allows bonus money)."""
        self.check_bet(transaction_id, now, round_seconds)
        bonus_cents = 0 if taken is None else taken.bonus_cents
        self._bet_taken(transaction_id, amount_cents, now.isoformat(), bonus_id, bonus_cents)

    def pay_win(
        self,
        transaction_id: str,
        amount_cents: int,
        bet_transaction_id: str | None,
        now: datetime.datetime,
    ) -> None:
        """A win lands even in a round that counts as ended for want of calls; never in
        one the provider ended."""
        if self.ended_by == BY_PROVIDER:
            raise RoundClosed(f"round {self.round_ref} was ended: it takes no more wins")
        if transaction_id in self.wins:
            raise DuplicateTransaction(f"transaction {transaction_id} was already a win here")
        if not (self.bets or self.rolled_back) or (
            bet_transaction_id is not None
            and bet_transaction_id not in self.bets
            and bet_transaction_id not in self.rolled_back
        ):
            raise NoBetInRound(f"the player placed no such bet in round {self.round_ref}")
        self._check_room()
        bonus_cents = self.win_split(amount_cents).bonus_cents
        at = now.isoformat()
        self._win_paid(transaction_id, amount_cents, bet_transaction_id, at, bonus_cents)

    def win_split(self, amount_cents: int) -> Split:
        """A win in the proportion of the round's stakes standing (rules.md 9): the bonus
        share rounded down to the cent, the rest cash; all cash if none stands."""
        staked = self.staked
        return split_return(amount_cents, staked) if staked.bonus_cents else Split(amount_cents, 0)

    def roll_back(
        self, transaction_id: str, bet_transaction_id: str, now: datetime.datetime, rounds: int
    ) -> Split:
        """Give back what the bet took: its cash and bonus parts."""
        if self.over(now, rounds):
            raise RoundClosed(f"round {self.round_ref} is over: its bets stand")
        cents = self.bets[bet_transaction_id]
        bonus_cents = self.bonus_bets.get(bet_transaction_id, 0)
        at = now.isoformat()
        self._bet_rolled_back(transaction_id, bet_transaction_id, cents, at, bonus_cents)
        return Split(cents - bonus_cents, bonus_cents)

    def end(self, now: datetime.datetime, reason: str) -> bool:
        """End the round; says whether that changed anything: the provider's end after
        a lapse still counts (no win may follow), and ending it again changes nothing."""
        if self.ended_by == BY_PROVIDER or (reason == INACTIVE and self.status == CLOSED):
            return False
        self._ended(reason, now.isoformat())
        return True

    def _check_room(self) -> None:
        if self.calls >= TRANSACTIONS_PER_ROUND_MAX:
            raise RoundTransactionsExceeded(
                f"a round takes at most {TRANSACTIONS_PER_ROUND_MAX} bets, wins and rollbacks"
            )

    @event("BetTaken", topic=BET_TAKEN)
    def _bet_taken(
        self,
        transaction_id: str,
        amount_cents: int,
        at: str,
        bonus_id: str | None = None,  # older events: none
        bonus_cents: int = 0,
    ) -> None:
        self.bets[transaction_id] = amount_cents
        if bonus_id is not None:
            self.bonus_id = bonus_id
            self.bonus_bets[transaction_id] = bonus_cents
        self.staked_cents += amount_cents
        self.last_call_at = at

    @event("WinPaid", topic=WIN_PAID)
    def _win_paid(
        self,
        transaction_id: str,
        amount_cents: int,
        bet_transaction_id: str | None,
        at: str,
        bonus_cents: int = 0,  # the bonus share (older events: none)
    ) -> None:
        self.wins.append(transaction_id)
        self.won_cents += amount_cents
        self.last_call_at = max(self.last_call_at, at)

    @event("BetRolledBack", topic=BET_ROLLED_BACK)
    def _bet_rolled_back(
        self,
        transaction_id: str,
        bet_transaction_id: str,
        amount_cents: int,
        at: str,
        bonus_cents: int = 0,  # of it, back to the bonus's side (older events: none)
    ) -> None:
        self.rolled_back[bet_transaction_id] = self.bets.pop(bet_transaction_id)
        self.staked_cents -= amount_cents
        self.last_call_at = at

    @event("Ended", topic=ENDED)
    def _ended(self, reason: str, at: str) -> None:
        self.status = CLOSED
        self.ended_by = reason


def find_provider_round(unit: Unit, round_id: str) -> ProviderRound | None:
    """A provider's round by our id of it, or None (any other id)."""
    try:
        key = parse_public_id(round_id, lambda: NoBetInRound(round_id))
    except NoBetInRound:
        return None
    return unit.find(ProviderRound, key)


class ProviderBet(FastCopy, Aggregate):
    """A bet under the provider's transaction id: which round it took how much in, or
    (`round_id` None) the tombstone of a rollback that came first."""

    TOPIC = BET
    NEVER_SNAPSHOTTED = True  # two events at most

    class Created(Aggregate.Created):
        TOPIC = BET_RECORDED
        provider_id: str
        transaction_id: str
        player_id: str
        round_id: str | None
        amount_cents: int
        rolled_back_by: str | None  # a tombstone's: the rollback that came first
        bonus_cents: int = 0  # of `amount_cents`, from the bonus (older events: none)

    @staticmethod
    def create_id(
        provider_id: str,
        transaction_id: str,
        player_id: str,
        round_id: str | None,
        amount_cents: int,
        rolled_back_by: str | None,
        bonus_cents: int = 0,
    ) -> UUID:
        return bet_uuid(provider_id, transaction_id)

    @event(Created)
    def __init__(
        self,
        provider_id: str,
        transaction_id: str,
        player_id: str,
        round_id: str | None,
        amount_cents: int,
        rolled_back_by: str | None,
        bonus_cents: int = 0,
    ) -> None:
        self.provider_id = provider_id
        self.transaction_id = transaction_id
        self.player_id = player_id
        self.round_id = round_id
        self.amount_cents = amount_cents  # the whole stake: cash and bonus
        self.bonus_cents = bonus_cents
        self.rolled_back_by = rolled_back_by

    @property
    def tombstone(self) -> bool:
        return self.round_id is None

    def roll_back(self, transaction_id: str) -> None:
        self._rolled_back(transaction_id)

    @event("RolledBack", topic="casino:ProviderBet.RolledBack")
    def _rolled_back(self, transaction_id: str) -> None:
        self.rolled_back_by = transaction_id
