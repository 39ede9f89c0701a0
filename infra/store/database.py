"""Connections for the read models, beside the event store, on SQLite or PostgreSQL."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from infra.store.faults import RECONNECT_SECONDS, StoreTimeouts, check_deadline, check_soon
from projections.base import Cursor

SQLITE_BUSY_TIMEOUT_SECONDS = 10.0
POSTGRES_OPEN_SECONDS = 30  # what a new pool may take to open its first connections
# One advisory lock serialises the projector's writers, whichever process they run in.
PROJECTION_LOCK_KEY = 72_010_001


class SQLiteDatabase:
    dialect = "sqlite"

    def __init__(self, path: str, *, durable: bool = True) -> None:
        """`durable=False` for a scratch copy thrown away after use (a rebuild aside):
        its commits skip the fsync, which a crash could only cost the copy, and its
        rollback journal is kept in memory: each page is written once, not to a WAL
        and again to the file (8% off a rebuild's time, benchmarks/bench_audit.py).
        No one reads a scratch copy while it is written, so it needs no WAL."""
        self.path = path
        self.durable = durable

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path, timeout=SQLITE_BUSY_TIMEOUT_SECONDS, isolation_level=None
        )
        if self.durable:
            connection.execute("PRAGMA journal_mode=WAL")
        else:
            connection.execute("PRAGMA journal_mode=MEMORY")
            connection.execute("PRAGMA synchronous=OFF")
        return connection

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[Cursor]:
        check_deadline()
        connection = self._connect()
        try:
            cursor = connection.cursor()
            cursor.execute(begin)
            try:
                yield cursor  # type: ignore[misc]
            except BaseException:
                connection.rollback()
                raise
            connection.commit()
        finally:
            connection.close()

    def read(self) -> Any:
        # In WAL mode a read transaction sees one snapshot throughout: also `snapshot`.
        return self._transaction("BEGIN")

    def snapshot(self) -> Any:
        return self.read()

    def write(self) -> Any:
        # IMMEDIATE takes SQLite's write lock at once: one projector writer at a time.
        return self._transaction("BEGIN IMMEDIATE")

    def script(self, sql: str) -> None:
        connection = self._connect()
        try:
            connection.executescript(sql)
        finally:
            connection.close()

    def close(self) -> None:
        pass


def open_waiting(pool: ConnectionPool[Any]) -> None:
    """Open a pool and wait for its first connections, up to POSTGRES_OPEN_SECONDS:
    a database slow to let a new process in delays the opening, not a statement
    (tests/infra/store/test_slow_start.py). A pool that never connects is closed, or
    its workers would go on trying."""
    try:
        pool.open(wait=True, timeout=POSTGRES_OPEN_SECONDS)
    except Exception:
        pool.close()
        raise


@functools.lru_cache(maxsize=256)  # the read models' tables and column lists: a few dozen
def _copy_statement(table: str, columns: tuple[str, ...] | None) -> bytes:
    """COPY's text for a table and its columns, composed once: composing it on every
    call cost a tenth of a small catch-up's CPU (cProfile on thread time, 20-event
    batches of P2P rounds)."""
    listed: sql.Composable = sql.SQL("")
    if columns is not None:
        listed = sql.SQL(" ({})").format(sql.SQL(", ").join(map(sql.Identifier, columns)))
    return sql.SQL("COPY {}{} FROM STDIN").format(sql.Identifier(table), listed).as_bytes(None)


# The column types a statement's arrays are cast to; a table with any other is
# written as before (projections/base.py): no name read from the catalog is pasted
# into SQL, only these. The types are read once per process and database: the read
# models' tables are made when a process opens the store (their SCHEMA), and a type
# changed under a running one makes its writes fail, or (a fraction written to what
# was an integer column: no read model writes one) round.
ARRAY_TYPES = frozenset(("text", "bigint", "integer", "smallint", "double precision", "boolean"))
ColumnTypes = dict[str, str]  # column name -> type, in the table's order


@functools.lru_cache(maxsize=256)  # the read models' statements: a few dozen
def _unnest_insert(
    table: str, columns: tuple[str, ...], types: tuple[str, ...], on_conflict: str
) -> str:
    arrays = ", ".join(f"%s::{kind}[]" for kind in types)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM unnest({arrays}) {on_conflict}"
    )


@functools.lru_cache(maxsize=256)
def _unnest_update(table: str, key: str, columns: tuple[str, ...], types: tuple[str, ...]) -> str:
    arrays = ", ".join(f"%s::{kind}[]" for kind in types)
    names = ", ".join(f"c{n}" for n in range(len(types)))
    assignments = ", ".join(f"{column} = v.c{n}" for n, column in enumerate(columns, start=1))
    return (
        f"UPDATE {table} SET {assignments} FROM unnest({arrays}) AS v({names})"
        f" WHERE {table}.{key} = v.c0"
    )


class _PostgresCursor:
    """Lets the read models write `?` placeholders on PostgreSQL too, and writes their
    many rows a column at a time (`insert_by_column`, `delete_by_keys`, `update_by_key`):
    one statement of a few arrays, whatever the number of rows. A VALUES list of a few
    hundred rows was a new text for psycopg to parse each time (it keeps no statement of
    over 50 parameters) and for the server to plan: a tenth of a rebuild's Python
    (py-spy, benchmarks/bench_audit.py)."""

    def __init__(self, cursor: Any, types: dict[str, ColumnTypes] | None = None) -> None:
        self._cursor = cursor
        self._types = {} if types is None else types  # by table, shared by the database

    def insert_by_column(
        self,
        table: str,
        columns: Sequence[str] | None,
        values: Sequence[Sequence[Any]],
        on_conflict: str,
    ) -> bool:
        """INSERT the rows; False, having written nothing, for a table of a type not
        in ARRAY_TYPES, or without `columns` (the catalog's names are never pasted)."""
        if columns is None:
            return False
        names = tuple(columns)
        types = self._array_types(table, names)
        if types is None:
            return False
        statement = _unnest_insert(table, names, types, on_conflict)
        self._cursor.execute(statement, [list(column) for column in zip(*values, strict=True)])
        return True

    def delete_by_keys(self, table: str, column: str, keys: Sequence[Any]) -> bool:
        """DELETE the rows whose `column` is one of `keys` (False: as insert_by_column)."""
        types = self._array_types(table, (column,))
        if types is None:
            return False
        self._cursor.execute(f"DELETE FROM {table} WHERE {column} = ANY(%s::{types[0]}[])", [keys])
        return True

    def update_by_key(
        self, table: str, key: str, columns: Sequence[str], values: Sequence[Sequence[Any]]
    ) -> bool:
        """UPDATE rows found by `key`: each of `values` is the key, then the new value of
        each of `columns` (False: as insert_by_column)."""
        types = self._array_types(table, (key, *columns))
        if types is None:
            return False
        statement = _unnest_update(table, key, tuple(columns), types)
        self._cursor.execute(statement, [list(column) for column in zip(*values, strict=True)])
        return True

    def _array_types(self, table: str, columns: Sequence[str]) -> tuple[str, ...] | None:
        known = self._types_of(table)
        types = tuple(known.get(column, "") for column in columns)
        return types if all(kind in ARRAY_TYPES for kind in types) else None

    def _types_of(self, table: str) -> ColumnTypes:
        """The table's columns and their types, read from the catalog once per database."""
        found = self._types.get(table)
        if found is None:
            self._cursor.execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
                " ORDER BY attnum",
                (table,),
            )
            found = self._types[table] = {str(n): str(t) for n, t in self._cursor.fetchall()}
        return found

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._cursor.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, params: Iterable[Sequence[Any]]) -> None:
        self._cursor.executemany(sql.replace("?", "%s"), params)

    def copy_rows(
        self, table: str, columns: Sequence[str] | None, rows: Iterable[Sequence[Any]]
    ) -> None:
        """Many plain INSERTs at once: COPY, with no SQL text to parse per row. Without
        `columns`, each row holds every column of the table, in order."""
        statement = _copy_statement(table, None if columns is None else tuple(columns))
        with self._cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)

    def fetch_binary(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        """The rows of a query, sent by the server in binary: no text to parse (a bytea
        column as hex text cost half the time of reading the log, benchmarks/bench_audit.py)."""
        self._cursor.execute(sql.replace("?", "%s"), params, binary=True)
        return list(self._cursor.fetchall())

    def fetchone(self) -> Sequence[Any] | None:
        row: Sequence[Any] | None = self._cursor.fetchone()
        return row

    def fetchall(self) -> list[Sequence[Any]]:
        return list(self._cursor.fetchall())


class PostgresDatabase:
    dialect = "postgres"

    def __init__(
        self,
        conninfo: str,
        schema: str,
        pool_size: int,
        lock_key: int | None = PROJECTION_LOCK_KEY,
        *,
        durable: bool = True,
        timeouts: StoreTimeouts | None = None,
        application_name: str = "casino",
    ) -> None:
        """`lock_key`: the advisory lock `write` takes; None for a private copy.
        `durable=False` for a scratch copy thrown away after use: its commits do not
        wait for the WAL's flush. `timeouts`: a server's, set from its request deadline
        (infra/store/faults.py); by default no statement is cut short. Each process
        names its connections (`application_name`), so an operator, or a test, can
        tell them apart in pg_stat_activity."""
        self.conninfo = conninfo
        self.schema = schema
        self.lock_key = lock_key
        self.durable = durable
        self.column_types: dict[str, ColumnTypes] = {}  # by table (_PostgresCursor)
        timeouts = timeouts or StoreTimeouts.unbounded_statements()
        self.connect_options: dict[str, Any] = {
            # A scratch copy's commits never wait for the WAL (set once per session).
            "options": f"-c search_path={schema} {timeouts.options()}"
            + ("" if durable else " -c synchronous_commit=off"),
            "connect_timeout": timeouts.connect_seconds,
            "application_name": application_name,
        }
        self.pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=pool_size,
            kwargs=self.connect_options,
            timeout=timeouts.connect_seconds,
            reconnect_timeout=RECONNECT_SECONDS,
            open=False,
        )
        open_waiting(self.pool)

    @contextmanager
    def _transaction(self, lock: bool, repeatable: bool = False) -> Iterator[Cursor]:
        check_deadline()
        try:
            with self.pool.connection() as connection, connection.transaction():
                cursor = _PostgresCursor(connection.cursor(), self.column_types)
                if repeatable:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                if lock and self.lock_key is not None:
                    cursor.execute("SELECT pg_advisory_xact_lock(?)", (self.lock_key,))
                yield cursor
        except (psycopg.OperationalError, psycopg.InterfaceError):
            check_soon(self.pool)  # its other idle connections may be broken too
            raise

    def read(self) -> Any:
        return self._transaction(lock=False)

    def write(self) -> Any:
        return self._transaction(lock=True)

    def snapshot(self) -> Any:
        return self._transaction(lock=False, repeatable=True)

    def script(self, sql: str) -> None:
        with self.pool.connection() as connection, connection.transaction():
            connection.execute(sql.encode())

    def close(self) -> None:
        self.pool.close()
