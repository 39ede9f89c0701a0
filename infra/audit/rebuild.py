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

import gc
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.audit.decoding import EventDecoder
from infra.audit.pages import AggregateIds, log_pages, prefetched, read_log
from infra.store.database import PostgresDatabase, SQLiteDatabase
from infra.store.store import Store
from projections.base import Cursor, Database, insert_rows
from projections.check import differences, pages, pin, plain_tables, quoted
from projections.runner import (
    TABLES,
    TRACKING,
    NotificationReader,
    Projector,
    all_schemas,
    position_in,
)

SCRATCH_POOL_SIZE = 2
SCRATCH_BATCH_SIZE = 5000
SWAP_ATTEMPTS_MAX = 20  # The live projector may move on between catching up and locking.
# New objects between two runs of Python's cyclic collector while reading the log.
GC_OBJECTS_BETWEEN_COLLECTIONS = 100_000


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
    with fewer_collections(), Aside(store, progress) as aside:
        if aside.feeding:
            _feed_from_the_log(store, aside, progress)
        comparison = aside.compare()
        if replace and comparison.differences:
            _swap_in(store, aside.scratch, progress)
    return comparison


def _feed_from_the_log(store: Store, aside: Aside, progress: Callable[[int], None]) -> None:
    """The log up to the live read models, each page read while the one before is
    decoded and applied (infra/audit/pages.py)."""
    decode = EventDecoder(store.app.mapper).decode
    for page in prefetched(log_pages(store, aside.up_to)):
        if not aside.feeding:
            return  # An event could not be applied: `compare` reads on from before it.
        for notification in page:
            try:
                event = decode(*notification[:5])
            except Exception:  # Read again from the log in `compare`, which raises it.
                aside.stop()
                return
            aside.add(notification.id, event)
        progress(len(page))


def compare(store: Store, scratch: Projector, progress: Callable[[int], None]) -> Comparison:
    """Bring the scratch copy up to the live read models' position, from the log, and
    compare the two, page by page, in one snapshot of the live models (the one
    compare, projections/check.py). The scratch copy may have been fed part of the
    way already (`Projector.feed`), never past the live models' position as of then:
    live models now behind it went back, which no projector does."""
    with store.database.snapshot() as live:
        _read_only(store, live)
        live_schema = _pinned(store, live)
        position = position_in(live, live_schema)
        if scratch.position() > position:
            raise WentBack(
                f"the live read models stand at position {position}, behind the "
                f"{scratch.position()} they had reached: changed behind the store's back"
            )
        while applied := scratch.apply_next_batch(up_to=position):
            progress(applied)
        with scratch.database.read() as rebuilt:
            found = differences(live, rebuilt, TABLES, live_schema)
    return Comparison(position, found)


class WentBack(Exception):
    """The live read models went back past where a rebuild had been fed to."""


class NotPlainTables(Exception):
    """A live read model that is not a plain table: nothing is read through it."""


def _pinned(store: Store, live: Cursor) -> str | None:
    """On PostgreSQL, the live schema's name (quoted) to read its tables by, with the
    search path pinned and the tables locked (projections/check.py: pin), once each
    is a plain table; NotPlainTables if one is not (a view in its place, whose
    function could move the session's search path to a decoy schema, or write)."""
    if not isinstance(store.database, PostgresDatabase):
        return None
    schema, names = store.database.schema, [*TABLES, TRACKING]
    pin(live, (schema,), names)
    if not plain_tables(live, schema, names):
        raise NotPlainTables(
            f"the read models in schema {schema} are not all plain tables: one was"
            " replaced behind the store's back (a view?), and nothing is read through it"
        )
    return quoted(schema)


def _read_only(store: Store, cursor: Cursor) -> None:
    """The live store's transaction made READ ONLY, before anything is read in it. A
    live read model is read for a rebuild's compare on the copy's own database: a
    function an insider hides in the live schema (behind a view) must not write to
    the copy there - its rewrite would be compared, or copied in, as the rebuild's."""
    if isinstance(store.database, PostgresDatabase):
        cursor.execute("SET TRANSACTION READ ONLY")


