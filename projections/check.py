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
log of benchmarks/bench_audit.py: 4.3 s against 0.8 s, docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
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


def comparable_in_the_database(
    cursor: Cursor, live_schema: str, rebuilt_schema: str, tables: Iterable[str]
) -> bool:
    """Whether the server may compare the tables of `live_schema` with those of
    `rebuilt_schema` (both by name, as configured: never the session's current schema,
    which a function of the live schema's can move) as Python would. To be the first
    thing done in a READ ONLY transaction, which it leaves with the search path
    pg_catalog alone and every table locked against change: nothing of the live
    schema's runs before it (a view's function), nothing of it can write to the copy
    after, and no table can be swapped for another between this check and the compare.

    Every live relation must be a plain table exactly like its copy: the same columns
    in order, of the same types (by oid: a domain over BIGINT is not BIGINT), typmods,
    collations (one under which 'ANN' equals 'ann' would hide a rewrite) and NOT NULLs,
    the same primary key, no row security, no child tables. With the search path
    pg_catalog's, no operator of the live schema's (an `=` between a domain and
    BIGINT) is chosen."""
    names = list(tables)
    pin(cursor, (live_schema, rebuilt_schema), names)
    live = _shape(cursor, live_schema, names)
    return live is not None and live == _shape(cursor, rebuilt_schema, names)


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


def compared_in_the_database(
    cursor: Cursor,
    live_schema: str,
    rebuilt_schema: str,
    tables: dict[str, tuple[str, ...]],
    beside: Callable[[], AbstractContextManager[Cursor]] | None = None,
) -> list[str]:
    """`differences`, with the live tables those of `live_schema` and the rebuilt ones
    those of `rebuilt_schema` (both quoted) in the same PostgreSQL database, both read
    in the cursor's transaction, once `comparable_in_the_database` said yes.

    `beside` opens a transaction on another connection that sees the cursor's very
    snapshot (`PostgresDatabase.in_snapshot`): the larger tables, about half the
    rows, are compared there at the same time, on another of the server's cores.
    Each runs on one core, and the compare is all that is left of a rebuild once the
    copy is written (0.55 s of the 200,000-event rebuild's 4 s, pg_stat_statements).
    If that transaction fails at all (no connection, a lock it would wait on), its
    tables are compared here after the others: the same rows, in the same snapshot."""
    names = list(tables)
    there = _larger_half(cursor, rebuilt_schema, names) if beside is not None else []
    here = [name for name in names if name not in there]
    found: dict[str, list[str]] = {}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="compare") as helper:
        elsewhere = None
        if beside is not None and there:
            elsewhere = helper.submit(
                _compared_beside, beside, live_schema, rebuilt_schema, tables, there
            )
        found.update(_compared(cursor, live_schema, rebuilt_schema, tables, here))
        if elsewhere is not None:
            try:
                found.update(elsewhere.result())
            except Exception:  # read here instead: no answer depends on where
                found.update(_compared(cursor, live_schema, rebuilt_schema, tables, there))
    return [problem for table in names for problem in found[table]]


def _compared_beside(
    beside: Callable[[], AbstractContextManager[Cursor]],
    live_schema: str,
    rebuilt_schema: str,
    tables: dict[str, tuple[str, ...]],
    these: list[str],
) -> dict[str, list[str]]:
    with beside() as cursor:
        # Before any query: nothing of a schema's is chosen by name (`pin`). The
        # tables stay locked by the transaction that exported the snapshot.
        cursor.execute("SET LOCAL search_path = pg_catalog")
        return _compared(cursor, live_schema, rebuilt_schema, tables, these)


def _compared(
    cursor: Cursor,
    live_schema: str,
    rebuilt_schema: str,
    tables: dict[str, tuple[str, ...]],
    these: list[str],
) -> dict[str, list[str]]:
    # Both tables are in key order on their primary key's index: a merge join reads
    # them side by side. A hash join held one in memory, spilling past work_mem.
    cursor.execute("SET LOCAL enable_hashjoin = off")
    found = {}
    for table in these:
        keys = tables[table]
        cursor.execute(_differing(f"{live_schema}.{table}", f"{rebuilt_schema}.{table}", keys))
        counts: list[int] = [0] * len(KINDS)
        examples: list[list[Key]] = [[] for _ in KINDS]
        for kind, count, *key in cursor.fetchall():
            counts[kind] = count
            examples[kind].append(tuple(key))
        found[table] = _named(table, list(zip(counts, examples, strict=True)))
    return found


def _larger_half(cursor: Cursor, schema: str, tables: list[str]) -> list[str]:
    """The largest tables of the schema (quoted), by bytes on disk, that together hold
    about half of all its tables' bytes: the compare's time goes with the rows."""
    cursor.execute(
        "SELECT name, pg_catalog.pg_relation_size((? || '.' || name)::pg_catalog.regclass)"
        " FROM pg_catalog.unnest(?::pg_catalog.text[]) AS name",
        (schema, tables),
    )
    sizes = sorted(((int(size), str(name)) for name, size in cursor.fetchall()), reverse=True)
    half, taken, chosen = sum(size for size, _ in sizes) / 2, 0, list[str]()
    for size, name in sizes:
        if taken + size > half and chosen:
            continue
        chosen.append(name)
        taken += size
    return chosen


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


def _differing(live_table: str, rebuilt_table: str, keys: tuple[str, ...]) -> str:
    """Of the rows that differ, each kind's count (0, 1, 2 as in KINDS) and first few
    keys in key order; a primary key's columns are never null, so a missing row shows
    as a null first key."""
    first, columns = keys[0], ", ".join(keys)
    joined = " AND ".join(f"live.{key} = rebuilt.{key}" for key in keys)
    either = ", ".join(f"COALESCE(live.{key}, rebuilt.{key}) AS {key}" for key in keys)
    return (
        f"WITH differing AS (SELECT CASE WHEN rebuilt.{first} IS NULL THEN 0"
        f" WHEN live.{first} IS NULL THEN 1 ELSE 2 END AS kind, {either}"
        f" FROM {live_table} AS live FULL JOIN {rebuilt_table} AS rebuilt ON {joined}"
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
