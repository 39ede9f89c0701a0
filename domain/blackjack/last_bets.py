"""The bets a player last dealt at blackjack, per mode and hall: what "repeat bets" places.

One small aggregate per (player, mode, hall), keyed by a name-derived id so that
a round can find it without an index. The deal records the round's bets here
in the same atomic save, so it always describes the last round dealt.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.ids import named_uuid

LAST_BETS = "casino:LastBets"
OPENED = "casino:LastBets.Created"
RECORDED = "casino:LastBets.Recorded"
Bets = list[list[int]]  # [[box, cents], ...]: JSON object keys would turn box numbers into text


def last_bets_uuid(player_id: str, mode: str, hall: str) -> UUID:
    return named_uuid(f"last-bets/blackjack/{player_id}/{mode}/{hall}")


class LastBets(FastCopy, Aggregate):
    TOPIC = LAST_BETS

    class Created(Aggregate.Created):
        TOPIC = OPENED
        player_id: str
        mode: str
        hall: str

    @staticmethod
    def create_id(player_id: str, mode: str, hall: str) -> UUID:
        return last_bets_uuid(player_id, mode, hall)

    @event(Created)
    def __init__(self, player_id: str, mode: str, hall: str) -> None:
        self.player_id, self.mode, self.hall = player_id, mode, hall
        self.round_id: str | None = None
        self.bets: Bets = []

    def record(self, round_id: str, bets: dict[int, int]) -> None:
        self._recorded(round_id, [[box, cents] for box, cents in sorted(bets.items())])

    @event("Recorded", topic=RECORDED)
    def _recorded(self, round_id: str, bets: Bets) -> None:
        self.round_id = round_id
        self.bets = bets