class Aside:
    """A rebuild aside fed by a pass that reads the log for other checks too (`casino
    audit verify`): each event is read and decoded once. The events up to the live
    read models' position (as of opening) go to the scratch copy a batch at a time;
    `compare` brings it the rest from the log and compares. At an event that cannot
    be read or applied the feeding stops, and the rest is read from the log as
    `rebuild` reads it, which meets the same event and fails the same way."""

    def __init__(self, store: Store, progress: Callable[[int], None]) -> None:
        self.store, self.progress = store, progress
        self.stack = ExitStack()
        self.batch: list[tuple[int, Any]] = []
        self.feeding = False
        self.error: Exception | None = None
        try:
            self.scratch = self.stack.enter_context(scratch_projector(store))
            self.up_to = store.projector.position()
            self.feeding = True
        except Exception as error:  # Named by whoever compares, as a failed rebuild is.
            self.error = error

    def add(self, position: int, event: Any) -> None:
        if self.feeding and position <= self.up_to:
            self.batch.append((position, event))
            if len(self.batch) >= SCRATCH_BATCH_SIZE:
                self._feed()

    def stop(self) -> None:
        """An event that cannot be read: feed what came before it, and no more."""
        self._feed()
        self.feeding = False

    def _feed(self) -> None:
        if self.feeding and self.batch:
            try:
                self.scratch.feed(self.batch)
            except Exception:  # Met again, and named, where the log is read in `compare`.
                self.feeding = False
        self.batch = []

    def compare(self) -> Comparison:
        if self.error is not None:
            raise self.error
        self._feed()
        return compare(self.store, self.scratch, self.progress)

    def __enter__(self) -> Aside:
        return self

    def __exit__(self, *_: object) -> None:
        self.stack.close()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The collector runs every 700 new objects by default; reading a log makes
    millions (each event, its dict, its values), few of them in cycles. Running it
    every 100,000 took 8 to 15% off the CPU time of verify and of a rebuild
    (benchmarks/bench_audit.py, 200,000 events). The thresholds are restored after."""
    before = gc.get_threshold()
    gc.set_threshold(GC_OBJECTS_BETWEEN_COLLECTIONS, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


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
        database,
        store.app.recorder,
        EventDecoder(store.app.mapper).of,
        SCRATCH_BATCH_SIZE,
        _reader_of(store),
    )


def _reader_of(store: Store) -> NotificationReader:
    """The log as the audit tools read it (infra/audit/pages.py), in a transaction of
    the store's (the scratch copy's cursor is another database's)."""
    ids = AggregateIds()

    def read(_: Cursor, start: int, limit: int, stop: int | None) -> Sequence[Any]:
        with store.database.read() as cursor:
            return read_log(store, cursor, start, limit, stop, ids)

    return read


@contextmanager
def scratch_projector(store: Store) -> Iterator[Projector]:
    """A private copy of the read models, which no other projector writes: no lock."""
    database: Database
    if isinstance(store.database, PostgresDatabase):
        schema = f"rebuild_{uuid.uuid4().hex[:12]}"
        database = PostgresDatabase(
            store.database.conninfo, schema, SCRATCH_POOL_SIZE, lock_key=None, durable=False
        )
        try:
            database.script(f"CREATE SCHEMA {schema};" + _unlogged(all_schemas()))
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


def _unlogged(schema: str) -> str:
    """The read models' tables made UNLOGGED: a scratch copy is dropped after use, so
    nothing in it need survive a crash, and its rows then skip the write-ahead log
    (64 MB of it for the 200,000 events of benchmarks/bench_audit.py)."""
    return schema.replace("CREATE TABLE", "CREATE UNLOGGED TABLE")
