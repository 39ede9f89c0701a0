"""The projector: feeds every read model from the event log, exactly once.

Each batch of events and the new tracking position commit in one transaction
under the read models' write lock, so a crash mid-batch replays the batch and
two projectors never apply the same event twice. Readers call `catch_up()`
before they query, so an answer always includes every acknowledged command.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from projections import (
    balances,
    commission,
    dealer_points,
    event_chain,
    game_history,
    interrupted_rounds,
    open_rounds,
)
from projections.base import Cursor, Database

NAME = "read_models"
BATCH_SIZE = 500
SCHEMA = """
CREATE TABLE IF NOT EXISTS projection_tracking (
    projection TEXT PRIMARY KEY,
    position BIGINT NOT NULL
);
"""
# The read models a rebuild empties. The event chain is not among them: it is evidence.
TABLES = (
    balances.TABLES
    + dealer_points.TABLES
    + commission.TABLES
    + game_history.TABLES
    + open_rounds.TABLES
    + interrupted_rounds.TABLES
)


def all_schemas() -> str:
    return (
        SCHEMA
        + balances.SCHEMA
        + dealer_points.SCHEMA
        + commission.SCHEMA
        + event_chain.SCHEMA
        + game_history.SCHEMA
        + open_rounds.SCHEMA
        + interrupted_rounds.SCHEMA
    )


class Projector:
    def __init__(self, database: Database, recorder: Any, to_event: Callable[[Any], Any]) -> None:
        self.database = database
        self.recorder = recorder
        self.to_event = to_event

    def catch_up(self) -> int:
        """Apply every event not yet applied; return how many were applied."""
        if self.position() >= (self.recorder.max_notification_id() or 0):
            return 0  # Up to date: two reads, and no write lock taken from the writers.
        applied = 0
        while batch := self._apply_next_batch():
            applied += batch
        return applied

    def _apply_next_batch(self) -> int:
        with self.database.write() as cursor:
            position = _position(cursor)
            notifications = self.recorder.select_notifications(
                start=position, limit=BATCH_SIZE, inclusive_of_start=False
            )
            for notification in notifications:
                event_chain.apply(cursor, notification)
                self._apply(cursor, self.to_event(notification), notification.id)
            if notifications:
                _set_position(cursor, notifications[-1].id)
            return len(notifications)

    def _apply(self, cursor: Cursor, event: Any, position: int) -> None:
        balances.apply(cursor, event)
        dealer_points.apply(cursor, event, position)
        commission.apply(cursor, event)
        game_history.apply(cursor, event, position)
        open_rounds.apply(cursor, event)
        interrupted_rounds.apply(cursor, event)

    def rebuild(self, progress: Callable[[int], None] | None = None) -> int:
        """Empty every read model and apply the whole event log again."""
        with self.database.write() as cursor:
            for table in TABLES:
                cursor.execute(f"DELETE FROM {table}")
            _set_position(cursor, 0)
        applied = 0
        while batch := self._apply_next_batch():
            applied += batch
            if progress is not None:
                progress(batch)
        return applied

    def position(self) -> int:
        with self.database.read() as cursor:
            return _position(cursor)


def _position(cursor: Cursor) -> int:
    cursor.execute("SELECT position FROM projection_tracking WHERE projection = ?", (NAME,))
    row = cursor.fetchone()
    return int(row[0]) if row else 0


def _set_position(cursor: Cursor, position: int) -> None:
    cursor.execute(
        "INSERT INTO projection_tracking (projection, position) VALUES (?, ?)"
        " ON CONFLICT (projection) DO UPDATE SET position = excluded.position",
        (NAME, position),
    )
