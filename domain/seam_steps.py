"""A command's save, as the seam hands it to the store (domain/seam.py: `submit`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar
from uuid import UUID

from eventsourcing.application import ProcessingEvent
from eventsourcing.persistence import StoredEvent

from domain.receipt import ReceiptRecord

T = TypeVar("T")


@dataclass(frozen=True)
class Save:
    """A command's save: its aggregates' new events, stored as the store keeps them,
    and its receipts, in one transaction (`CommandSeam.submit`)."""

    processing: ProcessingEvent[UUID]
    stored: list[StoredEvent]
    receipts: list[ReceiptRecord]
