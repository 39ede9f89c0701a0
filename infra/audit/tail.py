"""The log's tail as found, for `casino audit acknowledge` (infra/audit/acknowledge.py).

The service refuses to save on a log whose tail it did not write (rules.md 5; the
recorders' `trusted_head` and `next_seal`, PostgreSQL's `expect_log_top`). Three
shapes, alone or together:

- events after the last seal (inserted behind its back);
- seal rows at the head that its key did not sign (forged);
- an event chain or seals that reach past the last event (events removed from the end).

`read_tail` finds them from the last seal the service's key signed (the trusted
head) on, in the caller's transaction: the acknowledgment reads and writes under the
one lock every save takes, so nothing moves between the two.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.schema import log_table
from infra.store.seal import Seal
from projections.base import POSITION_MAX, Cursor

PAGE = 1000  # seals or events per read: an attacker's thousands of rows stay off the heap
FORGED_LISTED_MAX = 3  # forged seals named in the record (all are counted)


class NoSealOfTheKey(Exception):
    """The store has seals, and the key given signed none of them: not the service's
    key. Acknowledging with it would seal the whole log as found."""


@dataclass(frozen=True)
class Span:
    first: int
    last: int
    count: int

    def record(self) -> dict[str, int]:
        return {"first": self.first, "last": self.last, "count": self.count}


@dataclass(frozen=True)
class CutSeal:
    """A signed seal whose last events were removed, and those still standing."""

    first: int
    last: int
    remaining: int
    events_digest: str  # over the remaining events, as a seal hashes its events

    def record(self) -> dict[str, int | str]:
        return {
            "first": self.first,
            "last": self.last,
            "remaining": self.remaining,
            "events_digest": self.events_digest,
        }


@dataclass(frozen=True)
class Tail:
    top: int  # the last event's position (0: none)
    chain_reach: int  # the event chain's last position
    head: Seal | None  # the last seal row, whoever wrote it
    trusted: Seal | None  # the last seal the service's key signed
    forged: tuple[Seal, ...]  # seal rows after it, the first FORGED_LISTED_MAX
    forged_count: int
    unsealed: Span | None  # the events after the trusted head
    removed: Span | None  # positions past `top` the chain or a signed seal reaches
    cut: CutSeal | None  # the signed seal the last event now stands inside

    @property
    def sound(self) -> bool:
        """Whether the service would save on it: nothing reaches past the last event,
        and the last seal (if any: a store older than its seals has none) is signed
        by its key and ends at the last event."""
        if self.chain_reach > self.top:
            return False
        return self.head is None or (
            self.head == self.trusted and self.head.last_position == self.top
        )

    @property
    def position(self) -> int:
        """Where an acknowledgment goes: past every event, link and seal found."""
        seal_reach = self.head.last_position if self.head is not None else 0
        return max(self.top, self.chain_reach, seal_reach) + 1

    @property
    def sealed_from(self) -> int:
        """The first position an acknowledgment's seal covers: the one after the
        trusted head."""
        return self.trusted.last_position + 1 if self.trusted is not None else 1


def read_tail(cursor: Cursor, dialect: str, public_key: seals.Keys) -> Tail:
    events, column = log_table(dialect)
    top = _number(cursor, f"SELECT COALESCE(MAX({column}), 0) FROM {events}")
    chain_reach = _number(cursor, f"SELECT COALESCE(MAX(position), 0) FROM {event_chain.TABLE}")
    head, trusted, forged, forged_count = _seals_from_the_head(cursor, public_key)
    if head is not None and trusted is None:
        raise NoSealOfTheKey(
            f"none of the store's {forged_count} seals is signed by this key (its public key: "
            f"{_named_keys(public_key)}): not the service's"
        )
    trusted_last = trusted.last_position if trusted is not None else 0
    cursor.execute(
        f"SELECT MIN({column}), MAX({column}), COUNT(*) FROM {events} WHERE {column} > ?",
        (trusted_last,),
    )
    unsealed = _span(cursor.fetchone())
    removed = _removed(cursor, top, chain_reach, trusted_last)
    cut = _cut(cursor, dialect, top, trusted_last) if removed is not None else None
    return Tail(
        top, chain_reach, head, trusted, tuple(forged), forged_count, unsealed, removed, cut
    )


def _number(cursor: Cursor, sql: str, params: tuple[Any, ...] = ()) -> int:
    cursor.execute(sql, params)
    row = cursor.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _span(row: Any) -> Span | None:
    if not row or not row[2]:
        return None
    return Span(int(row[0]), int(row[1]), int(row[2]))


def _seals_from_the_head(
    cursor: Cursor, public_key: seals.Keys
) -> tuple[Seal | None, Seal | None, list[Seal], int]:
    """The head seal, the last one the key signed, the forged ones after it (the
    first few, in position order) and how many those are."""
    head: Seal | None = None
    nearest: list[Seal] = []  # the forged seals nearest the trusted head, latest first
    count = 0
    for seal in _seals_down(cursor):
        head = head or seal
        if seals.signed(public_key, seal):
            return head, seal, nearest[::-1], count
        count += 1
        nearest = [*nearest, seal][-FORGED_LISTED_MAX:]
    return head, None, nearest[::-1], count


def _seals_down(cursor: Cursor) -> Iterator[Seal]:
    """Every seal row, the last first, a page at a time."""
    before = POSITION_MAX
    while True:
        cursor.execute(
            f"SELECT {seals.COLUMNS} FROM {seals.TABLE} WHERE last_position < ?"
            " ORDER BY last_position DESC LIMIT ?",
            (before, PAGE),
        )
        page = [seals.read_seal(row) for row in cursor.fetchall()]
        if not page:
            return
        yield from page
        before = page[-1].last_position


def _removed(cursor: Cursor, top: int, chain_reach: int, trusted_last: int) -> Span | None:
    """The positions past the last event that a link or a signed seal still claims:
    events removed from the end. Its count is the links that stand there."""
    reach = max(chain_reach, trusted_last)
    if reach <= top:
        return None
    links = _number(cursor, f"SELECT COUNT(*) FROM {event_chain.TABLE} WHERE position > ?", (top,))
    return Span(top + 1, reach, links)


def _cut(cursor: Cursor, dialect: str, top: int, trusted_last: int) -> CutSeal | None:
    """The signed seal whose events end inside it now (the cut fell mid-save), with
    its events still there: their digest goes in the record, so that verify can hold
    them to it, the seal itself no longer able to."""
    cursor.execute(
        f"SELECT first_position, last_position FROM {seals.TABLE} WHERE last_position > ?"
        " AND last_position <= ? AND first_position <= ? ORDER BY last_position LIMIT 1",
        (top, trusted_last, top),
    )
    row = cursor.fetchone()
    if row is None:
        return None
    first, last = int(row[0]), int(row[1])
    counted = Counted(event_lines(cursor, dialect, first, last))
    events = seals.events_digest(counted)
    return CutSeal(first, last, counted.count, events)


class Counted:
    """Lines passed through, counted: a range's events are hashed as they are read,
    a page at a time, never all held at once."""

    def __init__(self, lines: Iterator[bytes]) -> None:
        self.lines = lines
        self.count = 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self.lines:
            self.count += 1
            yield line


def event_lines(cursor: Cursor, dialect: str, first: int, last: int) -> Iterator[bytes]:
    """The seal lines (infra/store/seal.py: event_line) of the events standing at
    first..last, in position order, a page at a time."""
    events, column = log_table(dialect)
    after = first - 1
    while True:
        cursor.execute(
            f"SELECT {column}, originator_id, originator_version, topic, state FROM {events}"
            f" WHERE {column} > ? AND {column} <= ? ORDER BY {column} LIMIT ?",
            (after, last, PAGE),
        )
        rows = cursor.fetchall()
        if not rows:
            return
        for row in rows:
            yield _line(row)
        after = int(rows[-1][0])


class UnreadableEvent(Exception):
    """An event in the range to seal holds no event's values: it cannot be hashed as
    verify hashes events, so no seal over it could ever verify."""


def _line(row: Sequence[Any]) -> bytes:
    try:
        return seals.event_line(int(row[0]), row[1], int(row[2]), str(row[3]), bytes(row[4]))
    except (TypeError, ValueError, OverflowError) as error:
        raise UnreadableEvent(f"the event at position {row[0]} cannot be read: {error}") from None


def _named_keys(keys: seals.Keys) -> str:
    listed = keys if isinstance(keys, tuple) else (keys,)
    return ", ".join(seals.public_key_text(key) for key in listed)
