"""How the seam answers a repeated request: from its key's receipt, and only if that
receipt is the service's, unexpired and given to the same request (the seam's
attempts, infra/commands/seam.py, call these where a repeat would else be saved,
refused or run again). And the receipt a command leaves: a row for the store's
receipts table, or an event."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from domain.errors import IdempotencyKeyExpired, IdempotencyKeyReused, ReceiptUnsealed
from domain.ids import receipt_uuid
from domain.outcome import Outcome, Receipt
from domain.queries import CasinoQueries
from domain.unit import SecretBox
from infra.commands.receipt import CommandReceipt, FoundReceipt, ReceiptRecord, found_in_log

DAY_SECONDS = 86_400
# Where a kept answer holds its sealed fields; no answer of ours has such a field.
SEALED_FIELDS = "_sealed"


@runtime_checkable
class ReceiptsTable(Protocol):
    """A store that keeps receipts in a table of their own (infra/store/receipts.py:
    `KeepsReceipts`): one receipt per key, whichever kind, found by one query."""

    def select_receipt(self, key_id: UUID) -> FoundReceipt | StoredEvent | None: ...


class ReceiptAnswers:
    """The seam's half that answers from receipts (infra/commands/seam.py: CommandSeam)."""

    app: CasinoQueries
    box: SecretBox  # seals a receipt's credentials (`Receipt.sealed`)
    sealed: Callable[[UUID, int], bool] | None
    receipt_retention_days: int
    # The store's receipts table; None where receipts are events of the log.
    _table: ReceiptsTable | None

    @property
    def _keeps_receipts(self) -> bool:
        return self._table is not None

    def _replay(self, receipt: Receipt[Any] | None) -> Outcome[Any] | None:
        """The outcome of a repeated request, answered from its key's receipt; None
        without a key or a receipt (an untrusted, expired or reused one is refused)."""
        earlier = self._earlier_answer(receipt) if receipt is not None else None
        if earlier is None:
            return None
        head = self.app.recorder.max_notification_id() or 0
        return Outcome(result=None, answer=earlier, replayed=True, position=head)

    def _receipts(
        self, receipt: Receipt[Any] | None, answer: dict[str, Any] | None, aggregates: list[Any]
    ) -> list[ReceiptRecord]:
        """The command's receipt, for the store's receipts table; or, where the store
        keeps none, or the command saves no event (the table's rows hang on a save's
        last position), as an event among `aggregates`: one key, one receipt, whichever
        kind (the store's triggers refuse a second of either kind)."""
        if receipt is None or answer is None:
            return []
        answer = self._kept_answer(receipt, answer)
        if self._keeps_receipts and any(a.pending_events for a in aggregates):
            recorded_ms = int(self.app.clock().timestamp() * 1000)
            key_id = receipt_uuid(receipt.key)
            return [ReceiptRecord(key_id, receipt.key, receipt.fingerprint, answer, recorded_ms)]
        aggregates.append(CommandReceipt(receipt.key, receipt.fingerprint, answer))
        return []

    def _earlier_answer(self, receipt: Receipt[Any]) -> dict[str, Any] | None:
        """The answer stored for the receipt's key, if any; a key whose answer is
        untrusted, expired or given to another request is refused."""
        found = self._found_receipt(receipt_uuid(receipt.key))
        if found is None:
            return None
        if not found.trusted:
            raise ReceiptUnsealed(
                "the answer stored for this Idempotency-Key is in no seal of the service: "
                "it was written behind its back; nothing was done (run `casino audit verify`)"
            )
        expires_ms = found.recorded_ms + self.receipt_retention_days * DAY_SECONDS * 1000
        if found.answer is None or self.app.clock().timestamp() * 1000 >= expires_ms:
            raise IdempotencyKeyExpired(
                f"this Idempotency-Key was used more than {self.receipt_retention_days} days "
                "ago: its answer is no longer kept, and the key cannot be used again; "
                "nothing was done"
            )
        if found.fingerprint != receipt.fingerprint:
            if receipt.reused is not None:
                raise receipt.reused()
            raise IdempotencyKeyReused(
                "this Idempotency-Key was already used with a different request"
            )
        return self._opened_answer(receipt, found.answer)

    def _kept_answer(self, receipt: Receipt[Any], answer: dict[str, Any]) -> dict[str, Any]:
        """The answer as its receipt keeps it: the receipt's `sealed` fields (an answer's
        credentials) sealed with the service's secret box, bound to the receipt's key."""
        if not receipt.sealed:
            return answer
        kept = {name: value for name, value in answer.items() if name not in receipt.sealed}
        kept[SEALED_FIELDS] = {
            name: self.box.seal(json.dumps(answer[name]).encode(), receipt.key)
            for name in receipt.sealed
            if name in answer
        }
        return kept

    def _opened_answer(self, receipt: Receipt[Any], kept: dict[str, Any]) -> dict[str, Any]:
        """The answer to give again, its sealed fields opened (an answer stored before
        they were sealed has none)."""
        if SEALED_FIELDS not in kept:
            return kept
        answer = {name: value for name, value in kept.items() if name != SEALED_FIELDS}
        for name, sealed in kept[SEALED_FIELDS].items():
            answer[name] = json.loads(self.box.open(sealed, receipt.key))
        return answer

    def _found_receipt(self, key_id: UUID) -> FoundReceipt | None:
        """The receipt of `key_id`, from the receipts table or the log, in one query."""
        if self._table is not None:
            found = self._table.select_receipt(key_id)
            if found is None or isinstance(found, FoundReceipt):
                return found
            event = self.app.mapper.to_domain_event(found)
        else:
            # One event, never snapshotted: read straight from the event store.
            events: list[Any] = list(self.app.events.get(key_id, limit=1))
            if not events:
                return None
            event = events[0]
        assert isinstance(event, CommandReceipt.Created)
        trusted = self.sealed is None or self.sealed(key_id, 1)
        return found_in_log(event, trusted)
