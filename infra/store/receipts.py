"""Command receipts in a table of their own, sealed with the events they answer for.

A receipt (infra/commands/receipt.py) is written by the recorder in the transaction that
inserts its command's events, one row of `command_receipts`:

    key_id        the receipt's id, from the scoped Idempotency-Key (primary key:
                  a second save of the same key fails, and its command is retried)
    scoped_key, fingerprint, answer (the body, JSON), answer_sha256,
    recorded_ms   when the answer was given
    position      the last position of the transaction's events: its seal's
    pruned_ms     when its answer was pruned (NULL while it lives)

The transaction's seal (infra/store/seal.py) covers its receipts: `receipts_digest`
is SHA-256 over their lines ("key id|scoped key|fingerprint|answer_sha256|
recorded_ms|position\\n"), sorted. A line leaves the answer out and names its
hash, so a pruned receipt (its `answer` set to NULL) still proves what it was,
and its key stays taken. Triggers refuse every change but that one (and a DELETE
or TRUNCATE); the service's role may update only `answer` and `pruned_ms`.

Once CASINO_RECEIPT_RETENTION_DAYS have passed, a replay is refused (422
idempotency_key_expired) whether or not the pruner has been by yet; the pruner
(infra/workers.py: ReceiptPruner) then frees the answer's bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from infra.commands.receipt import CommandReceipt, FoundReceipt, ReceiptRecord
from infra.store import seal as seals

TABLE = "command_receipts"
RECEIPT_EVENT_TOPIC = CommandReceipt.Created.TOPIC  # how older stores keep receipts
INSERT_COLUMNS = "key_id, scoped_key, fingerprint, answer, answer_sha256, recorded_ms, position"
LINE_COLUMNS = "key_id, scoped_key, fingerprint, answer_sha256, recorded_ms, position"
PRUNE_BATCH = 1_000  # rows per pruning transaction: short locks, bounded work
PRUNE_BATCHES_MAX = 100  # per pass of the pruner; the next pass goes on

SQLITE_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    key_id TEXT PRIMARY KEY, scoped_key TEXT NOT NULL, fingerprint TEXT NOT NULL,
    answer BLOB, answer_sha256 TEXT NOT NULL, recorded_ms INTEGER NOT NULL,
    position INTEGER NOT NULL, pruned_ms INTEGER);
CREATE INDEX IF NOT EXISTS {TABLE}_position ON {TABLE} (position);
CREATE INDEX IF NOT EXISTS {TABLE}_live ON {TABLE} (recorded_ms) WHERE answer IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS {TABLE}_prune_only BEFORE UPDATE ON {TABLE}
WHEN NEW.answer IS NOT NULL OR NEW.key_id IS NOT OLD.key_id
    OR NEW.scoped_key IS NOT OLD.scoped_key OR NEW.fingerprint IS NOT OLD.fingerprint
    OR NEW.answer_sha256 IS NOT OLD.answer_sha256 OR NEW.recorded_ms IS NOT OLD.recorded_ms
    OR NEW.position IS NOT OLD.position
BEGIN SELECT RAISE(ABORT, 'command receipts are immutable but for pruning their answer'); END;
CREATE TRIGGER IF NOT EXISTS {TABLE}_refuse_delete BEFORE DELETE ON {TABLE}
BEGIN SELECT RAISE(ABORT, 'command receipts are immutable: DELETE refused'); END;
CREATE TRIGGER IF NOT EXISTS {TABLE}_key_free BEFORE INSERT ON {TABLE}
WHEN EXISTS (SELECT 1 FROM stored_events WHERE originator_id = NEW.key_id
    AND originator_version = 1)
BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: this key''s receipt is in the log'); END;
CREATE TRIGGER IF NOT EXISTS stored_events_receipt_key_free BEFORE INSERT ON stored_events
WHEN NEW.topic = '{RECEIPT_EVENT_TOPIC}'
    AND EXISTS (SELECT 1 FROM {TABLE} WHERE key_id = NEW.originator_id)
BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: this key has a receipt already'); END;
"""

