"""A protection's record of amounts (rules.md 7): the deposits or losses of the last
30 days, each dated, bounded in size, summed over a rolling window.

Times are stored in one fixed ISO form (`domain/significant.py: stamp`), so they compare
as text.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

from domain.significant import stamp as _iso

# The longest window of any limit: nothing older is kept.
RECORD_SPAN = datetime.timedelta(days=30)
# Entries kept per record. Past it, the oldest entries sharing a minute, else an hour,
# else a day merge into one dated at the later of them: the sum stays counted, a little
# longer than it needs (within that minute, hour or day), never shorter. Merging only
# within one such span keeps an old amount from riding along with newer ones for ever.
ENTRIES_MAX = 1_000
# How much of a stored time names its minute, hour and day (the fixed form of `stamp`).
MERGE_SPANS = (len("2026-12-01T12:00"), len("2026-12-01T12"), len("2026-12-01"))
# [at (ISO), cents, at, cents, ...], oldest first: flat, because the command cache
# deep-copies an aggregate on every load, and a flat list of a thousand pairs copies
# several times faster than a thousand small lists.
Entries = list[Any]


def record(entries: Entries, at: str, cents: int) -> None:
    """The entries still inside the longest window at `at`, with `cents` added.

    Entries are kept in the order they were recorded, oldest first, so those past the
    window are at the front: a replay prunes in a few steps, never a whole pass."""
    since = _iso(_time(at) - RECORD_SPAN)
    gone = 0
    while gone < len(entries) and entries[gone] <= since:
        gone += 2
    del entries[:gone]
    if cents:
        entries += [at, cents]
    for span in MERGE_SPANS:
        merge_within(entries, span)


def merge_within(entries: Entries, span: int) -> None:
    """Merge neighbours whose times agree in their first `span` characters, oldest
    first, until the record is within ENTRIES_MAX. A month holds 31 days at most, so
    merging by the day always gets there."""
    index = 0
    while len(entries) > 2 * ENTRIES_MAX and index + 2 < len(entries):
        if entries[index][:span] == entries[index + 2][:span]:
            entries[index : index + 4] = [
                entries[index + 2],
                entries[index + 1] + entries[index + 3],
            ]
        else:
            index += 2


def window_sum(entries: Entries, now: datetime.datetime, period: datetime.timedelta) -> int:
    """What the entries inside (now - period, now] add up to. Losses are stakes minus
    returns (rules.md 7), so a win inside the window makes room for as much again.
    An entry dated after `now` counts too: another server's clock may run ahead."""
    # Stored times share one fixed form (`stamp`), so they compare as text: no parsing
    # of up to ENTRIES_MAX of them on every stake.
    since = _iso(now - period)
    return sum(cents for at, cents in pairs(entries) if since < at)


def pairs(entries: Entries) -> Iterator[tuple[str, int]]:
    return zip(entries[::2], entries[1::2], strict=True)


def _time(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)
