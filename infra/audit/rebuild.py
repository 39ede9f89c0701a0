"""Rebuilding the read models from the events: aside first, to compare with the live
ones, then, where they differ, swapped in.

The rebuild is made in a scratch copy of the same kind (a temporary SQLite file,
or a temporary PostgreSQL schema), up to exactly the position the live models
are at, read in one snapshot, and compared row by row: nothing live is touched
to compare. Replacing copies the scratch rows into the live tables in one short
transaction under the read models' lock, once both stand at the same position:
readers see the old models until it commits, and the log is replayed only once.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from infra.store.database import PostgresDatabase, SQLiteDatabase
from infra.store.store import Store
from projections.base import Database, insert_rows
from projections.check import differences, pages
from projections.runner import TABLES, Projector, all_schemas, position_in

SCRATCH_POOL_SIZE = 2
SCRATCH_BATCH_SIZE = 5000
SWAP_ATTEMPTS_MAX = 20  # The live projector may move on between catching up and locking.


@dataclass(frozen=True)
class Comparison:
    position: int  # The live read models', and the rebuild's.
    differences: list[str]


def compare_with_rebuild(store: Store, progress: Callable[[int], None]) -> Comparison:
    """Rebuild the read models aside and compare them with the live ones."""
    return rebuild(store, progress, replace=False)


def rebuild(store: Store, progress: Callable[[int], None], *, replace: bool) -> Comparison:
    """Compare the live read models with a rebuild; with `replace`, swap the rebuild
    in where they differ."""
    with _scratch(store) as scratch:
        with store.database.snapshot() as live:
            position = position_in(live)
            while applied := scratch.apply_next_batch(up_to=position):
                progress(applied)
            with scratch.database.read() as rebuilt:
                found = differences(live, rebuilt, TABLES)
        if replace and found:
            _swap_in(store, scratch, progress)
    return Comparison(position, found)


def _swap_in(store: Store, scratch: Projector, progress: Callable[[int], None]) -> None:
    for _ in range(SWAP_ATTEMPTS_MAX):
        # Both up to the same position first, outside the lock: on SQLite the scratch
        # projector reads the log through the pool, which must not wait on the lock.
        target = store.projector.head()
        progress(scratch.catch_up(up_to=target))
        store.projector.catch_up(up_to=target)
        with store.database.write() as live:
            if position_in(live) != scratch.position():
                continue  # The live projector moved on meanwhile: once more.
            with scratch.database.read() as rebuilt:
                for table, keys in TABLES.items():
                    live.execute(f"DELETE FROM {table}")
                    for page in pages(rebuilt, table, keys):
                        insert_rows(live, table, None, page)
            return
    raise RuntimeError("the live read models kept moving on: try the rebuild again")


def _scratch_projector(store: Store, database: Database) -> Projector:
    # Its batches hold no lock anyone waits for: larger ones cost fewer transactions.
    return Projector(
        database, store.app.recorder, store.app.mapper.to_domain_event, SCRATCH_BATCH_SIZE
    )


@contextmanager
def _scratch(store: Store) -> Iterator[Projector]:
    """A private copy of the read models, which no other projector writes: no lock."""
    database: Database
    if isinstance(store.database, PostgresDatabase):
        schema = f"rebuild_{uuid.uuid4().hex[:12]}"
        database = PostgresDatabase(
            store.database.conninfo, schema, SCRATCH_POOL_SIZE, lock_key=None, durable=False
        )
        try:
            database.script(f"CREATE SCHEMA {schema};" + all_schemas())
            yield _scratch_projector(store, database)
        finally:
            database.script(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            database.close()
    else:
        directory = tempfile.mkdtemp(prefix="casino-rebuild-")
        database = SQLiteDatabase(str(Path(directory) / "read_models.sqlite"), durable=False)
        try:
            database.script(all_schemas())
            yield _scratch_projector(store, database)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