POSTGRES_SCHEMA = """
CREATE TABLE IF NOT EXISTS {schema}.{table} (
    key_id uuid PRIMARY KEY, scoped_key text NOT NULL, fingerprint text NOT NULL,
    answer bytea, answer_sha256 text NOT NULL, recorded_ms bigint NOT NULL,
    position bigint NOT NULL, pruned_ms bigint);
CREATE INDEX IF NOT EXISTS {table}_position ON {schema}.{table} (position);
CREATE INDEX IF NOT EXISTS {table}_live ON {schema}.{table} (recorded_ms)
    WHERE answer IS NOT NULL;
CREATE OR REPLACE FUNCTION {schema}.refuse_receipt_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.answer IS NULL AND NEW.key_id = OLD.key_id
        AND NEW.scoped_key = OLD.scoped_key AND NEW.fingerprint = OLD.fingerprint
        AND NEW.answer_sha256 = OLD.answer_sha256 AND NEW.recorded_ms = OLD.recorded_ms
        AND NEW.position = OLD.position THEN
        RETURN NEW;  -- pruning: the answer goes, what proves it stays
    END IF;
    RAISE EXCEPTION 'command receipts are immutable but for pruning their answer: % refused',
        TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE OR REPLACE TRIGGER {table}_prune_only BEFORE UPDATE OR DELETE ON {schema}.{table}
    FOR EACH ROW EXECUTE FUNCTION {schema}.refuse_receipt_change();
CREATE OR REPLACE TRIGGER {table}_refuse_truncate BEFORE TRUNCATE ON {schema}.{table}
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.refuse_event_change();
-- One key, one receipt, whichever kind: a row here, or an event of the log.
CREATE OR REPLACE FUNCTION {schema}.receipt_key_free() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM {schema}.{events}
            WHERE originator_id = NEW.key_id AND originator_version = 1) THEN
        RAISE EXCEPTION 'this Idempotency-Key has a receipt in the log already'
            USING ERRCODE = 'unique_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE OR REPLACE FUNCTION {schema}.receipt_event_key_free() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM {schema}.{table} WHERE key_id = NEW.originator_id) THEN
        RAISE EXCEPTION 'this Idempotency-Key has a receipt already'
            USING ERRCODE = 'unique_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER {table}_key_free BEFORE INSERT ON {schema}.{table}
    FOR EACH ROW EXECUTE FUNCTION {schema}.receipt_key_free();
CREATE OR REPLACE TRIGGER {events}_receipt_key_free BEFORE INSERT ON {schema}.{events}
    FOR EACH ROW WHEN (NEW.topic = '{receipt_topic}')
    EXECUTE FUNCTION {schema}.receipt_event_key_free();
"""


def answer_bytes(answer: dict[str, Any]) -> bytes:
    """The answer as stored: JSON, its keys in the order the route gave them."""
    return json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode()


def receipt_line(
    key_id: Any, scoped_key: str, fingerprint: str, answer_sha256: str, recorded_ms: int,
    position: int,
) -> bytes:  # fmt: skip
    """A receipt's line; ValueError for fields no receipt of the service has, as each
    line must name one row only: a key id spelled otherwise than the store keeps it
    (SQLite's text would then miss the service's lookup, yet name the same UUID), or a
    "|" outside the scoped key (which may hold one: it would move between fields)."""
    if not isinstance(key_id, UUID) and (not isinstance(key_id, str) or UUID(key_id).hex != key_id):
        raise ValueError(f"a key id not as the store keeps one: {key_id!r}")
    if "\n" in scoped_key or any(
        "|" in field or "\n" in field for field in (fingerprint, answer_sha256)
    ):
        raise ValueError("a receipt field holding a separator of its line")
    key = str(UUID(str(key_id)))
    return f"{key}|{scoped_key}|{fingerprint}|{answer_sha256}|{recorded_ms}|{position}\n".encode()


def receipts_digest(lines: Iterable[bytes]) -> str:
    """What a seal names for its transaction's receipts: their lines, sorted, hashed."""
    return seals.events_digest(sorted(lines))


def rows_of(records: Sequence[ReceiptRecord], position: int, as_id: Any) -> list[tuple[Any, ...]]:
    """The rows to insert for `records`, in INSERT_COLUMNS order; `as_id` stores a key
    id as the store keeps ids (SQLite: hex text; PostgreSQL: the UUID itself)."""
    rows = []
    for record in records:
        answer = answer_bytes(record.answer)
        rows.append((as_id(record.key_id), record.scoped_key, record.fingerprint, answer,
                     hashlib.sha256(answer).hexdigest(), record.recorded_ms, position))  # fmt: skip
    return rows


