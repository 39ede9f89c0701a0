"""The read models' bulk writes (projections/base.py) leave the same rows on both
stores, however many rows a batch holds, with NULLs among them; on PostgreSQL a
column of a type its arrays are not cast to is written as before."""

from __future__ import annotations

from typing import Any

import pytest

from infra.store.store import Store
from projections.base import Cursor, add_to_rows, delete_rows, insert_rows, rows, set_text_columns

ROWS = 1_200  # past the few hundred rows a VALUES statement holds


@pytest.fixture(params=["BIGINT", "NUMERIC"])
def table(request: pytest.FixtureRequest, store: Store) -> str:
    """A table like a read model's; its amount column either of the types PostgreSQL's
    arrays are cast to, or of one they are not (numeric)."""
    with store.projector.database.write() as cursor:
        cursor.execute(
            "CREATE TABLE probe (key TEXT PRIMARY KEY, label TEXT, cents"
            f" {request.param} NOT NULL, note TEXT)"
        )
    return "probe"


def contents(store: Store) -> dict[str, tuple[Any, ...]]:
    with store.projector.database.read() as cursor:
        found = rows(cursor, "SELECT key, label, cents, note FROM probe")
        return {str(row[0]): (row[1], int(row[2]), row[3]) for row in found}


def written(store: Store, write: Any) -> None:
    with store.projector.database.write() as cursor:
        write(cursor)


def test_rows_inserted_then_added_to_are_all_there_with_their_nulls(
    store: Store, table: str
) -> None:
    keys = [f"k{n:04}" for n in range(ROWS)]
    # Given many rows, every other one without a label or a note
    first = [(k, None if n % 2 else f"l{n}", n, None) for n, k in enumerate(keys)]
    written(store, lambda c: insert_rows(c, table, ("key", "label", "cents", "note"), first))
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


def test_rows_are_deleted_and_updated_by_key_however_many_and_some_missing(
    store: Store, table: str
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
