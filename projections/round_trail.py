"""Every event of a round in log order: the round's own events and the wallet events
that hold, settle and charge for it (api.md, GET /v1/rounds/{id}/audit).

What disconnect recovery and game-history review read. Secrets (the seed, the
blackjack hole card) are stored as recorded; the route hides them while the
round is not over.
"""

from __future__ import annotations

import json
from typing import Any

from domain import wallet
from domain.baccarat import round as baccarat_round
from domain.blackjack import round as blackjack_round
from domain.tables import coup
from projections.base import Cursor, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS round_events (
    round_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    aggregate_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    at TEXT NOT NULL,
    topic TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (round_id, position)
);
"""
# Each table with its primary key.
TABLES = {"round_events": ("round_id", "position")}
COLUMNS = ("round_id", "position", "aggregate_id", "version", "at", "topic", "data")
ENVELOPE = ("originator_id", "originator_version", "timestamp", "originator_topic")
ROUNDS = (baccarat_round.ROUND + ".", blackjack_round.ROUND + ".", coup.ROUND + ".")
ENDED = (
    baccarat_round.SETTLED,
    baccarat_round.VOIDED,
    blackjack_round.SETTLED,
    blackjack_round.VOIDED,
    coup.SETTLED,
    coup.VOIDED,
)


# What json.dumps(value, default=str, separators=(",", ":")) writes, with one encoder
# made once: json.dumps makes a new one per call when given any option.
_ENCODER = json.JSONEncoder(default=str, separators=(",", ":"))


def event_data(event: Any) -> dict[str, Any]:
    """An event's own fields, without the envelope every event has."""
    return {k: v for k, v in vars(event).items() if k not in ENVELOPE}


class RoundTrail:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic.startswith(ROUNDS):
            aggregate_id = round_id = str(event.originator_id)
        elif topic.startswith(wallet.WALLET + ".") and getattr(event, "round_id", None):
            round_id, aggregate_id = event.round_id, str(event.originator_id)
        else:
            return
        data = _ENCODER.encode(event_data(event))
        self.events.append(
            (round_id, position, aggregate_id, event.originator_version,
             event.timestamp.isoformat(), topic, data)
        )  # fmt: skip

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "round_events", COLUMNS, self.events)


def trail(cursor: Cursor, round_id: str) -> list[dict[str, Any]]:
    """The round's events, oldest first, each with its data parsed."""
    found = rows(
        cursor,
        f"SELECT {', '.join(COLUMNS[1:])} FROM round_events WHERE round_id = ? ORDER BY position",
        (round_id,),
    )
    trail = [dict(zip(COLUMNS[1:], row, strict=True)) for row in found]
    for event in trail:
        event["data"] = json.loads(event["data"])
    return trail
