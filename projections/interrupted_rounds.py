"""Blackjack rounds interrupted while their player is away, with the time of the
interruption: what the abandoned-round worker looks through (RULES.md 4).

Only candidates: the command that finishes a round re-checks the round itself.
"""

from __future__ import annotations

from typing import Any

from domain import blackjack_round as topics
from projections.base import Cursor, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS interrupted_rounds (
    round_id TEXT PRIMARY KEY,
    interrupted_at TEXT NOT NULL
);
"""
TABLES = ("interrupted_rounds",)
_ENDED = (topics.RESUMED, topics.SETTLED)


def apply(cursor: Cursor, event: Any) -> None:
    topic = str(getattr(type(event), "TOPIC", ""))
    round_id = str(event.originator_id)
    if topic == topics.INTERRUPTED:
        cursor.execute(
            "INSERT INTO interrupted_rounds (round_id, interrupted_at) VALUES (?, ?)"
            " ON CONFLICT (round_id) DO UPDATE SET interrupted_at = excluded.interrupted_at",
            (round_id, event.timestamp.isoformat()),
        )
    elif topic in _ENDED:
        cursor.execute("DELETE FROM interrupted_rounds WHERE round_id = ?", (round_id,))


def interrupted_since(cursor: Cursor, cutoff_iso: str) -> list[str]:
    """Rounds interrupted at or before the cutoff, oldest first."""
    found = rows(
        cursor,
        "SELECT round_id FROM interrupted_rounds WHERE interrupted_at <= ? ORDER BY interrupted_at",
        (cutoff_iso,),
    )
    return [str(row[0]) for row in found]