def lines_of(rows: Iterable[Sequence[Any]]) -> list[bytes]:
    """Receipt lines from rows in INSERT_COLUMNS order (what the seal is made over)."""
    return [
        receipt_line(key_id, scoped, fingerprint, sha, int(recorded), int(position))
        for key_id, scoped, fingerprint, _, sha, recorded, position in rows
    ]


def receipts_digest_of(rows: Sequence[Sequence[Any]]) -> str | None:
    """What a seal names for a transaction's receipt rows; None when it has none."""
    return receipts_digest(lines_of(rows)) if rows else None


# The receipt of a key, from the table or (stores older than it) the log; two ids.
FIND_SQL = (
    f"SELECT 0, fingerprint, answer, answer_sha256, recorded_ms, position FROM {TABLE}"
    " WHERE key_id = {p} UNION ALL"
    " SELECT 1, topic, state, NULL, NULL, NULL FROM {events}"
    " WHERE originator_id = {p} AND originator_version = 1 ORDER BY 1"
)
# Drops the answers of receipts recorded before a time: now, before, batch size.
PRUNE_SQL = (
    f"UPDATE {TABLE} SET answer = NULL, pruned_ms = {{p}} WHERE key_id IN"
    f" (SELECT key_id FROM {TABLE} WHERE answer IS NOT NULL AND recorded_ms < {{p}}"
    " LIMIT {p})"
)


def found_of(
    row: Sequence[Any] | None, key_id: UUID, sealed_at: Callable[[int], bool] | None
) -> FoundReceipt | StoredEvent | None:
    """A row of FIND_SQL as the seam takes it: a receipt of the table (trusted when
    its seal is the service's, or when the store seals nothing), or the stored event."""
    if row is None:
        return None
    kind, fingerprint, answer, answer_sha256, recorded_ms, position = row
    if kind == 1:
        return StoredEvent(key_id, 1, str(fingerprint), bytes(answer))
    if answer is not None and hashlib.sha256(bytes(answer)).hexdigest() != answer_sha256:
        return FoundReceipt(str(fingerprint), None, int(recorded_ms), trusted=False)
    trusted = sealed_at is None or sealed_at(int(position))
    body = json.loads(bytes(answer)) if answer is not None else None
    return FoundReceipt(str(fingerprint), body, int(recorded_ms), trusted=trusted)


class KeepsReceipts:
    """What both recorders add to the library's: command receipts in their own table
    (infra/store/receipts.py), inserted in the events' transaction. The seam finds
    them by `select_receipt` (infra/commands/receipt_answers.py: `ReceiptsTable`)."""

    # Whether the receipts at a position are in the service's own seal; set when the
    # store seals (infra/store/sealed_reads.py), None when it seals nothing.
    receipts_sealed: Callable[[int], bool] | None = None

    def select_receipt(self, key_id: UUID) -> FoundReceipt | StoredEvent | None:
        """The receipt of `key_id`: from the table or, in a store older than it, the
        receipt event of the log (which the caller decodes)."""
        row = self._query_one(self._find_sql(), (self._stored_id(key_id),) * 2)
        return found_of(row, key_id, self.receipts_sealed)

    def prune_receipts(self, recorded_before_ms: int, now_ms: int) -> int:
        """Drop the answers of receipts recorded before `recorded_before_ms`, a batch per
        transaction, up to PRUNE_BATCHES_MAX batches; say how many."""
        pruned = 0
        for _ in range(PRUNE_BATCHES_MAX):
            count = self._update(self._prune_sql(), (now_ms, recorded_before_ms, PRUNE_BATCH))
            pruned += count
            if count < PRUNE_BATCH:
                break
        return pruned

    def _stored_id(self, key_id: UUID) -> Any:
        raise NotImplementedError

    def _find_sql(self) -> str:
        raise NotImplementedError

    def _prune_sql(self) -> str:
        raise NotImplementedError

    def _query_one(self, sql: str, params: Sequence[Any]) -> Sequence[Any] | None:
        raise NotImplementedError

    def _update(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError
