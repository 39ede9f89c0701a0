"""Reading the log for the audit tools (verify, rebuild): a page at a time, a page ahead.

Each event comes as a `LogEvent`: the fields of the library's notification (so the
mapper reads it as it reads one) and its aggregate's id as text, which the chain,
the seals and every message name it by. It is read with one plain query in the
store's own transaction, on PostgreSQL with the values sent in binary, the id as
text: the library's recorder makes a dictionary and a frozen dataclass of every
row, which was 1.9 of the 2.0 CPU-seconds of reading 200,000 events (measured).
Each aggregate id is made a UUID once (up to a bound): the same text always makes
an equal UUID, so that changes nothing.

Reading a page mostly waits on the database (PostgreSQL's round trip, SQLite's
file), which releases Python's lock: the next page is read in a thread while this
one is checked and applied, so the two overlap. One thread, one page ahead: it
holds one page more in memory, and only that thread ever advances the reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple, TypeVar
from uuid import UUID

from infra.store.schema import POSTGRES_EVENTS_TABLE, SQLITE_EVENTS_TABLE, log_table
from infra.store.store import Store
from projections.base import POSITION_MAX, Cursor

BATCH = 5000  # events per page read: fewer round trips, little more memory
IDS_KEPT_MAX = 100_000
Page = TypeVar("Page")


class LogEvent(NamedTuple):
    """One event of the log as stored: a notification's fields, and the aggregate id
    as text (`str` of the UUID)."""

    id: int  # its position
    originator_id: UUID
    originator_version: int
    topic: str
    state: bytes
    aggregate: str


class SpeltUUID(UUID):
    """A UUID that keeps its text: the read models write `str(event.originator_id)`
    again and again (five times for a round's event: 9% of the rebuild aside's time,
    py-spy). Equal to, hashed, ordered, printed and shown (repr) as the plain UUID;
    copied and pickled as one."""

    __slots__ = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        super().__init__(text)
        object.__setattr__(self, "text", super().__str__())

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"UUID({self.text!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (UUID, (self.text,))

    def __copy__(self) -> SpeltUUID:
        return self

    def __deepcopy__(self, _: Any) -> SpeltUUID:
        return self


class AggregateIds:
    """Each id's UUID and its text as `str(UUID)` spells it, made once per id (up to a
    bound): SQLite may hold an id spelt otherwise (capitals), PostgreSQL never."""

    def __init__(self) -> None:
        self.kept: dict[str, tuple[UUID, str]] = {}

    def of(self, stored: str) -> tuple[UUID, str]:
        found = self.kept.get(stored)
        if found is None:
            if len(self.kept) >= IDS_KEPT_MAX:
                self.kept.clear()
            made = SpeltUUID(stored)
            found = self.kept[stored] = (made, made.text)
        return found


def read_log(
    store: Store, cursor: Cursor, after: int, limit: int, up_to: int | None, ids: AggregateIds
) -> list[LogEvent]:
    """At most `limit` events after position `after` (up to `up_to`), in order.

    Each query asks for a window of `limit` positions, not for the first `limit`
    rows of everything after `after`: on a table whose statistics are stale (a
    store just filled or restored, autovacuum not yet round) PostgreSQL guessed a
    few thousand rows for the open range, fetched all of it and sorted it to disk
    for each page - 3.0 of the 6.4 seconds the server spent on a 200,000-event
    rebuild (pg_stat_statements). A window holds `limit` rows at most, whatever
    the plan. An empty one (a gap: a rolled-back save takes its positions) is
    passed by asking where the next event is."""
    stop = POSITION_MAX if up_to is None else up_to
    while after < stop:
        rows = _window(store, cursor, after, min(stop, after + limit))
        if rows:
            return _log_events(rows, ids)
        after = _next_position(store, cursor, after, stop) - 1
    return []


def _window(store: Store, cursor: Cursor, after: int, last: int) -> list[Any]:
    """The events at positions after `after` up to `last`, in order."""
    if store.database.dialect == "postgres":
        rows: list[Any] = cursor.fetch_binary(  # type: ignore[attr-defined]
            "SELECT notification_id, originator_id::text, originator_version, topic, state"
            f" FROM {POSTGRES_EVENTS_TABLE} WHERE notification_id > ? AND notification_id <= ?"
            " ORDER BY notification_id",
            (after, last),
        )
        return rows
    cursor.execute(
        "SELECT rowid, originator_id, originator_version, topic, state"
        f" FROM {SQLITE_EVENTS_TABLE} WHERE rowid > ? AND rowid <= ? ORDER BY rowid",
        (after, last),
    )
    return cursor.fetchall()


def _next_position(store: Store, cursor: Cursor, after: int, stop: int) -> int:
    """The first event's position after `after`, or past `stop` if there is none."""
    events, position = log_table(store.database.dialect)
    cursor.execute(f"SELECT MIN({position}) FROM {events} WHERE {position} > ?", (after,))
    found = cursor.fetchone()
    return stop + 1 if found is None or found[0] is None else int(found[0])


def _log_events(rows: list[Any], ids: AggregateIds) -> list[LogEvent]:
    events, of = [], ids.of
    for position, stored, version, topic, state in rows:
        originator_id, aggregate = of(stored)
        events.append(LogEvent(position, originator_id, version, topic, state, aggregate))
    return events


def prefetched(pages: Iterator[Page]) -> Iterator[Page]:
    """The same pages, each read while the one before is worked on."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit-read") as reader:
        coming = reader.submit(next, pages, None)
        while (page := coming.result()) is not None:
            coming = reader.submit(next, pages, None)
            yield page


def log_pages(store: Store, up_to: int, after: int = 0) -> Iterator[list[LogEvent]]:
    """The log's events after `after` up to `up_to`, a page at a time."""
    position, ids = after, AggregateIds()
    while position < up_to:
        with store.database.read() as cursor:
            page = read_log(store, cursor, position, BATCH, up_to, ids)
        if not page:
            return
        yield page
        position = page[-1].id


def events_of(pages: Iterator[Sequence[Any]], progress: Callable[[int], None]) -> Iterator[Any]:
    """Page after page, read ahead, one event at a time; `progress` told each page."""
    for page in prefetched(pages):
        yield from page
        progress(len(page))


def events_at(store: Store, positions: Sequence[int]) -> list[LogEvent]:
    """The events at these positions, in order (those still there), a page at a time."""
    events, column = log_table(store.database.dialect)
    ids, found = AggregateIds(), []
    for start in range(0, len(positions), BATCH):
        chunk = list(positions[start : start + BATCH])
        marks = ", ".join("?" * len(chunk))
        with store.database.read() as cursor:
            cursor.execute(
                f"SELECT {column}, originator_id, originator_version, topic, state FROM {events}"
                f" WHERE {column} IN ({marks}) ORDER BY {column}",
                chunk,
            )
            rows = [(p, str(i), v, t, bytes(state)) for p, i, v, t, state in cursor.fetchall()]
            found += _log_events(rows, ids)
    return found
