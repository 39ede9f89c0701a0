"""Blackjack rounds interrupted while their player is away, with the time of the
interruption: what the abandoned-round worker looks through (rules.md 4).

Only candidates: the command that finishes a round re-checks the round itself.
"""

from __future__ import annotations

from typing import Any

from domain.blackjack import round as topics
from projections.base import Cursor, delete_rows, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS interrupted_rounds (
    round_id TEXT PRIMARY KEY,
    interrupted_at TEXT NOT NULL
);
"""
# Each table with its primary key.
TABLES = {"interrupted_rounds": ("round_id",)}
_ENDED = (topics.RESUMED, topics.SETTLED)


class InterruptedRounds:
    def __init__(self) -> None:
        self.latest: dict[str, str | None] = {}  # Interrupted at, or None once over.

    @staticmethod
    def wants(topic: str) -> bool:
        return topic == topics.INTERRUPTED or topic in _ENDED

    def apply(self, event: Any, position: int) -> None:
        topic = str(getattr(type(event), "TOPIC", ""))
        if topic == topics.INTERRUPTED:
            self.latest[str(event.originator_id)] = event.timestamp.isoformat()
        elif topic in _ENDED:
            self.latest[str(event.originator_id)] = None

    def flush(self, cursor: Cursor) -> None:
        if self.latest:
            delete_rows(cursor, "interrupted_rounds", "round_id", sorted(self.latest))
        insert_rows(
            cursor,
            "interrupted_rounds",
            ("round_id", "interrupted_at"),
            [(round_id, at) for round_id, at in self.latest.items() if at is not None],
        )


def interrupted_since(cursor: Cursor, cutoff_iso: str) -> list[str]:
    """Rounds interrupted at or before the cutoff, oldest first."""
    found = rows(
        cursor,
        "SELECT round_id FROM interrupted_rounds WHERE interrupted_at <= ? ORDER BY interrupted_at",
        (cutoff_iso,),
    )
    return [str(row[0]) for row in found]
