"""What a read model needs from a database: short transactions and `?` placeholders,
plus the few bulk writes every read model makes.

The infra layer provides it for SQLite and PostgreSQL; read models stay free of
any driver. Read models gather a batch's changes in memory and write them with a
handful of multi-row statements, so a batch of events costs a few round trips,
not several per event.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

# Past any real log position, within both stores' integers.
POSITION_MAX = 2**62
ROWS_PER_STATEMENT = 500  # Well under both stores' limits on parameters per statement.
T = TypeVar("T")


class Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...

    def executemany(self, sql: str, params: Iterable[Sequence[Any]]) -> None: ...

    def fetchone(self) -> Sequence[Any] | None: ...

    def fetchall(self) -> list[Sequence[Any]]: ...


class Database(Protocol):
    dialect: str  # "sqlite" or "postgres"

    def read(self) -> AbstractContextManager[Cursor]:
        """A read-only transaction."""
        ...

    def write(self) -> AbstractContextManager[Cursor]:
        """A transaction holding the read models' write lock until it commits."""
        ...

    def snapshot(self) -> AbstractContextManager[Cursor]:
        """A read-only transaction that sees one moment throughout, however long."""
        ...

    def close(self) -> None: ...


class View(Protocol):
    """One read model's share of a batch: `apply` each event in order, then `flush`.
    The projector gives `apply` only the events whose topic the view `wants` (the
    answer kept for each event class): `wants` names every topic `apply` uses."""

    def wants(self, topic: str) -> bool: ...

    def apply(self, event: Any, position: int) -> None: ...

    def flush(self, cursor: Cursor) -> None: ...


def rows(cursor: Cursor, sql: str, params: Sequence[Any] = ()) -> Iterator[Sequence[Any]]:
    cursor.execute(sql, params)
    yield from cursor.fetchall()


def insert_rows(
    cursor: Cursor,
    table: str,
    columns: Sequence[str] | None,
    values: Sequence[Sequence[Any]],
    on_conflict: str = "",
) -> None:
    """INSERT many rows: by COPY where the store has it (plain inserts), else as arrays
    in one statement (PostgreSQL, `insert_by_column`), else a few hundred per statement.
    Without `columns`, each row holds every column of the table, in order."""
    if not values:
        return
    copy_rows = getattr(cursor, "copy_rows", None)
    if copy_rows is not None and not on_conflict:
        copy_rows(table, columns, values)
        return
    by_column = getattr(cursor, "insert_by_column", None)  # PostgreSQL's, in one statement
    if by_column is not None and by_column(table, columns, values, on_conflict):
        return
    listed = "" if columns is None else f" ({', '.join(columns)})"
    for chunk in chunks(values):
        rows_sql, params = values_list(chunk)
        cursor.execute(f"INSERT INTO {table}{listed} VALUES {rows_sql} {on_conflict}", params)


def add_to_rows(
    cursor: Cursor,
    table: str,
    keys: Sequence[str],
    amounts: Sequence[str],
    sums: dict[tuple[Any, ...], list[int]],
) -> None:
    """Add amounts to rows found by key, making the rows that do not exist yet.

    `sums` maps each key to what to add to the `amounts` columns, in order. It is
    gathered in memory first, so each key appears once per statement.
    """
    additions = ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in amounts)
    insert_rows(
        cursor,
        table,
        [*keys, *amounts],
        [(*key, *values) for key, values in sums.items()],
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {additions}",
    )


def delete_rows(cursor: Cursor, table: str, column: str, keys: Iterable[Any]) -> None:
    """DELETE the rows whose `column` is one of `keys`: one statement of an array on
    PostgreSQL (`delete_by_keys`), else a few hundred keys per statement. A
    statement per key (executemany) was the driver's work per row (py-spy: a rebuild
    spent a tenth of its time in it, on 13,500 rounds' three deletes and an update)."""
    keys = list(keys)
    by_keys = getattr(cursor, "delete_by_keys", None)  # PostgreSQL's, in one statement
    if not keys or (by_keys is not None and by_keys(table, column, keys)):
        return
    for chunk in chunks(keys):
        cursor.execute(
            f"DELETE FROM {table} WHERE {column} IN ({', '.join('?' * len(chunk))})", chunk
        )


def set_text_columns(
    cursor: Cursor, table: str, key: str, columns: Sequence[str], values: Sequence[Sequence[Any]]
) -> None:
    """UPDATE rows found by `key`: each of `values` is the key, then the new value of
    each of `columns`, all text (or NULL): one statement of arrays on PostgreSQL
    (`update_by_key`), else a few hundred rows per statement. (Text:
    PostgreSQL types the parameters of a VALUES list as text.) Both stores name a
    VALUES list's columns column1, column2, ..."""
    by_key = getattr(cursor, "update_by_key", None)  # PostgreSQL's, in one statement
    if not values or (by_key is not None and by_key(table, key, columns, values)):
        return
    assignments = ", ".join(f"{c} = v.column{n}" for n, c in enumerate(columns, start=2))
    for chunk in chunks(values):
        rows_sql, params = values_list(chunk)
        cursor.execute(
            f"UPDATE {table} SET {assignments} FROM (VALUES {rows_sql})"
            f" AS v WHERE {table}.{key} = v.column1",
            params,
        )


def chunks(values: Sequence[T]) -> Iterator[Sequence[T]]:
    """`values` a statement's worth at a time (ROWS_PER_STATEMENT)."""
    for start in range(0, len(values), ROWS_PER_STATEMENT):
        yield values[start : start + ROWS_PER_STATEMENT]


def values_list(chunk: Sequence[Sequence[Any]]) -> tuple[str, list[Any]]:
    """`(?, ?), (?, ?), ...` for rows of the first row's length, and their values in order."""
    row = "(" + ", ".join("?" * len(chunk[0])) + ")"
    return ", ".join([row] * len(chunk)), [value for one in chunk for value in one]
