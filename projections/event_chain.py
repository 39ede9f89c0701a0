"""A hash chain over the event log, so an auditor can detect an altered, removed or
reordered event (RULES.md 5).

Each event's link is SHA-256 over the previous link and the event exactly as
stored (aggregate id, version, topic and the SHA-256 of its bytes). The chain
is written once, as the projector first sees each event, and never rebuilt:
`casino audit verify` recomputes it from the events as they are now and names
every position where the two disagree. The head link can be written down
elsewhere, so that rewriting the chain itself would show too.
"""

from __future__ import annotations

import hashlib
from typing import Any

from projections.base import Cursor

SCHEMA = """
CREATE TABLE IF NOT EXISTS event_chain (
    position BIGINT PRIMARY KEY,
    originator_id TEXT NOT NULL,
    originator_version BIGINT NOT NULL,
    link TEXT NOT NULL
);
"""
GENESIS = "0" * 64


def link(previous: str, notification: Any) -> str:
    state_digest = hashlib.sha256(bytes(notification.state)).hexdigest()
    text = "|".join(
        (
            previous,
            str(notification.originator_id),
            str(notification.originator_version),
            notification.topic,
            state_digest,
        )
    )
    return hashlib.sha256(text.encode()).hexdigest()


def apply(cursor: Cursor, notification: Any) -> None:
    # First write wins: a rebuild of the read models must not re-chain (and so launder)
    # events that were changed after they were first chained.
    cursor.execute("SELECT link FROM event_chain ORDER BY position DESC LIMIT 1")
    row = cursor.fetchone()
    cursor.execute(
        "INSERT INTO event_chain (position, originator_id, originator_version, link)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (position) DO NOTHING",
        (
            notification.id,
            str(notification.originator_id),
            notification.originator_version,
            link(str(row[0]) if row else GENESIS, notification),
        ),
    )


def stored_links(cursor: Cursor) -> dict[int, tuple[str, int, str]]:
    cursor.execute("SELECT position, originator_id, originator_version, link FROM event_chain")
    return {int(r[0]): (str(r[1]), int(r[2]), str(r[3])) for r in cursor.fetchall()}
