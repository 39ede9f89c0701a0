"""The player aggregate: who a player is. Their money lives in one wallet per mode.

It also keeps what a disconnect must act on at once, so that the disconnect and
the commands it races with save the same aggregate (see
`domain/blackjack_interruptions.py`): the P2P table they sit at, and their
blackjack rounds in play.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.errors import AlreadyAtTable, RoundInterrupted, UnknownPlayer
from domain.ids import check_player_id, player_uuid
from domain.unit import Unit

DISPLAY_NAME_LENGTH_MAX = 100


class Player(FastCopy, Aggregate):
    TOPIC = "casino:Player"
    # Version 2 keeps the seats a player holds at multi-player tables; a snapshot
    # taken before holds none.
    class_version = 2

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["table_seats"] = {}

    class Created(Aggregate.Created):
        TOPIC = "casino:Player.Registered"
        player_id: str
        display_name: str

    @staticmethod
    def create_id(player_id: str, display_name: str) -> UUID:
        return player_uuid(player_id)

    @event(Created)
    def __init__(self, player_id: str, display_name: str) -> None:
        self.player_id = player_id
        # Never changed after registration: the queries keep it once read
        # (domain/queries.py: display_name). A rename would have to tell them.
        self.display_name = display_name
        self.table_id: str | None = None  # The P2P table they sit at, as dealer or player.
        self.connected = True  # As the upstream service last reported (rules.md 4).
        # Blackjack rounds dealt and not yet settled (round id -> mode), and those of
        # them interrupted while the player is away. Plain JSON: players are snapshotted.
        self.blackjack_rounds: dict[str, str] = {}
        self.interrupted_rounds: list[str] = []
        # The multi-player tables they sit at (table id -> seat): what a disconnect acts on.
        self.table_seats: dict[str, str] = {}

    def disconnect(self) -> None:
        if self.connected:
            self._disconnected()

    def reconnect(self) -> None:
        if not self.connected:
            self._reconnected()

    def blackjack_rounds_in_play(self) -> list[str]:
        """Rounds dealt, not settled and not interrupted, oldest first."""
        return [r for r in self.blackjack_rounds if r not in self.interrupted_rounds]

    def check_no_interrupted_round(self, mode: str) -> None:
        """No blackjack round of a mode starts while another of that mode is interrupted."""
        for round_id in self.interrupted_rounds:
            if self.blackjack_rounds[round_id] == mode:
                raise RoundInterrupted(
                    f"player {self.player_id} has an interrupted blackjack round {round_id} "
                    f"in {mode} mode: it must be resumed or finished before another starts",
                    round_id=round_id,
                )

    def blackjack_round_in_play(self, round_id: str, mode: str) -> None:
        if round_id not in self.blackjack_rounds:
            self._blackjack_round_in_play(round_id, mode)

    def blackjack_round_interrupted(self, round_id: str) -> None:
        if round_id not in self.interrupted_rounds:
            self._blackjack_round_interrupted(round_id)

    def blackjack_round_resumed(self, round_id: str) -> None:
        if round_id in self.interrupted_rounds:
            self._blackjack_round_resumed(round_id)

    def blackjack_round_ended(self, round_id: str) -> None:
        if round_id in self.blackjack_rounds:
            self._blackjack_round_ended(round_id)

    def sit_down(self, table_id: str, role: str) -> None:
        """A player sits at one table at a time, whichever side of it."""
        if self.table_id is not None:
            raise AlreadyAtTable(
                f"player {self.player_id} already sits at table {self.table_id}",
                table_id=self.table_id,
            )
        self._sat_down(table_id, role)

    def stand_up(self, table_id: str) -> None:
        if self.table_id == table_id:
            self._stood_up(table_id)

    def take_seat(self, table_id: str, seat: str) -> None:
        """A seat at a multi-player table; any number of tables, one seat at each."""
        if self.table_seats.get(table_id) != seat:
            self._took_seat(table_id, seat)

    def give_up_seat(self, table_id: str) -> None:
        if table_id in self.table_seats:
            self._gave_up_seat(table_id)

    @event("TookSeat", topic="casino:Player.TookSeat")
    def _took_seat(self, table_id: str, seat: str) -> None:
        self.table_seats[table_id] = seat

    @event("GaveUpSeat", topic="casino:Player.GaveUpSeat")
    def _gave_up_seat(self, table_id: str) -> None:
        del self.table_seats[table_id]

    @event("SatDown", topic="casino:Player.SatDown")
    def _sat_down(self, table_id: str, role: str) -> None:
        self.table_id = table_id

    @event("StoodUp", topic="casino:Player.StoodUp")
    def _stood_up(self, table_id: str) -> None:
        self.table_id = None

    @event("Disconnected", topic="casino:Player.Disconnected")
    def _disconnected(self) -> None:
        self.connected = False

    @event("Reconnected", topic="casino:Player.Reconnected")
    def _reconnected(self) -> None:
        self.connected = True

    @event("BlackjackRoundInPlay", topic="casino:Player.BlackjackRoundInPlay")
    def _blackjack_round_in_play(self, round_id: str, mode: str) -> None:
        self.blackjack_rounds[round_id] = mode

    @event("BlackjackRoundInterrupted", topic="casino:Player.BlackjackRoundInterrupted")
    def _blackjack_round_interrupted(self, round_id: str) -> None:
        assert round_id in self.blackjack_rounds, round_id
        self.interrupted_rounds.append(round_id)

    @event("BlackjackRoundResumed", topic="casino:Player.BlackjackRoundResumed")
    def _blackjack_round_resumed(self, round_id: str) -> None:
        self.interrupted_rounds.remove(round_id)

    @event("BlackjackRoundEnded", topic="casino:Player.BlackjackRoundEnded")
    def _blackjack_round_ended(self, round_id: str) -> None:
        del self.blackjack_rounds[round_id]
        if round_id in self.interrupted_rounds:
            self.interrupted_rounds.remove(round_id)


def load_player(unit: Unit, player_id: str) -> Player:
    check_player_id(player_id)
    return unit.get(Player, player_uuid(player_id), lambda: unknown_player(player_id))


def unknown_player(player_id: str) -> UnknownPlayer:
    return UnknownPlayer(f"no player {player_id} is registered")
