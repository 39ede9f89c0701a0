"""Dealer points per player and mode, entry by entry (rules.md 2.1)."""

from __future__ import annotations

from typing import Any

from domain import wallet
from projections.balances import Owners
from projections.base import Cursor, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS dealer_point_entries (
    position BIGINT PRIMARY KEY,
    player_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    at TEXT NOT NULL,
    round_id TEXT,
    change BIGINT NOT NULL,
    role TEXT NOT NULL,
    reason TEXT NOT NULL,
    points_after BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS dealer_point_entries_by_player
    ON dealer_point_entries (player_id, mode, position);
"""
# Each table with its primary key.
TABLES = {"dealer_point_entries": ("position",)}
COLUMNS = ("position", "player_id", "mode", "at", "round_id", "change", "role", "reason",
           "points_after")  # fmt: skip
ENTRIES_MAX = 1000


class DealerPoints:
    def __init__(self, owners: Owners) -> None:
        self.owners = owners
        self.entries: list[tuple[Any, ...]] = []

    @staticmethod
    def wants(topic: str) -> bool:
        return topic == wallet.POINTS_CHANGED

    def apply(self, event: Any, position: int) -> None:
        if wallet.topic_of(event) != wallet.POINTS_CHANGED:
            return
        player_id, mode = self.owners.of(event)
        self.entries.append(
            (position, player_id, mode, event.timestamp.isoformat(), event.round_id,
             event.change, event.role, event.reason, event.points_after)
        )  # fmt: skip

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "dealer_point_entries", COLUMNS, self.entries)


def entries(cursor: Cursor, player_id: str, mode: str) -> list[dict[str, Any]]:
    """The latest entries, oldest first."""
    found = rows(
        cursor,
        "SELECT at, round_id, change, role, reason FROM dealer_point_entries"
        " WHERE player_id = ? AND mode = ? ORDER BY position DESC LIMIT ?",
        (player_id, mode, ENTRIES_MAX),
    )
    keys = ("at", "round_id", "change", "role", "reason")
    return [dict(zip(keys, row, strict=True)) for row in reversed(list(found))]
