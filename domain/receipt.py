"""Command receipts: the first answer's body to an idempotent command, kept forever.

A receipt is an aggregate saved in the same atomic save as the command's own
events, so "applied" and "answer remembered" can never disagree. Its id comes
from the idempotency key; a second save of the same key fails on the store's
unique (id, version) key, which is what makes a retried command apply once.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.ids import receipt_uuid


class CommandReceipt(Aggregate):
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
