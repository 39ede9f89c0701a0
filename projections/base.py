"""What a read model needs from a database: short transactions and `?` placeholders.

The infra layer provides it for SQLite and PostgreSQL; read models stay free of
any driver.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...

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

    def close(self) -> None: ...


def rows(cursor: Cursor, sql: str, params: Sequence[Any] = ()) -> Iterator[Sequence[Any]]:
    cursor.execute(sql, params)
    yield from cursor.fetchall()
