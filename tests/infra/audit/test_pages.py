"""Reading the log a page ahead (infra/audit/pages.py): the same pages, in order, an
error where it happened, and never more than one page ahead."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from infra.audit import pages
from infra.audit.pages import AggregateIds, prefetched, read_log
from infra.store.store import Store
from tests.infra.audit.test_verify import Attacker, play_some_rounds


def test_pages_read_ahead_are_the_same_pages_in_order() -> None:
    pages = [[1, 2], [3], [4, 5, 6]]
    assert list(prefetched(iter(pages))) == pages


def test_an_error_reading_a_page_reaches_whoever_reads_after_the_pages_before() -> None:
    def failing() -> Iterator[list[int]]:
        yield [1]
        raise RuntimeError("the database went away")

    read = prefetched(failing())
    assert next(read) == [1]
    with pytest.raises(RuntimeError, match="went away"):
        next(read)


def test_it_reads_one_page_ahead_and_no_more() -> None:
    pulled: list[int] = []

    def counted() -> Iterator[list[int]]:
        for number in range(10):
            pulled.append(number)
            yield [number]

    read = prefetched(counted())
    assert next(read) == [0]
    assert next(read) == [1]
    read.close()  # waits for the page being read, then stops
    assert pulled == [0, 1, 2]


def _positions(store: Store, after: int, limit: int) -> list[int]:
    with store.database.read() as cursor:
        return [e.id for e in read_log(store, cursor, after, limit, None, AggregateIds())]


def test_each_page_is_the_next_events_in_order_however_many_positions_lie_between(
    store: Store, attacker: Attacker
) -> None:
    """A page holds the next events after a position even past positions that hold
    none (a deleted event here; a rolled-back save's numbers on PostgreSQL): the
    pages neither stop at a gap nor skip what lies beyond it."""
    play_some_rounds(store)
    positions = [row.position for row in attacker.rows()]
    for gone in positions[3:9]:  # a gap wider than the pages asked for
        attacker.delete_event(gone)
    left = [p for p in positions if p not in positions[3:9]]
    assert _positions(store, 0, 2) == left[:2]
    assert _positions(store, positions[2], 2) == left[3:5]  # across the gap
    assert _positions(store, left[-1], 2) == []  # past the last event: none
    read: list[int] = []
    for page in _pages_of(store, 2):
        assert 0 < len(page) <= 2
        read += [event.id for event in page]
    assert read == left


def _pages_of(store: Store, size: int) -> Iterator[list[Any]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pages, "BATCH", size)
        yield from pages.log_pages(store, store.projector.head())
