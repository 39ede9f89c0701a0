"""The PostgreSQL recorder's reads of events (infra/store/recorders.py:
`SingleTripRecorder` takes them from here): the library's query with its text
composed once per shape, and the events after several aggregates' versions in one
round trip."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresAggregateRecorder
from eventsourcing.utils import retry
from psycopg.sql import SQL, Identifier

TOGETHER_MAX = 8  # aggregates `select_newer` checks at once: a table's answer needs two


class ComposedReads(PostgresAggregateRecorder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._select_statements: dict[tuple[bool, bool, bool, bool], bytes] = {}
        self._newer_statements: dict[int, bytes] = {}

    # As the library's: a pooled connection found dead is retried (get_connection
    # raises psycopg's errors as the library's own), as any read may be.
    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        """The library's query, its text composed once per shape: the library composes
        it on every call, which was a third of the CPU of a query's freshness check
        (cProfile on thread time, GET of a P2P table: four such reads)."""
        shape = (gt is not None, lte is not None, desc, limit is not None)
        statement = self._select_statements.get(shape)
        if statement is None:
            statement = self._select_statements[shape] = self._select_sql(*shape)
        params = [originator_id, *(value for value in (gt, lte, limit) if value is not None)]
        with self.datastore.get_connection() as connection, connection.cursor() as cursor:
            cursor.execute(statement, params, prepare=True)
            return [_stored_event(row) for row in cursor.fetchall()]

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def select_newer(
        self, versions: dict[UUID, int], limit_each: int
    ) -> dict[UUID, list[StoredEvent]] | None:
        """The events after each aggregate's version, for several aggregates in one
        round trip (infra/commands/fresh_reads.py: `together`, as `NewerReads`); None
        when the answer was cut short by its limit (`limit_each` for each aggregate),
        so none may be trusted."""
        assert 0 < len(versions) <= TOGETHER_MAX, len(versions)
        statement = self._newer_statements.get(len(versions))
        if statement is None:
            statement = self._newer_statements[len(versions)] = self._newer_sql(len(versions))
        limit = limit_each * len(versions)
        params: list[Any] = [value for pair in versions.items() for value in pair]
        with self.datastore.get_connection() as connection, connection.cursor() as cursor:
            cursor.execute(statement, [*params, limit], prepare=True)
            rows = cursor.fetchall()
        if len(rows) >= limit:
            return None
        newer: dict[UUID, list[StoredEvent]] = {key: [] for key in versions}
        for row in rows:
            newer[row["originator_id"]].append(_stored_event(row))
        return newer

    def _newer_sql(self, count: int) -> bytes:
        # An OR of (id, version) ranges: PostgreSQL scans the primary key once for each.
        ranges = " OR ".join(["(originator_id = %s AND originator_version > %s)"] * count)
        return (
            SQL("SELECT * FROM {}.{} WHERE " + ranges)
            .format(Identifier(self.datastore.schema), Identifier(self.events_table_name))
            .as_bytes(None)
            + b" ORDER BY originator_id, originator_version LIMIT %s"
        )

    def _select_sql(self, gt: bool, lte: bool, desc: bool, limit: bool) -> bytes:
        statement = self.select_events_statement
        if gt:
            statement += SQL(" AND originator_version > %s")
        if lte:
            statement += SQL(" AND originator_version <= %s")
        statement += SQL(
            " ORDER BY originator_version DESC" if desc else " ORDER BY originator_version ASC"
        )
        if limit:
            statement += SQL(" LIMIT %s")
        return statement.as_bytes(None)


def _stored_event(row: dict[str, Any]) -> StoredEvent:
    """An event as the library's recorder reads it (its dict rows, bytea as bytes)."""
    return StoredEvent(
        originator_id=row["originator_id"],
        originator_version=row["originator_version"],
        topic=row["topic"],
        state=bytes(row["state"]),
    )
