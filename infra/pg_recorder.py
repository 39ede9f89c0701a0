"""A PostgreSQL recorder that saves in one round trip.

The library's recorder sends each save as a pipeline of statements that waits on
the server many times. This one sends the same statements (take the table lock,
notify, insert, return the notification ids) as one multi-statement query with
client-side parameters. PostgreSQL runs such a query as one implicit
transaction: all of it commits, or none of it. The EXCLUSIVE table lock keeps
the library's guarantee that notification ids commit in order, so a projector
tailing the log never passes over an id that commits later. The same lock makes
the events table's AFTER INSERT trigger (infra/schema.py) chain each row onto the
true head of `event_chain`, inside this transaction (infra/event_chain.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import ClientCursor
from psycopg.sql import SQL, Composed, Identifier, Literal


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
