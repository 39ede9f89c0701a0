"""The SQLite recorder that chains every event in the transaction that stores it.

The library's recorder inserts a save's events in one transaction (BEGIN ...
COMMIT). This one then appends the events' links to `event_chain` (see
infra/event_chain.py) before that transaction commits: an event and its link are
stored together or not at all. The events' INSERT comes first, so the chain's
head is read under SQLite's write lock, which no other writer can hold meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import PersistenceError, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor

from infra import event_chain

_HEAD = f"SELECT position, link FROM {event_chain.TABLE} ORDER BY position DESC LIMIT 1"
_INSERT = (
    f"INSERT INTO {event_chain.TABLE} (position, originator_id, originator_version, link)"
    " VALUES (?, ?, ?, ?)"
)


class ChainingSQLiteRecorder(SQLiteApplicationRecorder):
    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        positions = super()._insert_events(c, stored_events, **kwargs)
        if not stored_events or positions is None:
            return positions
        c.execute(_HEAD)
        head = c.fetchone()
        head_position, previous = (int(head[0]), str(head[1])) if head else (0, event_chain.GENESIS)
        if positions[0] <= head_position:
            # SQLite reuses the rowid of a removed last event: a tampered store. Refuse
            # rather than chain a new event where a removed one's link stands.
            raise PersistenceError(
                f"the event chain already reaches position {head_position}, past the new "
                f"event's position {positions[0]}: events were removed from the end of the "
                "store (run `casino audit verify`); nothing was saved"
            )
        rows = []
        for position, stored in zip(positions, stored_events, strict=True):
            originator_id = self._as_read(stored.originator_id)
            previous = event_chain.link_of(
                previous, originator_id, stored.originator_version, stored.topic, stored.state
            )
            rows.append((position, originator_id, stored.originator_version, previous))
        c.executemany(_INSERT, rows)
        return positions

    def _as_read(self, originator_id: UUID | str) -> str:
        """The aggregate id as a reader of the store gets it back, as text."""
        if isinstance(originator_id, UUID):
            return str(originator_id)
        return str(self.convert_originator_id(originator_id))
