"""Do two copies of the read models hold the same rows? (`casino projections rebuild`
and `casino audit verify` compare the live read models with a fresh rebuild.)

Both copies are read a page at a time in primary-key order and merged, so a
table of any size is compared in bounded memory. Text keys are ordered by code
point on both stores (COLLATE "C" on PostgreSQL), the order Python compares in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from projections.base import Cursor

PAGE_ROWS = 5000
EXAMPLES_MAX = 3
INTEGER_KEYS = ("position", "entry_id")


def differences(
    live: Cursor, rebuilt: Cursor, tables: dict[str, tuple[str, ...]], dialect: str
) -> list[str]:
    """What differs, table by table, named with a few example keys; empty if nothing."""
    found = []
    for table, keys in tables.items():
        found += _table_differences(
            table,
            _rows(live, table, keys, dialect),
            _rows(rebuilt, table, keys, dialect),
        )
    return found


def _table_differences(
    table: str,
    live: Iterator[tuple[tuple[Any, ...], Sequence[Any]]],
    rebuilt: Iterator[tuple[tuple[Any, ...], Sequence[Any]]],
) -> list[str]:
    only_live: list[tuple[Any, ...]] = []
    only_rebuilt: list[tuple[Any, ...]] = []
    changed: list[tuple[Any, ...]] = []
    a, b = next(live, None), next(rebuilt, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a[0] < b[0]):
            only_live.append(a[0])  # type: ignore[index]
            a = next(live, None)
        elif a is None or b[0] < a[0]:
            only_rebuilt.append(b[0])
            b = next(rebuilt, None)
        else:
            if tuple(a[1]) != tuple(b[1]):
                changed.append(a[0])
            a, b = next(live, None), next(rebuilt, None)
    return [
        f"{table}: {len(keys)} rows {what}, e.g. {keys[:EXAMPLES_MAX]}"
        for keys, what in (
            (only_live, "only in the live read model"),
            (only_rebuilt, "only in the rebuild"),
            (changed, "that differ"),
        )
        if keys
    ]


def _rows(
    cursor: Cursor, table: str, keys: tuple[str, ...], dialect: str
) -> Iterator[tuple[tuple[Any, ...], Sequence[Any]]]:
    """(key, row) of every row in key order, a page at a time."""
    ordered = ", ".join(
        key if key in INTEGER_KEYS or dialect != "postgres" else f'{key} COLLATE "C"'
        for key in keys
    )
    after: tuple[Any, ...] | None = None
    while True:
        where = "" if after is None else f"WHERE ({ordered}) > ({', '.join('?' * len(keys))})"
        cursor.execute(
            f"SELECT {', '.join(keys)}, * FROM {table} {where} ORDER BY {ordered}"
            f" LIMIT {PAGE_ROWS}",
            after or (),
        )
        page = cursor.fetchall()
        for row in page:
            yield tuple(row[: len(keys)]), row[len(keys) :]
        if len(page) < PAGE_ROWS:
            return
        after = tuple(page[-1][: len(keys)])
