"""What a command's attempts yield for a driver to wait on (domain/seam.py:
`CommandSeam.steps`): `CommandSeam.drive` waits in its thread, infra/http/driver.py
on the event loop."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import ProcessingEvent
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import StoredEvent

from domain.outcome import Outcome
from domain.receipt import ReceiptRecord

T = TypeVar("T")


@dataclass(frozen=True)
class Save:
    """A save for the driver to hand to the store (`CommandSeam.submit`); the attempts
    are sent its notification ids, or thrown the store's error."""

    processing: ProcessingEvent[UUID]
    stored: list[StoredEvent]
    receipts: list[ReceiptRecord]


@dataclass(frozen=True)
class Pause:
    """Wait this long before the next attempt."""

    seconds: float


@dataclass(frozen=True)
class Snapshots:
    """After a save: aggregates it took past a snapshot interval, for the driver to
    snapshot (`CommandSeam.snapshot`), a write of its own the command does not wait on
    for its answer."""

    aggregates: list[Aggregate]


@dataclass(frozen=True)
class Look:
    """A read of the store the attempts wait on once they have decided (is what they
    read stale? has the key a receipt?): for the driver to run where it may wait, and
    send back what it returns (or throw what it raises)."""

    read: Callable[..., Any]
    args: tuple[Any, ...]


# A command's attempts: between what they yield they never wait on the store, except
# to load what the command reads (a cached aggregate is not read again). A driver does
# the waiting: on their saves, their pauses, their snapshots and their looks.
Steps = Generator[Save | Pause | Snapshots | Look, Any, Outcome[T]]
