"""Time-outs and self-exclusions still running, with their ends: what the exclusion
worker looks through to end each one when due (rules.md 7).

Only candidates: the command that ends an exclusion re-checks the player's protection.
"""

from __future__ import annotations

from typing import Any

from projections.base import Cursor, delete_rows, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS exclusions (
    player_id TEXT PRIMARY KEY,
    ends_at TEXT NOT NULL
);
"""
# Each table with its primary key.
TABLES = {"exclusions": ("player_id",)}
EXCLUDED = "casino:Protection.Excluded"
ENDED = "casino:Protection.ExclusionEnded"


class Exclusions:
    def __init__(self) -> None:
        self.latest: dict[str, str | None] = {}  # player id -> ends at, or None once ended

    @staticmethod
    def wants(topic: str) -> bool:
        return topic in (EXCLUDED, ENDED)

    def apply(self, event: Any, position: int) -> None:
        topic = str(getattr(type(event), "TOPIC", ""))
        if topic not in (EXCLUDED, ENDED):
            return
        self.latest[str(event.player_id)] = event.ends_at if topic == EXCLUDED else None

    def flush(self, cursor: Cursor) -> None:
        if self.latest:
            delete_rows(cursor, "exclusions", "player_id", sorted(self.latest))
        insert_rows(
            cursor,
            "exclusions",
            ("player_id", "ends_at"),
            [(player_id, ends) for player_id, ends in self.latest.items() if ends is not None],
        )


def due_by(cursor: Cursor, now_iso: str) -> list[str]:
    """Players whose exclusion ends at or before `now`, the longest due first."""
    found = rows(
        cursor, "SELECT player_id FROM exclusions WHERE ends_at <= ? ORDER BY ends_at", (now_iso,)
    )
    return [str(row[0]) for row in found]
