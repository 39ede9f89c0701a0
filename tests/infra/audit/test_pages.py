"""Reading the log a page ahead (infra/audit/pages.py): the same pages, in order, an
error where it happened, and never more than one page ahead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infra.audit.pages import prefetched


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
