"""The player aggregate: who a player is. Their money lives in one wallet per mode."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.errors import AlreadyAtTable
from domain.ids import player_uuid

DISPLAY_NAME_LENGTH_MAX = 100


class Player(Aggregate):
    TOPIC = "casino:Player"

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
        self.display_name = display_name
        self.table_id: str | None = None  # The P2P table they sit at, as dealer or player.
        self.connected = True  # As the upstream service last reported (RULES.md 4).

    def disconnect(self) -> None:
        if self.connected:
            self._disconnected()

    def reconnect(self) -> None:
        if not self.connected:
            self._reconnected()

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
