"""The read models' bulk writes (projections/base.py) leave the same rows on both
stores, however many rows a batch holds, with NULLs among them. On PostgreSQL a
table of the usual types is written a column at a time (infra/store/database.py:
_PostgresCursor), one of other types as before: both give the same rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from infra.store import database
from infra.store.store import Store
from projections.base import Cursor, add_to_rows, delete_rows, insert_rows, rows, set_text_columns

ROWS = 1_200  # past the few hundred rows a VALUES statement holds
COLUMNS = ("key", "label", "cents", "note")
# Column types: the usual ones (cast as arrays on PostgreSQL), or others (written as
# VALUES lists there too).
KINDS = {"arrays": ("TEXT", "BIGINT"), "values": ("VARCHAR(40)", "NUMERIC")}
ARRAY_WRITES = ("insert_by_column", "delete_by_keys", "update_by_key")


@pytest.fixture(params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def table(kind: str, store: Store) -> str:
    key, amount = KINDS[kind]
    with store.projector.database.write() as cursor:
        cursor.execute(
            f"CREATE TABLE probe (key {key} PRIMARY KEY, label TEXT, cents {amount} NOT NULL,"
            " note TEXT)"
        )
    return "probe"


@pytest.fixture
def array_writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, bool]]]:
    """What each of PostgreSQL's column-at-a-time writes answered: done, or not."""
    answers: list[tuple[str, bool]] = []
    for name in ARRAY_WRITES:
        method = getattr(database._PostgresCursor, name)

        def recorded(*args: Any, _name: str = name, _method: Any = method) -> bool:
            done = bool(_method(*args))
            answers.append((_name, done))
            return done

        monkeypatch.setattr(database._PostgresCursor, name, recorded)
    yield answers


def contents(store: Store) -> dict[str, tuple[Any, ...]]:
    with store.projector.database.read() as cursor:
        found = rows(cursor, "SELECT key, label, cents, note FROM probe")
        return {str(row[0]): (row[1], int(row[2]), row[3]) for row in found}


def written(store: Store, write: Any) -> None:
    with store.projector.database.write() as cursor:
        write(cursor)


def assert_written_by(store: Store, kind: str, answers: list[tuple[str, bool]]) -> None:
    if store.projector.database.dialect == "postgres":
        assert answers, "no column-at-a-time write was asked for"
        assert {done for _, done in answers} == {kind == "arrays"}
    else:
        assert answers == []


def test_rows_inserted_then_added_to_are_all_there_with_their_nulls(
    store: Store, table: str, kind: str, array_writes: list[tuple[str, bool]]
) -> None:
    keys = [f"k{n:04}" for n in range(ROWS)]
    # Given many rows, every other one without a label, none with a note, written as
    # an upsert (not a plain insert, which PostgreSQL takes by COPY)
    first = [(k, None if n % 2 else f"l{n}", n, None) for n, k in enumerate(keys)]
    conflicts = "ON CONFLICT (key) DO NOTHING"
    written(store, lambda c: insert_rows(c, table, COLUMNS, first, conflicts))
    # When amounts are added to half of them and to new ones
    sums = {(k,): [5] for k in [*keys[ROWS // 2 :], "new1", "new2"]}
    written(store, lambda c: add_to_rows(c, table, ("key",), ("cents",), sums))
    # Then every row holds what was written, NULLs kept, sums added once
    found = contents(store)
    assert len(found) == ROWS + 2
    assert found["k0000"] == ("l0", 0, None)
    assert found["k0001"] == (None, 1, None)
    assert found[keys[-1]] == (None, ROWS - 1 + 5, None)
    assert found["new1"] == (None, 5, None)
    assert_written_by(store, kind, array_writes)


def test_rows_are_deleted_and_updated_by_key_however_many_and_some_missing(
    store: Store, table: str, kind: str, array_writes: list[tuple[str, bool]]
) -> None:
    keys = [f"k{n:04}" for n in range(ROWS)]
    values = [(k, "old", n, "n") for n, k in enumerate(keys)]
    written(store, lambda c: insert_rows(c, table, None, values))
    # When most rows are deleted (with keys never written among them) and the rest updated
    gone = [*keys[100:], "missing"]
    kept = [(k, f"new {k}", None) for k in keys[:100]]

    def change(cursor: Cursor) -> None:
        delete_rows(cursor, table, "key", gone)
        set_text_columns(cursor, table, "key", ("label", "note"), kept)

    written(store, change)
    # Then only the first hundred are left, each with its new text
    found = contents(store)
    assert sorted(found) == keys[:100]
    assert found["k0042"] == ("new k0042", 42, None)
    assert_written_by(store, kind, array_writes)
