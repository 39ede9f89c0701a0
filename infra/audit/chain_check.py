"""Checking the event chain position by position, beside the log (`casino audit verify`).

Each position holds an event, a link, or both. A link is checked against the
stored link before it, so a discrepancy is named where it is and the rest of the
chain still verifies; a link noted earlier elsewhere (`--anchor`) must still be
what it was.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from infra.audit.acknowledged import Acknowledgments
from infra.audit.pages import prefetched
from infra.store import chain as event_chain
from infra.store.chain import ChainRow
from infra.store.store import Store

BATCH = 5000  # events per page read: fewer round trips, little more memory
PROBLEMS_LISTED_MAX = 1_000  # per kind of check; the rest are counted


def chain_rows(store: Store, up_to: int, after: int = 0) -> Iterator[ChainRow]:
    """The chain's rows after a position up to another, in order, each page read
    while the one before is checked (infra/audit/pages.py)."""
    for page in prefetched(_chain_pages(store, up_to, after)):
        yield from (row for row in page if row.position <= up_to)


def _chain_pages(store: Store, up_to: int, after: int) -> Iterator[list[ChainRow]]:
    position = after
    while position < up_to:
        with store.database.read() as cursor:
            page = event_chain.stored_links(cursor, position, BATCH)
        if not page:
            return
        yield page
        position = page[-1].position


def side_by_side(
    events: Iterator[Any], rows: Iterator[ChainRow]
) -> Iterator[tuple[int, Any | None, ChainRow | None]]:
    """Each position that holds an event or a link, with both (either may be None)."""
    event, row = next(events, None), next(rows, None)
    while event is not None or row is not None:
        if event is not None and (row is None or event.id < row.position):
            yield event.id, event, None
            event = next(events, None)
        elif row is not None and (event is None or row.position < event.id):
            yield row.position, None, row
            row = next(rows, None)
        else:
            assert event is not None and row is not None
            yield event.id, event, row
            event, row = next(events, None), next(rows, None)


def parse_anchor(text: str) -> tuple[int, str]:
    """`POSITION:LINK`, as `casino audit verify --anchor` takes it."""
    position, _, link = text.strip().partition(":")
    link = link.lower()
    if not position.isdigit() or len(link) != 64 or set(link) - set("0123456789abcdef"):
        raise ValueError(f"--anchor {text!r}: expected POSITION:LINK, LINK 64 hex digits")
    return int(position), link


class Problems:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.listed: list[str] = []
        self.unlisted = 0

    def add(self, problem: str) -> None:
        if len(self.listed) < PROBLEMS_LISTED_MAX:
            self.listed.append(problem)
        else:
            self.unlisted += 1

    def all(self) -> list[str]:
        more = [f"and {self.unlisted} more discrepancies of {self.kind}"] if self.unlisted else []
        return self.listed + more


def name_of(stored: Any) -> str:
    return f"{stored.originator_id} version {stored.originator_version}"


class ChainCheck:
    """The chain, position by position. Each link is checked against the stored link
    before it, so a discrepancy is named where it is and the rest still verifies.
    What it finds in a range an acknowledgment sealed, or found removed, is that
    acknowledgment's (infra/audit/acknowledged.py)."""

    def __init__(
        self,
        anchors: Mapping[int, str],
        hidden_from: int | None,
        acks: Acknowledgments,
    ) -> None:
        self.problems = Problems("the event chain")
        self.acks = acks
        self.anchors = dict(anchors)
        self.hidden_from = hidden_from
        self.recomputed = event_chain.GENESIS  # over the events as they are now
        self.head_position = 0
        self.last: ChainRow | None = None  # the chain row just passed
        self.link_before_last: str | None = None

    def check(self, position: int, notification: Any, row: ChainRow | None) -> None:
        previous = self.last.link if self.last is not None else event_chain.GENESIS
        mine = None
        if notification is not None:
            aggregate = notification.aggregate  # the id as text, made once (pages.py)
            fields = (
                aggregate,
                int(notification.originator_version),
                str(notification.topic),
                bytes(notification.state),
            )
            if row is not None and row.originator_id == aggregate:
                mine = event_chain.link_of(previous, *fields)
            self.recomputed = (
                mine
                if mine is not None and self.recomputed == previous
                else event_chain.link_of(self.recomputed, *fields)
            )
            self.head_position = position
            self._check_anchor(position)
        if row is None:
            self._found(
                position,
                f"event at position {position} ({name_of(notification)}) is not in the chain: "
                "it was inserted behind the store's back",
            )
            return
        if notification is None:
            self._found(
                position, f"event at position {position} ({name_of(row)}) has been removed", True
            )
        elif mine is None or notification.originator_version != row.originator_version:
            self._found(
                position,
                f"position {position} holds {name_of(notification)}, but the chain recorded "
                f"{name_of(row)} there: events were swapped, moved or replaced",
            )
        elif mine != row.link:
            self._mismatch(position, notification, row)
        self.link_before_last, self.last = previous, row

    def _mismatch(self, position: int, notification: Any, row: ChainRow) -> None:
        last, before = self.last, self.link_before_last
        if (
            last is not None
            and before is not None
            and event_chain.link(before, notification) == row.link
        ):
            self._found(
                position,
                f"event at position {last.position} ({name_of(last)}) was inserted with a "
                f"forged link: the link at position {position} was made without it",
            )
            return
        since = last.position if last is not None else 0
        self._found(
            position,
            f"event at position {position} ({name_of(notification)}) does not match its link "
            f"in the chain: it was altered, or the chain was cut or rewritten between "
            f"positions {since} and {position}",
        )

    def _found(self, position: int, problem: str, removed: bool = False) -> None:
        """A discrepancy at `position`; in an acknowledged range, that acknowledgment's:
        anywhere its seal covers (the seal names any later change to an event there),
        or, for an event removed, where it found events removed."""
        ack = None
        if self.acks:
            ack = self.acks.sealing(position)
            if ack is None and removed:
                ack = self.acks.removing(position)
        if ack is not None:
            ack.note(problem)
        else:
            self.problems.add(problem)

    def _check_anchor(self, position: int) -> None:
        noted = self.anchors.pop(position, None)
        if noted is not None and noted != self.recomputed:
            hidden = self.hidden_from is not None and position >= self.hidden_from
            now = "different" if hidden else self.recomputed  # It could hint at a hidden card.
            self.problems.add(
                f"the chain's link at position {position} is now {now}, not "
                f"{noted} as noted: events up to it were changed and the chain rewritten"
            )

    def finish(self) -> list[str]:
        for position in sorted(self.anchors):
            self.problems.add(f"no event at position {position}, where a link was noted")
        return self.problems.all()


class VersionCheck:
    """Every aggregate's versions run 1, 2, 3, ... in log order (the first break in
    each aggregate is named; what follows from it is not repeated)."""

    def __init__(self) -> None:
        self.problems = Problems("aggregate versions")
        # By the id as text (infra/audit/pages.py): a string's hash is kept, a UUID's is not.
        self.due: dict[str, int] = {}
        self.broken: set[str] = set()

    def check(self, position: int, notification: Any) -> None:
        aggregate, version = notification.aggregate, notification.originator_version
        due = self.due.get(aggregate, 1)
        if version != due and aggregate not in self.broken:
            self.broken.add(aggregate)
            after = "is the first of its aggregate" if due == 1 else f"follows version {due - 1}"
            self.problems.add(
                f"event at position {position} ({name_of(notification)}) {after}: "
                "an event is missing, out of order, or was added after its aggregate ended"
            )
        self.due[aggregate] = version + 1

    def forget(self, aggregate: str) -> None:
        self.due.pop(aggregate, None)
