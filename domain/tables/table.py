"""A multi-player table (rules.md 2.2-2.4): its game, mode and limits, who sits where,
the coup in play, and at a player-banked table the bank: who holds it and how much,
and to whom it is offered.

Everything about seats is decided on this one aggregate, so two players racing
for one seat save the same table version: one of them conflicts, the seam runs
it again, and it finds the seat taken. A seated player who leaves or disconnects
while the coup in play holds their stakes keeps the seat until the coup ends.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.errors import (
    AlreadyAtTable,
    BankOutOfLimits,
    CoupInProgress,
    NotOfferedTheBank,
    NotSeated,
    NotTheBanker,
    SeatTaken,
    UnknownTable,
)
from domain.money import format_cents
from domain.tables.chemin_de_fer import CHEMIN_DE_FER
from domain.tables.en_banque import BANKERS_SEAT
from domain.unit import Unit, parse_public_id

OPEN, IN_COUP = "open", "in_coup"


class Table(FastCopy, Aggregate):
    TOPIC = "casino:Table"
    # Version 2 remembers the side seat an en banque banker left for seat `B`; a
    # snapshot taken before remembers none (its banker, if any, kept a side seat).
    class_version = 2

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["banker_side_seat"] = None

    class Created(Aggregate.Created):
        TOPIC = "casino:Table.Opened"
        game: str
        mode: str
        bet_min_cents: int
        bet_max_cents: int
        bank_min_cents: int
        bank_max_cents: int

    @event(Created)
    def __init__(
        self,
        game: str,
        mode: str,
        bet_min_cents: int,
        bet_max_cents: int,
        bank_min_cents: int,
        bank_max_cents: int,
    ) -> None:
        self.game, self.mode = game, mode
        self.bet_min_cents, self.bet_max_cents = bet_min_cents, bet_max_cents
        self.bank_min_cents, self.bank_max_cents = bank_min_cents, bank_max_cents
        self.seats: dict[str, str] = {}  # seat -> player id, in the order they sat
        self.leaving: list[str] = []  # players whose seat frees when the coup ends
        self.round_id: str | None = None  # the coup not yet over
        self.coups_played = 0
        # Player-banked games (rules.md 2.3, 2.4): who holds the bank, how much it is.
        self.banker: str | None = None
        self.bank_cents = 0
        self.bank_offered_to: str | None = None
        self.bank_ever_offered = False  # a new table's first sitter is offered the bank
        self.declined: list[str] = []  # who declined the offer going round now
        self.banco_suivi: str | None = None  # lost a banco last coup: may call again first
        self.failed_bancos: dict[str, int] = {}  # en banque: three bar a player
        self.banker_side_seat: str | None = None  # en banque: where the banker sat before B

    @property
    def table_id(self) -> str:
        return str(self.id)

    @property
    def status(self) -> str:
        return OPEN if self.round_id is None else IN_COUP

    def seat_of(self, player_id: str) -> str | None:
        return next((seat for seat, who in self.seats.items() if who == player_id), None)

    def play_order(self, after: str | None = None) -> list[str]:
        """The seated players in the order of their seats (rules.md 2.3): from the seat
        after `after`'s, if given, round to it."""
        order = [self.seats[seat] for seat in sorted(self.seats, key=seat_order)]
        if after in order:
            index = order.index(after) + 1
            order = order[index:] + order[:index]
        return order

    def check_seated(self, player_id: str) -> None:
        if self.seat_of(player_id) is None or player_id in self.leaving:
            raise NotSeated(f"player {player_id} has no seat at table {self.table_id}")

    # Commands.

    def sit(self, player_id: str, seat: str) -> None:
        """Take a free seat; a player holds one seat per table."""
        held = self.seat_of(player_id)
        if held is not None:
            raise AlreadyAtTable(
                f"player {player_id} already sits at seat {held} of this table", seat=held
            )
        if seat in self.seats:
            raise SeatTaken(f"seat {seat} is taken by {self.seats[seat]}", seat=seat)
        self._player_sat(player_id, seat)

    def leave(self, player_id: str, holds_stakes: bool, reason: str) -> bool:
        """Give the seat up: at once, or when the coup ends if it holds the player's
        stakes (their bets stand). Says whether the seat is free now."""
        seat = self.seat_of(player_id)
        if seat is None:
            raise NotSeated(f"player {player_id} has no seat at table {self.table_id}")
        if holds_stakes and self.round_id is not None:
            if player_id not in self.leaving:
                self._leaving_after_coup(player_id, reason)
            return False
        self._player_left(player_id, seat, reason)
        return True

    def move(self, player_id: str, seat: str) -> None:
        """Change seats: at en banque, a new banker to `B` and back (rules.md 2.4)."""
        held = self.seat_of(player_id)
        assert held is not None and seat not in self.seats, (player_id, held, seat)
        self._player_moved(player_id, held, seat)

    def stay(self, player_id: str) -> None:
        """A player back before the coup ends keeps the seat after all."""
        if player_id in self.leaving:
            self._staying(player_id)

    # The bank.

    def offer_bank(self, player_id: str | None) -> None:
        """Offer the bank to a seated player, or to nobody (the table waits)."""
        if player_id != self.bank_offered_to:
            self._bank_offered(player_id)

    def put_up_bank(self, player_id: str, amount_cents: int) -> int:
        """Put up the bank, or add to one's own; returns the bank it makes. Between
        coups, within the table's bank limits, by whoever it is offered to, or, with
        no banker and no offer going round, by any seated player."""
        self.check_between_coups()
        self.check_seated(player_id)
        if self.banker not in (None, player_id):
            raise NotOfferedTheBank(f"{self.banker} holds the bank at this table")
        if self.banker is None and self.bank_offered_to not in (None, player_id):
            raise NotOfferedTheBank(
                f"the bank is offered to {self.bank_offered_to}, not to {player_id}",
                offered_to=self.bank_offered_to,
            )
        bank = self.bank_cents + amount_cents
        if not self.bank_min_cents <= bank <= self.bank_max_cents:
            raise BankOutOfLimits(
                f"a bank of {format_cents(bank)} is outside the table's bank limits, "
                f"{format_cents(self.bank_min_cents)}-{format_cents(self.bank_max_cents)}",
                minimum=format_cents(self.bank_min_cents),
                maximum=format_cents(self.bank_max_cents),
            )
        self._bank_put_up(player_id, amount_cents, bank)
        return bank

    def decline_bank(self, player_id: str, next_player: str | None) -> None:
        """The player it is offered to passes it on, to `next_player` (or nobody)."""
        if self.bank_offered_to != player_id or self.banker is not None:
            raise NotOfferedTheBank(f"the bank is not offered to {player_id}")
        self._bank_declined(player_id, next_player)

    def check_bank_fits(self) -> None:
        """A bank below the minimum is topped up or withdrawn before the next coup."""
        if self.bank_cents < self.bank_min_cents:
            raise BankOutOfLimits(
                f"the bank of {format_cents(self.bank_cents)} is below the table's minimum "
                f"of {format_cents(self.bank_min_cents)}: top it up or withdraw it",
                minimum=format_cents(self.bank_min_cents),
            )

    def check_banker(self, player_id: str) -> None:
        if self.banker != player_id:
            raise NotTheBanker(f"{player_id} does not hold the bank at this table")

    def bank_moved(self, round_id: str, bank_after_cents: int) -> None:
        """A coup's winnings grew the bank, or its losses shrank it."""
        if bank_after_cents != self.bank_cents:
            self._bank_moved(round_id, self.bank_cents, bank_after_cents)

    def give_up_bank(self, reason: str) -> int:
        """The bank is released to its banker (withdrawn, lost, or its banker gone);
        returns how much there was."""
        assert self.banker is not None
        bank = self.bank_cents
        self._bank_given_up(self.banker, bank, reason)
        return bank

    def banco_settled(self, player_id: str, won: bool) -> None:
        """A banco won or lost: at chemin de fer the loser may call first next coup
        (banco suivi); at en banque a loss counts towards the three that bar a player."""
        self._banco_settled(player_id, won)

    def open_coup(self, round_id: str) -> None:
        if self.round_id is not None:
            raise CoupInProgress(
                f"coup {self.round_id} is not over yet at this table", round_id=self.round_id
            )
        self._coup_opened(round_id)

    def check_between_coups(self) -> None:
        if self.round_id is not None:
            raise CoupInProgress(
                f"coup {self.round_id} is not over yet: the bank moves between coups",
                round_id=self.round_id,
            )

    def end_coup(self, round_id: str) -> list[str]:
        """The coup is over: the seats of those leaving free; returns who they were."""
        assert self.round_id == round_id, (self.round_id, round_id)
        freed = list(self.leaving)
        for player_id in freed:
            seat = self.seat_of(player_id)
            assert seat is not None, player_id
            self._player_left(player_id, seat, "the coup they left during is over")
        self._coup_ended(round_id)
        return freed

    # Events.

    @event("PlayerSat", topic="casino:Table.PlayerSat")
    def _player_sat(self, player_id: str, seat: str) -> None:
        self.seats[seat] = player_id

    @event("PlayerMoved", topic="casino:Table.PlayerMoved")
    def _player_moved(self, player_id: str, from_seat: str, to_seat: str) -> None:
        del self.seats[from_seat]
        self.seats[to_seat] = player_id
        if to_seat == BANKERS_SEAT:
            self.banker_side_seat = from_seat

    @event("LeavingAfterCoup", topic="casino:Table.LeavingAfterCoup")
    def _leaving_after_coup(self, player_id: str, reason: str) -> None:
        self.leaving.append(player_id)

    @event("Staying", topic="casino:Table.Staying")
    def _staying(self, player_id: str) -> None:
        self.leaving.remove(player_id)

    @event("PlayerLeft", topic="casino:Table.PlayerLeft")
    def _player_left(self, player_id: str, seat: str, reason: str) -> None:
        del self.seats[seat]
        if player_id in self.leaving:
            self.leaving.remove(player_id)

    @event("BankOffered", topic="casino:Table.BankOffered")
    def _bank_offered(self, player_id: str | None) -> None:
        self.bank_offered_to = player_id
        self.bank_ever_offered = True
        if player_id is None:
            self.declined = []

    @event("BankDeclined", topic="casino:Table.BankDeclined")
    def _bank_declined(self, player_id: str, offered_next: str | None) -> None:
        self.declined.append(player_id)
        self.bank_offered_to = offered_next
        if offered_next is None:
            self.declined = []

    @event("BankPutUp", topic="casino:Table.BankPutUp")
    def _bank_put_up(self, player_id: str, amount_cents: int, bank_cents: int) -> None:
        self.banker, self.bank_cents = player_id, bank_cents
        self.bank_offered_to, self.declined = None, []

    @event("BankMoved", topic="casino:Table.BankMoved")
    def _bank_moved(self, round_id: str, bank_before_cents: int, bank_after_cents: int) -> None:
        assert self.bank_cents == bank_before_cents, (self.bank_cents, bank_before_cents)
        self.bank_cents = bank_after_cents

    @event("BankGivenUp", topic="casino:Table.BankGivenUp")
    def _bank_given_up(self, player_id: str, bank_cents: int, reason: str) -> None:
        self.banker, self.bank_cents = None, 0
        self.declined = [player_id]  # the offer goes round the others

    @event("BancoSettled", topic="casino:Table.BancoSettled")
    def _banco_settled(self, player_id: str, won: bool) -> None:
        if self.game == CHEMIN_DE_FER:
            self.banco_suivi = None if won else player_id
        elif not won:
            self.failed_bancos[player_id] = self.failed_bancos.get(player_id, 0) + 1

    @event("CoupOpened", topic="casino:Table.CoupOpened")
    def _coup_opened(self, round_id: str) -> None:
        self.round_id = round_id

    @event("CoupEnded", topic="casino:Table.CoupEnded")
    def _coup_ended(self, round_id: str) -> None:
        self.round_id = None
        self.banco_suivi = None  # the right lapses with the coup after the lost banco
        self.coups_played += 1


def seat_order(seat: str) -> tuple[str, int]:
    """Seats in their table's order: 1, 2, ..., 15; B (en banque's banker), L1 ... L5,
    R1 ... R5."""
    letters = seat.rstrip("0123456789")
    return letters, int(seat[len(letters) :] or 0)


def load_table(unit: Unit, table_id: str) -> Table:
    def missing() -> UnknownTable:
        return UnknownTable(f"no table {table_id[:80]} exists")

    return unit.get(Table, parse_public_id(table_id, missing), missing)
