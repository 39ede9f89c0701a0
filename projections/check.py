"""Do two copies of the read models hold the same rows? (`casino projections rebuild`
and `casino audit verify` compare the live read models with a fresh rebuild.)

Both copies live in the same kind of store, so they sort keys alike. The live
table is read a page at a time in primary-key order; the rebuilt copy's rows in
the same key range are read beside it, and the two pages compared. Memory stays
bounded by the page, whatever the size of the table.

On PostgreSQL both copies are schemas of one database, and `compared_in_the_database`
has the server compare them, in one snapshot that holds both: a merge join of each
table with its copy on their primary keys, read in key order (no memory but the
rows that differ, and only a few examples of them come back). It names what differs
in the same words and the same examples, in a fifth of the time (the 200,000-event
log of benchmarks/bench_audit.py: 4.3 s against 0.8 s, docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from projections.base import Cursor

PAGE_ROWS = 5000
EXAMPLES_MAX = 3
Key = tuple[Any, ...]


def differences(live: Cursor, rebuilt: Cursor, tables: dict[str, tuple[str, ...]]) -> list[str]:
    """What differs, table by table, named with a few example keys; empty if nothing."""
    found = []
    for table, keys in tables.items():
        found += _table_differences(live, rebuilt, table, keys)
    return found


def _table_differences(
    live: Cursor, rebuilt: Cursor, table: str, keys: tuple[str, ...]
) -> list[str]:
    only_live: list[Key] = []
    only_rebuilt: list[Key] = []
    changed: list[Key] = []
    after: Key | None = None
    while True:
        live_rows = _rows(live, table, keys, after, None, PAGE_ROWS)
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


def compared_in_the_database(
    cursor: Cursor, rebuilt_schema: str, tables: dict[str, tuple[str, ...]]
) -> list[str] | None:
    """`differences`, with the live tables those of the cursor's schema and the rebuilt
    ones those of `rebuilt_schema` in the same PostgreSQL database, both read in the
    cursor's transaction; None, to compare with `differences` instead, unless every
    live table has exactly its copy's columns (names, order, types and collations).
    The server's equality is then Python's: a live column given a collation under
    which two different texts are equal (an insider's ALTER TABLE), or an extra
    column, would compare as equal here, and do not under `differences`."""
    live, rebuilt = (_columns(cursor, schema, tables) for schema in (None, rebuilt_schema))
    if live != rebuilt:
        return None
    # Both tables are in key order on their primary key's index: a merge join reads
    # them side by side. A hash join held one in memory, spilling past work_mem.
    cursor.execute("SET LOCAL enable_hashjoin = off")
    found = []
    for table, keys in tables.items():
        cursor.execute(_differing(table, keys, rebuilt_schema))
        counts: list[int] = [0] * len(KINDS)
        examples: list[list[Key]] = [[] for _ in KINDS]
        for kind, count, *key in cursor.fetchall():
            counts[kind] = count
            examples[kind].append(tuple(key))
        found += _named(table, list(zip(counts, examples, strict=True)))
    return found


def _columns(cursor: Cursor, schema: str | None, tables: Iterable[str]) -> list[Sequence[Any]]:
    """Every column of the tables (or views) in a schema (the cursor's, given None), in
    order, with its type and collation."""
    names = list(tables)
    cursor.execute(
        "SELECT table_name, ordinal_position, column_name, data_type, collation_schema,"
        " collation_name FROM information_schema.columns"
        " WHERE table_schema = COALESCE(?::text, current_schema())"
        f" AND table_name IN ({', '.join('?' * len(names))})"
        " ORDER BY table_name, ordinal_position",
        [schema, *names],
    )
    return [tuple(row) for row in cursor.fetchall()]


def _differing(table: str, keys: tuple[str, ...], rebuilt_schema: str) -> str:
    """Of the rows that differ, each kind's count (0, 1, 2 as in KINDS) and first few
    keys in key order; a primary key's columns are never null, so a missing row shows
    as a null first key."""
    first, columns = keys[0], ", ".join(keys)
    joined = " AND ".join(f"live.{key} = rebuilt.{key}" for key in keys)
    either = ", ".join(f"COALESCE(live.{key}, rebuilt.{key}) AS {key}" for key in keys)
    return (
        f"WITH differing AS (SELECT CASE WHEN rebuilt.{first} IS NULL THEN 0"
        f" WHEN live.{first} IS NULL THEN 1 ELSE 2 END AS kind, {either}"
        f" FROM {table} AS live FULL JOIN {rebuilt_schema}.{table} AS rebuilt ON {joined}"
        f" WHERE live.{first} IS NULL OR rebuilt.{first} IS NULL"
        " OR ROW(live.*) IS DISTINCT FROM ROW(rebuilt.*)),"
        f" counted AS (SELECT kind, {columns}, count(*) OVER (PARTITION BY kind) AS count,"
        f" row_number() OVER (PARTITION BY kind ORDER BY {columns}) AS nth FROM differing)"
        f" SELECT kind, count, {columns} FROM counted WHERE nth <= {EXAMPLES_MAX}"
        " ORDER BY kind, nth"
    )


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
