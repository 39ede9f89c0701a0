"""Reading the log a page ahead, for the audit tools (verify, rebuild).

Reading a page mostly waits on the database (PostgreSQL's round trip, SQLite's
file), which releases Python's lock: the next page is read in a thread while this
one is checked and applied, so the two overlap. One thread, one page ahead: it
holds one page more in memory, and only that thread ever advances the reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from infra.store.store import Store

BATCH = 5000  # events per page read: fewer round trips, little more memory
Page = TypeVar("Page")


def prefetched(pages: Iterator[Page]) -> Iterator[Page]:
    """The same pages, each read while the one before is worked on."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit-read") as reader:
        coming = reader.submit(next, pages, None)
        while (page := coming.result()) is not None:
            coming = reader.submit(next, pages, None)
            yield page


def log_pages(store: Store, up_to: int, after: int = 0) -> Iterator[Sequence[Any]]:
    """The log's events after `after` up to `up_to`, a page at a time, read as the
    store's projector reads them (on SQLite, faster than the library's recorder)."""
    position = after
    while position < up_to:
        with store.database.read() as cursor:
            page = store.projector.read_notifications(cursor, position, BATCH, up_to)
        if not page:
            return
        yield page
        position = page[-1].id


def events_of(pages: Iterator[Sequence[Any]], progress: Callable[[int], None]) -> Iterator[Any]:
    """Page after page, read ahead, one event at a time; `progress` told each page."""
    for page in prefetched(pages):
        yield from page
        progress(len(page))
