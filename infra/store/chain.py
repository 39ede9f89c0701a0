"""A hash chain over the event log, so an auditor can detect an altered, removed,
inserted or reordered event (rules.md 5).

Each stored event gets one row in `event_chain`, written in the same transaction
as the event itself, so no event is ever unchained, not even for an instant:

    link(position) = SHA-256( previous link | aggregate id | version | topic
                              | SHA-256 hex of the event's stored bytes )

where `previous link` is the link of the chain row just before it (GENESIS for the
first event) and the ids are written as text (`str(UUID)`, the version in decimal).
On PostgreSQL an AFTER INSERT trigger on the events table writes the row
(infra/schema.py); on SQLite the recorder does, in Python (infra/sqlite_recorder.py).
Both compute exactly `link()` below, and the chain table refuses UPDATE and DELETE
like the events table.

`casino audit verify` walks the events and the chain side by side and checks
every link against the event as it is now: see infra/audit.py for what each kind
of discrepancy looks like. An attacker who rewrites the events *and* every later
link stays consistent; only a link written down elsewhere shows that (verify
prints the head; `--anchor POSITION:LINK` checks one noted earlier).
"""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple

from projections.base import Cursor
from projections.runner import position_in

TABLE = "event_chain"
GENESIS = "0" * 64


class ChainRow(NamedTuple):  # (a tuple: made for every event verify reads)
    position: int
    originator_id: str
    originator_version: int
    link: str


def link_of(previous: str, originator_id: str, version: int, topic: str, state: bytes) -> str:
    text = "|".join(
        (previous, originator_id, str(version), topic, hashlib.sha256(state).hexdigest())
    )
    return hashlib.sha256(text.encode()).hexdigest()


def link(previous: str, notification: Any) -> str:
    """The link of a stored event (a notification or anything shaped like one)."""
    return link_of(
        previous,
        str(notification.originator_id),
        int(notification.originator_version),
        str(notification.topic),
        bytes(notification.state),
    )


def stored_links(cursor: Cursor, after: int, limit: int) -> list[ChainRow]:
    """The chain's rows after a position, in order, up to `limit` of them."""
    cursor.execute(
        f"SELECT position, originator_id, originator_version, link FROM {TABLE}"
        " WHERE position > ? ORDER BY position LIMIT ?",
        (after, limit),
    )
    return [ChainRow(int(r[0]), str(r[1]), int(r[2]), str(r[3])) for r in cursor.fetchall()]


def head_position(cursor: Cursor) -> int:
    cursor.execute(f"SELECT MAX(position) FROM {TABLE}")
    row = cursor.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def first_hidden_position(cursor: Cursor) -> int | None:
    """Where the oldest round not over begins, or None. From there on the chain's links
    depend on a hidden seed or hole card: one of 52 cards is quickly guessed from a
    link, so no link from there is shown until the round is over.

    The rounds not over are known from the read models, so only up to the position
    they include: past it, any event might be one, and counts as hidden."""
    cursor.execute(
        f"SELECT MIN(position) FROM {TABLE} WHERE originator_id IN"
        " (SELECT round_id FROM open_rounds)"
    )
    row = cursor.fetchone()
    oldest_open = None if row is None or row[0] is None else int(row[0])
    included = position_in(cursor)
    if included < head_position(cursor):
        return min(oldest_open or included + 1, included + 1)
    return oldest_open
