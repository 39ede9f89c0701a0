"""Comparing the live read models with a rebuild from the events, and replacing them.

The rebuild is made beside the live models, in a scratch copy of the same kind
(a temporary SQLite file, or a temporary PostgreSQL schema), up to exactly the
position the live models are at, read in one snapshot. Then the two are
compared row by row. Nothing live is touched to compare.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from infra.database import PostgresDatabase, SQLiteDatabase
from infra.store import Store
from projections.base import Database
from projections.check import differences
from projections.runner import TABLES, Projector, all_schemas, position_in

SCRATCH_POOL_SIZE = 2


@dataclass(frozen=True)
class Comparison:
    position: int  # The live read models', and the rebuild's.
    differences: list[str]


def compare_with_rebuild(store: Store, progress: Callable[[int], None]) -> Comparison:
    """Rebuild the read models aside and compare them with the live ones."""
    with _scratch(store) as scratch, store.database.snapshot() as live:
        position = position_in(live)
        while applied := scratch.apply_next_batch(up_to=position):
            progress(applied)
        with scratch.database.read() as rebuilt:
            found = differences(live, rebuilt, TABLES)
    return Comparison(position, found)


@contextmanager
def _scratch(store: Store) -> Iterator[Projector]:
    database: Database
    if isinstance(store.database, PostgresDatabase):
        schema = f"rebuild_{uuid.uuid4().hex[:12]}"
        database = PostgresDatabase(store.database.conninfo, schema, SCRATCH_POOL_SIZE)
        database.script(f"CREATE SCHEMA {schema};" + all_schemas())
        try:
            yield Projector(database, store.app.recorder, store.app.mapper.to_domain_event)
        finally:
            database.script(f"DROP SCHEMA {schema} CASCADE")
            database.close()
    else:
        directory = tempfile.mkdtemp(prefix="casino-rebuild-")
        database = SQLiteDatabase(str(Path(directory) / "read_models.sqlite"))
        database.script(all_schemas())
        try:
            yield Projector(database, store.app.recorder, store.app.mapper.to_domain_event)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
