"""Command receipts: the first answer's body to an idempotent command.

A receipt is saved in the same atomic save as the command's own events, so
"applied" and "answer remembered" can never disagree. Its id comes from the
idempotency key; a second save of the same key fails on the store's unique key,
which is what makes a retried command apply once.

The SQLite and PostgreSQL stores keep receipts in a table of their own
(`ReceiptRecord`, infra/store/receipts.py), sealed with the transaction's events,
whose answers are pruned once CASINO_RECEIPT_RETENTION_DAYS have passed; the key
itself stays taken. Stores written before that, and the in-memory store of the
domain's tests, hold them as `CommandReceipt` events in the log, kept forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.ids import receipt_uuid


class CommandReceipt(FastCopy, Aggregate):
    TOPIC = "casino:CommandReceipt"

    class Created(Aggregate.Created):
        TOPIC = "casino:CommandReceipt.Recorded"
        scoped_key: str
        fingerprint: str
        answer: dict[str, Any]  # the answer's body; its status belongs to the route

        # Version 1 stored the HTTP answer, {"status": ..., "body": ...}; version 2
        # stores the body alone, the domain knowing nothing of HTTP.
        class_version = 2

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            answer = state["answer"]
            if isinstance(answer, dict) and set(answer) == {"status", "body"}:
                state["answer"] = answer["body"]

    @staticmethod
    def create_id(scoped_key: str, fingerprint: str, answer: dict[str, Any]) -> UUID:
        return receipt_uuid(scoped_key)

    @event(Created)
    def __init__(self, scoped_key: str, fingerprint: str, answer: dict[str, Any]) -> None:
        self.scoped_key = scoped_key
        self.fingerprint = fingerprint
        self.answer = answer


@dataclass(frozen=True)
class ReceiptRecord:
    """A receipt to keep beside the command's events, in the same transaction: a store
    that keeps receipts in a table of their own (infra/store/receipts.py) takes these
    instead of `CommandReceipt` events, so that they can be pruned once they expire."""

    key_id: UUID
    scoped_key: str
    fingerprint: str
    answer: dict[str, Any]
    recorded_ms: int  # when the answer was given, milliseconds since the epoch


@dataclass(frozen=True)
class FoundReceipt:
    """A receipt as the store holds it: `answer` is None once it has been pruned."""

    fingerprint: str
    answer: dict[str, Any] | None
    recorded_ms: int
    trusted: bool  # covered by one of the service's seals (or the store seals nothing)


def found_in_log(event: CommandReceipt.Created, trusted: bool) -> FoundReceipt:
    """A receipt event of the log, as the receipts table would give it."""
    recorded_ms = int(event.timestamp.timestamp() * 1000)
    return FoundReceipt(event.fingerprint, event.answer, recorded_ms, trusted=trusted)
