"""The event store's recorders: each saves a command's events in one transaction and
chains every event in that same transaction (infra/store/chain.py).

PostgreSQL (`SingleTripRecorder`): the library's recorder sends each save as a
pipeline of statements that waits on the server many times. This one sends the
same statements (take the table lock, notify, insert, return the notification
ids) as one multi-statement query with client-side parameters. PostgreSQL runs
such a query as one implicit transaction: all of it commits, or none of it. The
EXCLUSIVE table lock keeps the library's guarantee that notification ids commit
in order, so a projector tailing the log never passes over an id that commits
later. The same lock makes the events table's AFTER INSERT trigger
(infra/store/schema.py) chain each row onto the true head of `event_chain`.

SQLite (`ChainingSQLiteRecorder`): the library's recorder inserts a save's events
in one transaction (BEGIN ... COMMIT). This one then appends the events' links to
`event_chain` before that transaction commits: an event and its link are stored
together or not at all. The events' INSERT comes first, so the chain's head is
read under SQLite's write lock, which no other writer can hold meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import PersistenceError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor
from psycopg import ClientCursor
from psycopg.sql import SQL, Composed, Identifier, Literal

from infra.store import chain as event_chain


class SingleTripRecorder(PostgresApplicationRecorder):
    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        # No @retry here, unlike the library: after a lost connection we cannot tell
        # whether the save landed, so the command seam decides (receipts tell it).
        assert not kwargs.get("tracking"), "this recorder does not record tracking"
        if not stored_events:
            return []
        params: list[Any] = []
        for stored in stored_events:
            params += [stored.originator_id, stored.originator_version, stored.topic, stored.state]
        with self.datastore.get_connection() as connection:
            cursor = ClientCursor(connection)
            cursor.execute(self._script(len(stored_events)), params)
            while cursor.nextset():
                pass  # The last result is the INSERT's RETURNING.
            return [row["notification_id"] for row in cursor.fetchall()]

    def _script(self, count: int) -> Composed:
        table = SQL("{}.{}").format(
            Identifier(self.datastore.schema), Identifier(self.events_table_name)
        )
        values = SQL(", ").join([SQL("(%s, %s, %s, %s)")] * count)
        return SQL(
            "SET LOCAL lock_timeout = {timeout}; "
            "LOCK TABLE {table} IN EXCLUSIVE MODE; "
            "NOTIFY {channel}; "
            "INSERT INTO {table} (originator_id, originator_version, topic, state) "
            "VALUES {values} RETURNING notification_id"
        ).format(
            timeout=Literal(f"{self.datastore.lock_timeout}s"),
            table=table,
            channel=Identifier(self.channel_name),
            values=values,
        )


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
