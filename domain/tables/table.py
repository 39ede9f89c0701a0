"""A multi-player table (rules.md 2.2-2.4): its game, mode and limits, who sits where,
and the coup in play.

Everything about seats is decided on this one aggregate, so two players racing
for one seat save the same table version: one of them conflicts, the seam runs
it again, and it finds the seat taken. A seated player who leaves or disconnects
while the coup in play holds their stakes keeps the seat until the coup ends.
"""

from __future__ import annotations

from eventsourcing.domain import Aggregate, event

from domain.errors import AlreadyAtTable, CoupInProgress, NotSeated, SeatTaken, UnknownTable
from domain.unit import Unit, parse_public_id

OPEN, IN_COUP = "open", "in_coup"


class Table(Aggregate):
    TOPIC = "casino:Table"

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

    @property
    def table_id(self) -> str:
        return str(self.id)

    @property
    def status(self) -> str:
        return OPEN if self.round_id is None else IN_COUP

    def seat_of(self, player_id: str) -> str | None:
        return next((seat for seat, who in self.seats.items() if who == player_id), None)

    def play_order(self) -> list[str]:
        """The seated players in the order of their seats' numbers (rules.md 2.3)."""
        return [self.seats[seat] for seat in sorted(self.seats, key=seat_order)]

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

    def stay(self, player_id: str) -> None:
        """A player back before the coup ends keeps the seat after all."""
        if player_id in self.leaving:
            self._staying(player_id)

    def open_coup(self, round_id: str) -> None:
        if self.round_id is not None:
            raise CoupInProgress(
                f"coup {self.round_id} is not over yet at this table", round_id=self.round_id
            )
        self._coup_opened(round_id)

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

    @event("CoupOpened", topic="casino:Table.CoupOpened")
    def _coup_opened(self, round_id: str) -> None:
        self.round_id = round_id

    @event("CoupEnded", topic="casino:Table.CoupEnded")
    def _coup_ended(self, round_id: str) -> None:
        self.round_id = None
        self.coups_played += 1


def seat_order(seat: str) -> tuple[str, int]:
    """Seats in their table's order: 1, 2, ..., 15; L1 ... L5, R1 ... R5."""
    letters = seat.rstrip("0123456789")
    return letters, int(seat[len(letters) :])


def load_table(unit: Unit, table_id: str) -> Table:
    def missing() -> UnknownTable:
        return UnknownTable(f"no table {table_id[:80]} exists")

    return unit.get(Table, parse_public_id(table_id, missing), missing)
