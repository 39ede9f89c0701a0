"""A command's save, as the seam hands it to the store (infra/commands/seam.py: `submit`):
at once through the recorder's insert, or to a committer that gathers concurrent
saves into shared transactions (infra/store/group_commit.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from uuid import UUID

from eventsourcing.application import ProcessingEvent
from eventsourcing.persistence import StoredEvent

from infra.commands.receipt import ReceiptRecord

T = TypeVar("T")


@dataclass(frozen=True)
class Save:
    """A command's save: its aggregates' new events, stored as the store keeps them,
    and its receipts, in one transaction (`CommandSeam.submit`)."""

    processing: ProcessingEvent[UUID]
    stored: list[StoredEvent]
    receipts: list[ReceiptRecord]


# The store's insert: stored events of one transaction, and its command receipts ->
# the events' notification ids.
Insert = Callable[[list[StoredEvent], list[ReceiptRecord]], Sequence[int] | None]


class Committer(Protocol):
    """Takes saves from many commands' threads and inserts them (infra/store/group_commit.py)."""

    def save(
        self,
        stored_events: list[StoredEvent],
        receipts: list[ReceiptRecord],
        on_saved: Callable[[], None],
    ) -> Future[list[int]]:
        """Queue a command's save; the future holds its notification ids, or the error."""
        ...

    def close(self) -> None:
        """Write what is queued, then stop; a save handed in after this is refused."""
        ...


def insert_of(recorder: Any) -> Insert:
    """The store's own insert, as the committer calls it."""

    def insert(
        stored_events: list[StoredEvent], receipts: list[ReceiptRecord]
    ) -> Sequence[int] | None:
        if receipts:  # only a store that keeps receipts is given any (the seam's `_receipts`)
            result: Sequence[int] | None = recorder.insert_events(stored_events, receipts=receipts)
        else:
            result = recorder.insert_events(stored_events)
        return result

    return insert
