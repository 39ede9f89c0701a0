"""Baccarat rounds still open, with the time of their last action: what the idle-round
worker looks through (RULES.md 4)."""

from __future__ import annotations

from typing import Any

from domain import baccarat_round as topics
from projections.base import Cursor, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS open_rounds (
    round_id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    dealer_id TEXT,
    last_action_at TEXT NOT NULL
);
"""
TABLES = ("open_rounds",)
_ENDED = (topics.SETTLED, topics.VOIDED)


def apply(cursor: Cursor, event: Any) -> None:
    topic = str(getattr(type(event), "TOPIC", ""))
    if not topic.startswith(topics.ROUND + "."):
        return
    round_id = str(event.originator_id)
    if topic in _ENDED:
        cursor.execute("DELETE FROM open_rounds WHERE round_id = ?", (round_id,))
        return
    if topic == topics.OPENED:
        cursor.execute(
            "INSERT INTO open_rounds (round_id, player_id, dealer_id, last_action_at)"
            " VALUES (?, ?, ?, ?)",
            (round_id, event.player_id, event.dealer_id, event.timestamp.isoformat()),
        )
        return
    cursor.execute(
        "UPDATE open_rounds SET last_action_at = ? WHERE round_id = ?",
        (event.timestamp.isoformat(), round_id),
    )


def idle_since(cursor: Cursor, cutoff_iso: str) -> list[str]:
    """Open rounds whose last action was at or before the cutoff, oldest first."""
    found = rows(
        cursor,
        "SELECT round_id FROM open_rounds WHERE last_action_at <= ? ORDER BY last_action_at",
        (cutoff_iso,),
    )
    return [str(row[0]) for row in found]


def of_player(cursor: Cursor, player_id: str) -> list[str]:
    """Open rounds in which the player plays or deals, oldest first."""
    found = rows(
        cursor,
        "SELECT round_id FROM open_rounds WHERE player_id = ? OR dealer_id = ?"
        " ORDER BY last_action_at",
        (player_id, player_id),
    )
    return [str(row[0]) for row in found]
