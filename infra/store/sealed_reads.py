"""Whether an event the service is about to act on is in one of its own seals.

The seals let an auditor find an event written behind the service's back
(infra/audit/seal_check.py), but the service itself loads aggregates by id and
would act on such an event before any audit runs. Where that would let a forgery
answer for the service, it asks here first: the command receipt, an answer given
without running the command (infra/commands/seam.py: `CommandSeam.sealed`; for one of the
receipts table, `receipts_sealed`). The event's
seal must be signed by the service's key and cover exactly the events standing at
its positions now, the event among them. An event saved before sealing began (a
store older than the seals) is trusted as before: only the event chain covers it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from infra.store import receipts as receipt_rows
from infra.store import seal as seals
from infra.store.database import PostgresDatabase
from infra.store.schema import POSTGRES_EVENTS_TABLE, SQLITE_EVENTS_TABLE
from infra.store.seal import Sealer
from projections.base import Cursor, Database

SEAL_EVENTS_MAX = 100_000  # No save is this large; a larger span is no seal of ours.
# What `seal_covering` answers for an event saved before the store sealed anything.
BEFORE_SEALING = seals.Seal(0, 0, 0, "", "", "before sealing", "")


class SealedReads:
    def __init__(self, database: Database, recorder: Any, sealer: Sealer) -> None:
        self.database = database
        self.recorder = recorder
        self.sealer = sealer
        self._stored_id: Callable[[UUID], str]
        if isinstance(database, PostgresDatabase):
            self._position_sql = (
                f"SELECT notification_id FROM {POSTGRES_EVENTS_TABLE}"
                " WHERE originator_id = ? AND originator_version = ?"
            )
            self._event_at_sql = f"SELECT 1 FROM {POSTGRES_EVENTS_TABLE} WHERE notification_id = ?"
            self._versions_sql = (
                f"SELECT originator_version, notification_id FROM {POSTGRES_EVENTS_TABLE}"
                " WHERE originator_id = ? AND originator_version > ?"
                " AND originator_version <= ? ORDER BY originator_version"
            )
            self._stored_id = str
        else:
            self._position_sql = (
                f"SELECT rowid FROM {SQLITE_EVENTS_TABLE}"
                " WHERE originator_id = ? AND originator_version = ?"
            )
            self._event_at_sql = f"SELECT 1 FROM {SQLITE_EVENTS_TABLE} WHERE rowid = ?"
            self._versions_sql = (
                f"SELECT originator_version, rowid FROM {SQLITE_EVENTS_TABLE}"
                " WHERE originator_id = ? AND originator_version > ?"
                " AND originator_version <= ? ORDER BY originator_version"
            )
            self._stored_id = lambda originator_id: originator_id.hex  # as SQLite stores it

    @property
    def keys(self) -> tuple[Ed25519PublicKey, ...]:
        """Every key of the chain: a seal any of them signed is the service's."""
        return self.sealer.chain_keys

    def __call__(self, originator_id: UUID, version: int) -> bool:
        found = self.seal_covering(originator_id, version)
        if found is None or found is BEFORE_SEALING:
            return found is BEFORE_SEALING
        return seals.signed(self.keys, found) and self._covers(found)

    def seal_covering(self, originator_id: UUID, version: int) -> seals.Seal | None:
        """The seal whose span holds the event (not yet checked: not its signature,
        nor that it covers the events standing there); BEFORE_SEALING for an event
        saved before the store sealed anything (only the event chain covers it);
        None when there is no such event or no such seal."""
        with self.database.read() as cursor:
            cursor.execute(self._position_sql, (self._stored_id(originator_id), version))
            found = cursor.fetchone()
            if found is None:
                return None
            position = int(found[0])
            if position < 1:
                return None  # The log never gives such a position.
            row, before_sealing = _seal_row(cursor, ">=", position)
        if before_sealing:
            return BEFORE_SEALING
        if row is None:
            return None
        try:
            seal = seals.seal_of(row)
        except (TypeError, ValueError, OverflowError):
            return None  # Not even a seal's values (SQLite stores any value anywhere).
        return seal if seal.first_position <= position else None

    def covers(self, seal: seals.Seal) -> bool:
        """Whether `seal` covers exactly the events standing in its span now."""
        return self._covers(seal)

    def _covers(self, seal: seals.Seal) -> bool:
        span = seal.last_position - seal.first_position + 1
        if not 0 < span <= SEAL_EVENTS_MAX:
            return False
        events = self.recorder.select_notifications(
            start=seal.first_position, limit=span, stop=seal.last_position
        )
        lines = [
            seals.event_line(
                event.id,
                event.originator_id,
                int(event.originator_version),
                str(event.topic),
                bytes(event.state),
            )
            for event in events
        ]
        return len(lines) == seal.event_count and seals.events_digest(lines) == seal.events_digest

    def predates_seals(self, originator_id: UUID) -> bool:
        """Whether the aggregate's first event was saved before the store sealed
        anything (or is not there)."""
        with self.database.read() as cursor:
            cursor.execute(self._position_sql, (self._stored_id(originator_id), 1))
            found = cursor.fetchone()
            if found is None:
                return True
            _, before_sealing = _seal_row(cursor, ">=", int(found[0]))
        return before_sealing

    def first_unsealed(self, originator_id: UUID, after: int, up_to: int) -> int | None:
        """The first of an aggregate's events after version `after` (up to `up_to`) that
        no seal of the service vouches for, as its position (0 for a version missing
        from the store); None when each is in a seal signed by the service that covers
        exactly the events standing in its span. Each seal is checked once however
        many of the events it covers (`verified`: the spans already checked)."""
        with self.database.read() as cursor:
            cursor.execute(self._versions_sql, (self._stored_id(originator_id), after, up_to))
            found = [(int(version), int(position)) for version, position in cursor.fetchall()]
        if [version for version, _ in found] != list(range(after + 1, up_to + 1)):
            return 0  # a version missing (or one more than the aggregate holds)
        verified: list[tuple[int, int]] = []
        for _, position in found:
            if any(first <= position <= last for first, last in verified):
                continue
            span = self._sealed_span(position)
            if span is None:
                return position
            verified.append(span)
        return None

    def _sealed_span(self, position: int) -> tuple[int, int] | None:
        """The span of the seal that vouches for the event at `position`, or None."""
        if position < 1:
            return None
        with self.database.read() as cursor:
            row, before_sealing = _seal_row(cursor, ">=", position)
        if before_sealing:
            return (position, position)  # older than the seals: the chain covers it
        try:
            seal = seals.seal_of(row) if row is not None else None
        except (TypeError, ValueError, OverflowError):
            return None
        if seal is None or seal.first_position > position:
            return None
        if not (seals.signed(self.keys, seal) and self._covers(seal)):
            return None
        return (seal.first_position, seal.last_position)

    def receipts_sealed(self, position: int) -> bool:
        """Whether the receipts recorded at `position` (infra/store/receipts.py) are the
        ones the seal ending there names, and that seal is signed by the service."""
        if position < 1:
            return False  # The log never gives such a position: no save's.
        with self.database.read() as cursor:
            row, before_sealing = _seal_row(cursor, "=", position)
            if before_sealing:
                # Saved before sealing began, as the events of then; but where an event
                # is (no seal yet may also be a log with no event at all).
                cursor.execute(self._event_at_sql, (position,))
                return cursor.fetchone() is not None
            cursor.execute(
                f"SELECT {receipt_rows.INSERT_COLUMNS} FROM {receipt_rows.TABLE}"
                " WHERE position = ?",
                (position,),
            )
            rows = cursor.fetchall()
        if row is None or not rows:
            return False
        try:
            seal = seals.seal_of(row)
            digest = receipt_rows.receipts_digest_of(rows)
        except (TypeError, ValueError, OverflowError):
            return False  # Not even a seal's or a receipt's values.
        return seal.receipts_digest == digest and seals.signed(self.keys, seal)


def _seal_row(cursor: Cursor, compare: str, position: int) -> tuple[Sequence[Any] | None, bool]:
    """The first seal whose last position is `compare` (">=" or "=") `position`, and
    whether `position` comes before any seal (a store older than the seals)."""
    cursor.execute(
        f"SELECT {seals.COLUMNS} FROM {seals.TABLE} WHERE last_position {compare} ?"
        " ORDER BY last_position LIMIT 1",
        (position,),
    )
    row = cursor.fetchone()
    cursor.execute(f"SELECT MIN(first_position) FROM {seals.TABLE}")
    first = cursor.fetchone()
    return row, first is None or first[0] is None or position < int(first[0])
