"""Do two copies of the read models hold the same rows? (`casino projections rebuild`
and `casino audit verify` compare the live read models with a fresh rebuild.)

Both copies live in the same kind of store, so they sort keys alike. The live
table is read a page at a time in primary-key order; the rebuilt copy's rows in
the same key range are read beside it, and the two pages compared. Memory stays
bounded by the page, whatever the size of the table. This is the one compare, on
both stores (the server's own compare of two PostgreSQL schemas, a second way
kept for speed, is gone: issue 38).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from projections.base import Cursor

PAGE_ROWS = 5000
EXAMPLES_MAX = 3
Key = tuple[Any, ...]


def differences(
    live: Cursor,
    rebuilt: Cursor,
    tables: dict[str, tuple[str, ...]],
    live_schema: str | None = None,
) -> list[str]:
    """What differs, table by table, named with a few example keys; empty if nothing.
    The live tables are those of `live_schema` (quoted), given one."""
    found = []
    for table, keys in tables.items():
        live_table = table if live_schema is None else f"{live_schema}.{table}"
        found += _table_differences(live, rebuilt, table, keys, live_table)
    return found


def _table_differences(
    live: Cursor, rebuilt: Cursor, table: str, keys: tuple[str, ...], live_table: str
) -> list[str]:
    only_live: list[Key] = []
    only_rebuilt: list[Key] = []
    changed: list[Key] = []
    after: Key | None = None
    while True:
        live_rows = _rows(live, live_table, keys, after, None, PAGE_ROWS)
        upto = tuple(live_rows[-1][: len(keys)]) if len(live_rows) == PAGE_ROWS else None
        rebuilt_rows = _rows(rebuilt, table, keys, after, upto, None)
        # Both in key order: equal lists, the usual case, are equal pages, found without
        # a dictionary of each (a third of a rebuild's compare, measured).
        if live_rows != rebuilt_rows:
            live_page, rebuilt_page = _by_key(live_rows, keys), _by_key(rebuilt_rows, keys)
            only_live += [key for key in live_page if key not in rebuilt_page]
            only_rebuilt += [key for key in rebuilt_page if key not in live_page]
            changed += [
                key
                for key, row in live_page.items()
                if key in rebuilt_page and row != rebuilt_page[key]
            ]
        if upto is None:
            break
        after = upto
    return _named(
        table, [(len(found), found[:EXAMPLES_MAX]) for found in (only_live, only_rebuilt, changed)]
    )


# The kinds of difference, in the order they are named; the numbers are the database's.
KINDS = ("only in the live read model", "only in the rebuild", "that differ")


def _named(table: str, found: list[tuple[int, list[Key]]]) -> list[str]:
    """Each kind of difference (in KINDS' order) found, as its count and examples."""
    return [
        f"{table}: {count} rows {what}, e.g. {examples}"
        for (count, examples), what in zip(found, KINDS, strict=True)
        if count
    ]


def pin(cursor: Cursor, schemas: Iterable[str], tables: list[str]) -> None:
    """The transaction's search path pg_catalog alone, and the tables of each schema
    locked against change (first in a READ ONLY transaction, before any query)."""
    cursor.execute("SET LOCAL search_path = pg_catalog")
    # A lock, unlike a query, takes no snapshot: the snapshot the checks and the
    # compare read is taken after it, and DDL waits until the compare is over.
    locked = ", ".join(f"{quoted(schema)}.{table}" for schema in schemas for table in tables)
    cursor.execute(f"LOCK TABLE {locked} IN ACCESS SHARE MODE")


def plain_tables(cursor: Cursor, schema: str, tables: list[str]) -> bool:
    """Whether each name is a plain table in the schema (no view, whose functions
    would run as it is read, and could hide rows or move the session's search path)."""
    return _shape(cursor, schema, tables) is not None


def quoted(name: str) -> str:
    """An SQL identifier, double-quoted (what psycopg.sql.Identifier writes, without
    needing a connection to write it)."""
    return '"' + name.replace('"', '""') + '"'


def _shape(cursor: Cursor, schema: str, tables: list[str]) -> list[Sequence[Any]] | None:
    """Each table of the names in a schema: its row security, child tables and primary
    key's columns, and each of its columns, in order; None unless each name is a
    plain table there."""
    cursor.execute(
        "SELECT c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity,"
        " c.relhassubclass,"
        " (SELECT k.conkey::text FROM pg_catalog.pg_constraint AS k"
        "  WHERE k.conrelid = c.oid AND k.contype = 'p'),"
        " a.attname, a.atttypid, a.atttypmod, a.attcollation, a.attnotnull"
        " FROM pg_catalog.pg_class AS c"
        " JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace"
        " JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.oid"
        " AND a.attnum > 0 AND NOT a.attisdropped"
        " WHERE n.nspname = ?"
        f" AND c.relname IN ({', '.join('?' * len(tables))})"
        " ORDER BY c.relname, a.attnum",
        [schema, *tables],
    )
    rows: list[Sequence[Any]] = [tuple(row) for row in cursor.fetchall()]
    kinds = {(row[0], row[1]) for row in rows}
    return rows if kinds == {(table, "r") for table in tables} else None


def _by_key(found: list[Sequence[Any]], keys: tuple[str, ...]) -> dict[Key, Sequence[Any]]:
    return {tuple(row[: len(keys)]): tuple(row[len(keys) :]) for row in found}


def _rows(
    cursor: Cursor,
    table: str,
    keys: tuple[str, ...],
    after: Key | None,
    upto: Key | None,
    limit: int | None,
) -> list[Sequence[Any]]:
    """Rows with keys in (after, upto], in key order, each its key's columns first."""
    columns, marks = ", ".join(keys), ", ".join("?" * len(keys))
    conditions: list[str] = []
    params: list[Any] = []
    if after is not None:
        conditions.append(f"({columns}) > ({marks})")
        params += after
    if upto is not None:
        conditions.append(f"({columns}) <= ({marks})")
        params += upto
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    bound = f"LIMIT {limit}" if limit is not None else ""
    cursor.execute(f"SELECT {columns}, * FROM {table} {where} ORDER BY {columns} {bound}", params)
    return cursor.fetchall()


def pages(cursor: Cursor, table: str, keys: tuple[str, ...]) -> Iterator[list[Sequence[Any]]]:
    """Every row of the table (all its columns, in order), a page at a time."""
    after: Key | None = None
    while page := _by_key(_rows(cursor, table, keys, after, None, PAGE_ROWS), keys):
        yield list(page.values())
        if len(page) < PAGE_ROWS:
            return
        after = next(reversed(page))
