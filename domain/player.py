"""The player aggregate: who a player is. Their money lives in one wallet per mode."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

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
