"""Every event of a round in log order: the round's own events and the wallet events
that hold, settle and charge for it (api.md, GET /v1/rounds/{id}/audit).

What disconnect recovery and game-history review read. The read model holds where
each event is in the log (its position), not a copy of it: `trail` reads the
events themselves from the log, so the trail shows exactly what is sealed there.
A copy of every round's events was most of the read models'
bytes (71 of 90 MB on benchmarks/bench_audit.py's 200,000 events), a sixth of a
rebuild's CPU to write, and a second record an insider could rewrite apart from
the sealed one. Secrets (the seed, the blackjack hole card) are shown as recorded;
the route hides them while the round is not over.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

from domain import wallet
from domain.blackjack import round as blackjack_round
from domain.providers import round as provider_round
from domain.tables import coup, old_rounds
from projections.base import Cursor, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS round_trail (
    round_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    PRIMARY KEY (round_id, position)
);
DROP TABLE IF EXISTS round_events;
"""
# (round_events: the copy of each event that read models before @9 kept.)
# Each table with its primary key.
TABLES = {"round_trail": ("round_id", "position")}
COLUMNS = ("round_id", "position")
ENVELOPE = ("originator_id", "originator_version", "timestamp", "originator_topic")
ROUNDS = (old_rounds.ROUND + ".", blackjack_round.ROUND + ".", coup.ROUND + ".",
          provider_round.ROUND + ".")  # fmt: skip
ENDED = (
    old_rounds.SETTLED,
    old_rounds.VOIDED,
    blackjack_round.SETTLED,
    blackjack_round.VOIDED,
    coup.SETTLED,
    coup.VOIDED,
)


# What json.dumps(value, default=str, separators=(",", ":")) writes, with one encoder
# made once: json.dumps makes a new one per call when given any option.
_ENCODER = json.JSONEncoder(default=str, separators=(",", ":"))
PLAIN = frozenset((str, int, bool, type(None)))


def event_data(event: Any) -> dict[str, Any]:
    """An event's own fields, without the envelope every event has."""
    data: dict[str, Any] = vars(event).copy()  # (half the cost of a comprehension)
    for key in ENVELOPE:
        data.pop(key, None)
    return data


def json_text(data: dict[str, Any]) -> str:
    """Exactly what `_ENCODER` writes, three times faster: orjson writes the same bytes
    for strings, ints, booleans, None, lists and objects of them, once they are ASCII
    without DEL (which the standard library escapes); anything else (a float, a date,
    a big integer) is written by the standard library (callgrind: 21,000 instructions
    a round's event, 7,000 this way)."""
    if _plain(data.values()):
        try:
            text = orjson.dumps(data)
        except TypeError:  # an integer past 64 bits, a key that is no string
            return _ENCODER.encode(data)
        if text.isascii() and b"\x7f" not in text:
            return text.decode()
    return _ENCODER.encode(data)


def _plain(values: Any) -> bool:
    for value in values:
        kind = type(value)
        if kind in PLAIN:
            continue
        if kind is list:
            if not _plain(value):
                return False
        elif kind is not dict or not _plain(value.values()):
            return False
    return True


class RoundTrail:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    @staticmethod
    def wants(topic: str) -> bool:
        return topic.startswith((*ROUNDS, wallet.WALLET + "."))

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic.startswith(ROUNDS):
            round_id = str(event.originator_id)
        elif topic.startswith(wallet.WALLET + ".") and getattr(event, "round_id", None):
            round_id = event.round_id
        else:
            return
        self.events.append((round_id, position))

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "round_trail", COLUMNS, self.events)


def trail(
    cursor: Cursor, round_id: str, log: tuple[str, str], decode: Callable[..., Any]
) -> list[dict[str, Any]]:
    """The round's events, oldest first, each read from the log: `log` names the
    events' table and its position column, `decode` makes an event of a stored one."""
    events, position = log
    found = rows(
        cursor,
        "SELECT t.position, e.originator_id, e.originator_version, e.topic, e.state"
        f" FROM round_trail t JOIN {events} e ON e.{position} = t.position"
        " WHERE t.round_id = ? ORDER BY t.position",
        (round_id,),
    )
    return [_shown(int(stored[0]), decode(*stored)) for stored in found]


def _shown(position: int, event: Any) -> dict[str, Any]:
    """An event as the trail shows it: its data as JSON would carry it (a value JSON has
    no type for, such as a date, as its text)."""
    return {
        "position": position,
        "aggregate_id": str(event.originator_id),
        "version": event.originator_version,
        "at": event.timestamp.isoformat(),
        "topic": wallet.topic_of(event),
        "data": json.loads(json_text(event_data(event))),
    }
