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
PostgreSQL it still takes one trip: the recorder makes the seal before sending,
over the positions that follow the head it last saw (it gives the events their
positions itself), and the script first checks, under the lock, that the head is
still that (`expect_log_top`, infra/store/schema.py); if another process saved
meanwhile it fails with serialization_failure, and the recorder reads the head
and seals again. Whoever batches several commands into one transaction (group
commit, infra/store/group_commit.py) must hand all their events to one
`insert_events` call: one seal per transaction. Its command receipts come along
(`receipts=`), written in the same transaction and covered by its seal
(infra/store/receipts.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, cast
from uuid import UUID

import psycopg
import psycopg.rows
from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor
from eventsourcing.utils import retry
from psycopg import ClientCursor
from psycopg.sql import SQL, Composed, Identifier, Literal

from infra.commands.receipt import ReceiptRecord
from infra.store import chain as event_chain
from infra.store import receipts as receipt_rows
from infra.store import seal as seals
from infra.store.event_reads import ComposedReads
from infra.store.receipts import KeepsReceipts
from infra.store.seal import Sealer

SEAL_TRIES_MAX = 1  # one-trip tries before the locked two-trip save, which cannot lose
CONTENDED_SAVES = 100  # after a lost race, saves that go straight to the locked path
_SEAL_HEAD = f"SELECT {seals.COLUMNS} FROM {seals.TABLE} ORDER BY last_position DESC LIMIT 1"


def trusted_head(sealer: Sealer, row: Sequence[Any] | None) -> tuple[str, int]:
    """The last seal's digest and position (a row of _SEAL_HEAD), once it is known to
    be the service's: a seal row inserted behind its back (the service's role may
    insert seals) would otherwise let a forged tail pass for a sealed one."""
    if row is None:
        return seals.GENESIS, 0
    try:
        seal = seals.seal_of(row)
    except (TypeError, ValueError, OverflowError):
        seal = None
    if seal is not None and not seals.signed(sealer.head_keys, seal) and sealer.refresh:
        sealer.refresh()  # a rotation recorded by another process since we last read
    if seal is not None and sealer.successors and seals.signed(sealer.successors, seal):
        raise seals.SealKeyRetired(
            f"this server's seal key was handed over to the next by a rotation, which has "
            f"sealed the log since (position {seal.last_position}): restart this server "
            "with the next key (CASINO_SEAL_KEY); nothing was saved"
        )
    if seal is None or not seals.signed(sealer.head_keys, seal):
        raise seals.LogTampered(
            f"the last seal, ending at position {row[0]}, is not signed by the service's "
            "key: it was inserted behind the service's back (run `casino audit verify`); "
            "nothing was saved"
        )
    return seal.digest, seal.last_position


def next_seal(
    sealer: Sealer,
    head: Sequence[Any] | None,
    positions: Sequence[int],
    stored: Sequence[StoredEvent],
    receipts: str | None = None,
) -> seals.Seal:
    """The seal of a transaction's events, after the seal `head` (a row of _SEAL_HEAD)."""
    previous, last = trusted_head(sealer, head)
    if positions[0] <= last:
        # SQLite reuses the rowids of removed last events: a tampered store.
        raise seals.LogTampered(
            f"the seals already reach position {last}, past the new event's position "
            f"{positions[0]}: events were removed from the end of the store (run "
            "`casino audit verify`); nothing was saved"
        )
    if head and positions[0] > last + 1:
        # Events past the last seal were inserted behind the service's back: a save
        # on top of them would act on them (a forged deposit paying a withdrawal).
        raise seals.LogTampered(
            f"the events after position {last} are in no seal: they were inserted behind "
            "the service's back (run `casino audit verify`); nothing was saved"
        )
    return sealer.seal(positions, stored, previous, receipts)


# The plain data_exception schema.py's expect_log_top raises for a tampered log.
TAMPERED_SQLSTATE = "22000"


def refuse_if_read_only(recorder: Any) -> None:
    if recorder.read_only:
        raise seals.UnsealedWrite(
            "this store was opened only to read (no seal key): it saves no event"
        )


class SingleTripRecorder(KeepsReceipts, ComposedReads, PostgresApplicationRecorder):
    sealer: Sealer | None = None
    read_only = False  # a store opened to read (infra/cli/store.py) saves nothing
    races_lost = 0  # one-trip saves refused because another process had saved first
    _locked_saves_left = 0
    # The last seal's digest and the log's last position, as this recorder left them.
    _seal_head: tuple[str, int] | None = None

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        # No @retry here, unlike the library: after a lost connection we cannot tell
        # whether the save landed, so the command seam decides (receipts tell it).
        assert not kwargs.get("tracking"), "this recorder does not record tracking"
        if not stored_events:
            return []
        refuse_if_read_only(self)
        receipts: Sequence[ReceiptRecord] = kwargs.get("receipts") or ()
        with self.datastore.get_connection() as connection:
            if self.sealer is not None:
                return self._insert_sealed(connection, self.sealer, stored_events, receipts)
            return self._insert_unsealed(connection, stored_events, receipts)

    def _insert_unsealed(
        self, connection: Any, stored_events: Sequence[StoredEvent], receipts: Sequence[Any]
    ) -> list[int]:
        """A store that seals nothing (tests, benchmarks): the script refuses, under the
        lock, to add to a log that has a seal (schema.py: refuse_unsealed_save)."""
        params: list[Any] = []
        for stored in stored_events:
            params += [stored.originator_id, stored.originator_version]
            params += [stored.topic, stored.state]
        # Unsealed, the receipts' position is the log's top once the events are in.
        for row in receipt_rows.rows_of(receipts, 0, _same):
            params += row[:-1]
        cursor = ClientCursor(connection)
        try:
            cursor.execute(self._script(len(stored_events), len(receipts)), params)
        except psycopg.errors.AssertFailure as error:
            raise seals.UnsealedWrite(error.diag.message_primary or str(error)) from None
        ids: list[int] = []
        while True:  # The INSERT's RETURNING is the one result with rows.
            names = [column.name for column in cursor.description or ()]
            if names == ["notification_id"]:
                ids = [row["notification_id"] for row in cursor.fetchall()]
            if not cursor.nextset():
                return ids

    def _insert_sealed(
        self,
        connection: Any,
        sealer: Sealer,
        stored: Sequence[StoredEvent],
        receipts: Sequence[ReceiptRecord],
    ) -> list[int]:
        """One trip, as unsealed: the seal is made before the INSERT, over the positions
        the events will take (the ones after the head this recorder last saw), and
        save_sealed checks under the lock that the head has not moved, else it fails
        and the save is sealed again under the lock, which cannot lose. Server
        processes on one store (`casino serve --workers N`) save in turn and would
        lose that race almost every time, a wasted transaction each: after one lost
        race the next CONTENDED_SAVES saves take the locked path straight away."""
        tries = 0 if self._locked_saves_left else SEAL_TRIES_MAX
        self._locked_saves_left = max(0, self._locked_saves_left - 1)
        for _ in range(tries):
            head = self._seal_head or self._read_seal_head(connection, sealer)
            try:
                with self._refusing_a_tampered_log():
                    return self._send_sealed(connection, sealer, stored, receipts, head)
            except psycopg.errors.SerializationFailure:
                self.races_lost += 1  # Another process saved meanwhile.
                self._locked_saves_left = CONTENDED_SAVES
        with self._refusing_a_tampered_log(), connection.transaction():
            connection.execute(
                SQL("SET LOCAL lock_timeout = {}; LOCK TABLE {}.{} IN EXCLUSIVE MODE").format(
                    Literal(f"{self.datastore.lock_timeout}s"),
                    Identifier(self.datastore.schema),
                    Identifier(self.events_table_name),
                )
            )
            head = self._read_seal_head(connection, sealer)  # under the lock: final
            return self._send_sealed(connection, sealer, stored, receipts, head)

    def _send_sealed(
        self,
        connection: Any,
        sealer: Sealer,
        stored: Sequence[StoredEvent],
        receipts: Sequence[ReceiptRecord],
        head: tuple[str, int],
    ) -> list[int]:
        previous, top = head
        positions = list(range(top + 1, top + 1 + len(stored)))
        rows = receipt_rows.rows_of(receipts, positions[-1], _same)
        seal = sealer.seal(positions, stored, previous, receipt_rows.receipts_digest_of(rows))
        # One statement of fixed text (schema.py: save_sealed), its rows bound as arrays
        # on the server, in binary: building the multi-statement script with every value
        # inlined client-side was a tenth of a P2P command's CPU (py-spy, bench_load).
        key_ids, scoped, fingerprints, answers, hashes, recorded, _ = (
            [list(column) for column in zip(*rows, strict=True)] if rows else [[]] * 7
        )
        connection.execute(
            self._save_statement or self._remember_save_statement(connection),
            [
                f"{self.datastore.lock_timeout}s", self.channel_name, previous, top, positions,
                [event.originator_id for event in stored],
                [event.originator_version for event in stored],
                [event.topic for event in stored], [event.state for event in stored],
                key_ids, scoped, fingerprints, answers, hashes, recorded, *seal.row(),
            ],
        )  # fmt: skip
        self._seal_head = (seal.digest, positions[-1])
        return positions

    @contextlib.contextmanager
    def _refusing_a_tampered_log(self) -> Iterator[None]:
        """expect_log_top's refusals as LogTampered; after any failure, the head this
        recorder last saw is forgotten."""
        try:
            yield
        except psycopg.errors.DataException as error:
            self._seal_head = None
            if error.sqlstate == TAMPERED_SQLSTATE:
                raise seals.LogTampered(error.diag.message_primary or str(error)) from None
            raise
        except BaseException:
            self._seal_head = None
            raise

    def _read_seal_head(self, connection: Any, sealer: Sealer) -> tuple[str, int]:
        schema = Identifier(self.datastore.schema)
        top = connection.execute(SQL("SELECT {schema}.log_top()").format(schema=schema))
        log_top = int(top.fetchone()["log_top"])
        cursor = connection.cursor(row_factory=psycopg.rows.tuple_row)
        cursor.execute(
            SQL(_SEAL_HEAD.replace(seals.TABLE, "{schema}.{seals}")).format(
                schema=schema, seals=Identifier(seals.TABLE)
            )
        )
        digest, _ = trusted_head(sealer, cursor.fetchone())
        return digest, log_top

    def _receipts_insert(self, count: int, position: SQL | Composed) -> SQL | Composed:
        """The INSERT of a save's `count` receipts (none: nothing), at `position`."""
        if not count:
            return SQL("")
        row = SQL("(%s, %s, %s, %s, %s, %s, {})").format(position)
        return SQL("INSERT INTO {}.{} ({}) VALUES {}; ").format(
            Identifier(self.datastore.schema),
            Identifier(receipt_rows.TABLE),
            SQL(receipt_rows.INSERT_COLUMNS),
            SQL(", ").join([row] * count),
        )

    _save_statement: bytes | None = None

    def _remember_save_statement(self, connection: Any) -> bytes:
        self._save_statement = self._save_sql().as_bytes(connection)
        return self._save_statement

    def _save_sql(self) -> Composed:
        """save_sealed's call, each parameter typed as the function declares it."""
        kinds = ["text", "text", "text", "bigint", "bigint[]", "uuid[]", "bigint[]", "text[]",
                 "bytea[]", "uuid[]", "text[]", "text[]", "bytea[]", "text[]", "bigint[]",
                 "bigint", "bigint", "bigint", "text", "text", "text", "text", "text"]  # fmt: skip
        # Arrays in binary: 40 UUIDs dump in 13 us against the text form's 63, 40
        # strings in 12 against 72 (text was a fifth of the committer's time, py-spy).
        marks = ", ".join(f"%{'b' if kind.endswith('[]') else 's'}::{kind}" for kind in kinds)
        return SQL("SELECT {}.save_sealed(" + marks + ")").format(Identifier(self.datastore.schema))

    def _script(self, count: int, receipts: int) -> Composed:
        schema = Identifier(self.datastore.schema)
        table = SQL("{}.{}").format(schema, Identifier(self.events_table_name))
        values = SQL(", ").join([SQL("(%s, %s, %s, %s)")] * count)
        top = SQL("(SELECT {}.log_top())").format(schema)  # under the lock: this save's last
        return SQL(
            "SET LOCAL lock_timeout = {timeout}; "
            "LOCK TABLE {table} IN EXCLUSIVE MODE; "
            "SELECT {schema}.refuse_unsealed_save(); "
            "NOTIFY {channel}; "
            "INSERT INTO {table} (originator_id, originator_version, topic, state) "
            "VALUES {values} RETURNING notification_id; "
            "{receipts}"
        ).format(
            timeout=Literal(f"{self.datastore.lock_timeout}s"),
            table=table,
            schema=schema,
            channel=Identifier(self.channel_name),
            values=values,
            receipts=self._receipts_insert(receipts, top),
        )

    def _stored_id(self, key_id: UUID) -> Any:
        return key_id

    def _find_sql(self) -> str:
        schema = self.datastore.schema
        return receipt_rows.FIND_SQL.format(
            p="%s", events=f"{schema}.{self.events_table_name}"
        ).replace(f"FROM {receipt_rows.TABLE}", f"FROM {schema}.{receipt_rows.TABLE}")

    def _prune_sql(self) -> str:
        return receipt_rows.PRUNE_SQL.format(p="%s").replace(
            receipt_rows.TABLE, f"{self.datastore.schema}.{receipt_rows.TABLE}"
        )

    # A read, so safe to try again after a lost connection, as the library's reads are.
    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def _query_one(self, sql: str, params: Sequence[Any]) -> Sequence[Any] | None:
        with self.datastore.get_connection() as connection:
            cursor = connection.cursor(row_factory=psycopg.rows.tuple_row)
            cursor.execute(sql, params)
            return cast(Sequence[Any] | None, cursor.fetchone())

    def _update(self, sql: str, params: Sequence[Any]) -> int:
        with self.datastore.get_connection() as connection, connection.transaction():
            return connection.execute(sql, params).rowcount


_HEAD = f"SELECT position, link FROM {event_chain.TABLE} ORDER BY position DESC LIMIT 1"
_INSERT = (
    f"INSERT INTO {event_chain.TABLE} (position, originator_id, originator_version, link)"
    " VALUES (?, ?, ?, ?)"
)


_INSERT_RECEIPT = (
    f"INSERT INTO {receipt_rows.TABLE} ({receipt_rows.INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _same(key_id: UUID) -> UUID:
    return key_id  # as PostgreSQL's uuid column keeps ids (and reads them back)


def _hex(key_id: UUID) -> str:
    return key_id.hex  # as SQLite's recorder stores ids


class ChainingSQLiteRecorder(KeepsReceipts, SQLiteApplicationRecorder):
    sealer: Sealer | None = None
    read_only = False  # a store opened to read (infra/cli/store.py) saves nothing

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        if stored_events:
            refuse_if_read_only(self)
        positions = super()._insert_events(c, stored_events, **kwargs)
        if not stored_events or positions is None:
            return positions
        if self.sealer is None:
            # Under SQLite's write lock, as PostgreSQL's refuse_unsealed_save.
            c.execute(f"SELECT 1 FROM {seals.TABLE} LIMIT 1")
            if c.fetchone() is not None:
                raise seals.UnsealedWrite(seals.UNSEALED_SAVE_REFUSED)
        c.execute(_HEAD)
        head = c.fetchone()
        head_position, previous = (int(head[0]), str(head[1])) if head else (0, event_chain.GENESIS)
        if positions[0] <= head_position:
            # SQLite reuses the rowid of a removed last event: a tampered store. Refuse
            # rather than chain a new event where a removed one's link stands.
            raise seals.LogTampered(
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
        receipts = receipt_rows.rows_of(kwargs.get("receipts") or (), positions[-1], _hex)
        seal = None
        if self.sealer is not None:
            # Before the receipts, as on PostgreSQL: a tampered log refuses the save
            # first, whatever its receipts would meet.
            c.execute(_SEAL_HEAD)
            digest = receipt_rows.receipts_digest_of(receipts)
            seal = next_seal(self.sealer, c.fetchone(), positions, stored_events, digest)
        if receipts:
            c.executemany(_INSERT_RECEIPT, receipts)
        if seal is not None:
            c.execute(seals.insert_sql(), seal.row())
        return positions

    def _stored_id(self, key_id: UUID) -> Any:
        return _hex(key_id)

    def _find_sql(self) -> str:
        return receipt_rows.FIND_SQL.format(p="?", events=self.events_table_name)

    def _prune_sql(self) -> str:
        return receipt_rows.PRUNE_SQL.format(p="?")

    def _query_one(self, sql: str, params: Sequence[Any]) -> Sequence[Any] | None:
        with self.datastore.transaction(commit=False) as c:
            c.execute(sql, params)
            return cast(Sequence[Any] | None, c.fetchone())

    def _update(self, sql: str, params: Sequence[Any]) -> int:
        with self.datastore.transaction(commit=True) as c:
            c.execute(sql, params)
            return int(c.sqlite_cursor.rowcount)

    def _as_read(self, originator_id: UUID | str) -> str:
        """The aggregate id as a reader of the store gets it back, as text."""
        if isinstance(originator_id, UUID):
            return str(originator_id)
        return str(self.convert_originator_id(originator_id))
