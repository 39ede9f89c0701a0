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

Both seal each transaction that inserts events (infra/store/seal.py) when given a
`sealer`: one seal row over all the events that transaction inserts, written before
it commits, its `previous` read under the same lock that orders the events. On
PostgreSQL that costs a second round trip (the seal signs the positions the INSERT
returns), so the script opens the transaction itself (BEGIN) and the second trip
inserts the seal and commits. Whoever batches several commands into one
transaction must call `insert_events` once for all of them (one seal per
transaction), or call `seal_positions` once before its commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import PersistenceError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor
from psycopg import ClientCursor
from psycopg.sql import SQL, Composable, Composed, Identifier, Literal

from infra.logs import get_logger
from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.seal import Sealer

log = get_logger("casino.store")
_NOTHING = SQL("")
_SEAL_HEAD = f"SELECT digest, last_position FROM {seals.TABLE} ORDER BY last_position DESC LIMIT 1"


def next_seal(
    sealer: Sealer,
    head: Sequence[Any] | None,
    positions: Sequence[int],
    stored: Sequence[StoredEvent],
) -> seals.Seal:
    """The seal of a transaction's events, after the seal `head` (a row of _SEAL_HEAD)."""
    previous, last = (str(head[0]), int(head[1])) if head else (seals.GENESIS, 0)
    if positions[0] <= last:
        # SQLite reuses the rowids of removed last events: a tampered store.
        raise PersistenceError(
            f"the seals already reach position {last}, past the new event's position "
            f"{positions[0]}: events were removed from the end of the store (run "
            "`casino audit verify`); nothing was saved"
        )
    return sealer.seal(positions, stored, previous)


class SingleTripRecorder(PostgresApplicationRecorder):
    sealer: Sealer | None = None

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
            if self.sealer is None:
                cursor.execute(self._script(len(stored_events)), params)
                while cursor.nextset():
                    pass  # The last result is the INSERT's RETURNING.
                return [row["notification_id"] for row in cursor.fetchall()]
            return self._insert_sealed(cursor, self.sealer, stored_events, params)

    def _insert_sealed(
        self,
        cursor: ClientCursor[Any],
        sealer: Sealer,
        stored: Sequence[StoredEvent],
        params: list[Any],
    ) -> list[int]:
        try:
            seal_table = SQL("{}.{}").format(
                Identifier(self.datastore.schema), Identifier(seals.TABLE)
            )
            head_query = SQL(_SEAL_HEAD.replace(seals.TABLE, "{}") + "; ").format(seal_table)
            cursor.execute(SQL("BEGIN; ") + self._script(len(stored), head_query), params)
            results = []
            while True:
                if cursor.description is not None:
                    results.append(cursor.fetchall())
                if not cursor.nextset():
                    break
            head_rows, inserted = results[-2], results[-1]
            positions = [row["notification_id"] for row in inserted]
            head = (head_rows[0]["digest"], head_rows[0]["last_position"]) if head_rows else None
            seal = next_seal(sealer, head, positions, stored)
            cursor.execute(self._seal_script(), seal.row())
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        return positions

    def _seal_script(self) -> Composed:
        table = SQL("{}.{}").format(Identifier(self.datastore.schema), Identifier(seals.TABLE))
        return SQL(
            "INSERT INTO {table} ("
            + seals.COLUMNS
            + ") VALUES (%s, %s, %s, %s, %s, %s, %s); COMMIT"
        ).format(table=table)

    def _script(self, count: int, before_insert: Composable = _NOTHING) -> Composed:
        table = SQL("{}.{}").format(
            Identifier(self.datastore.schema), Identifier(self.events_table_name)
        )
        values = SQL(", ").join([SQL("(%s, %s, %s, %s)")] * count)
        return SQL(
            "SET LOCAL lock_timeout = {timeout}; "
            "LOCK TABLE {table} IN EXCLUSIVE MODE; "
            "NOTIFY {channel}; "
            "{before_insert}"
            "INSERT INTO {table} (originator_id, originator_version, topic, state) "
            "VALUES {values} RETURNING notification_id"
        ).format(
            timeout=Literal(f"{self.datastore.lock_timeout}s"),
            table=table,
            channel=Identifier(self.channel_name),
            before_insert=before_insert,
            values=values,
        )


_HEAD = f"SELECT position, link FROM {event_chain.TABLE} ORDER BY position DESC LIMIT 1"
_INSERT = (
    f"INSERT INTO {event_chain.TABLE} (position, originator_id, originator_version, link)"
    " VALUES (?, ?, ?, ?)"
)


class ChainingSQLiteRecorder(SQLiteApplicationRecorder):
    sealer: Sealer | None = None

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
        if self.sealer is not None:
            self._seal(c, self.sealer, positions, stored_events)
        return positions

    def _seal(
        self,
        c: SQLiteCursor,
        sealer: Sealer,
        positions: Sequence[int],
        stored: Sequence[StoredEvent],
    ) -> None:
        c.execute(_SEAL_HEAD)
        seal = next_seal(sealer, c.fetchone(), positions, stored)
        c.execute(
            f"INSERT INTO {seals.TABLE} ({seals.COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", seal.row()
        )

    def _as_read(self, originator_id: UUID | str) -> str:
        """The aggregate id as a reader of the store gets it back, as text."""
        if isinstance(originator_id, UUID):
            return str(originator_id)
        return str(self.convert_originator_id(originator_id))


class SealedSnapshots:
    """The snapshot store's recorder, wrapped: each snapshot written is signed, and one
    read whose signature fails (forged, or written before sealing) is ignored and
    logged, so the aggregate loads from its events. Without a sealer no snapshot is
    written or trusted: they only ever speed loading up."""

    def __init__(self, recorder: Any, sealer: Sealer | None) -> None:
        self.recorder = recorder
        self.sealer = sealer

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Any:
        if self.sealer is None:
            return None
        signed = [self.sealer.sign_snapshot(stored) for stored in stored_events]
        return self.recorder.insert_events(signed, **kwargs)

    def select_events(self, originator_id: Any, **kwargs: Any) -> list[StoredEvent]:
        if self.sealer is None:
            return []
        found = []
        for stored in self.recorder.select_events(originator_id, **kwargs):
            snapshot = seals.snapshot_signed(self.sealer.public_key, stored)
            if snapshot is None:
                log.warning(
                    "snapshot_ignored",
                    originator_id=str(stored.originator_id),
                    originator_version=stored.originator_version,
                    reason="its seal does not verify: forged, or written before sealing",
                )
                continue
            found.append(snapshot)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.recorder, name)
