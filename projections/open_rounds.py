"""Rounds not over yet (baccarat open for bets, blackjack open or in play), with the
time of their last action: what the idle-round worker looks through (RULES.md 4)."""

from __future__ import annotations

from typing import Any

from domain import baccarat_round, blackjack_round
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
ROUNDS = (baccarat_round.ROUND + ".", blackjack_round.ROUND + ".")
OPENED = (baccarat_round.OPENED, blackjack_round.OPENED)
ENDED = (
    baccarat_round.SETTLED,
    baccarat_round.VOIDED,
    blackjack_round.SETTLED,
    blackjack_round.VOIDED,
)


def apply(cursor: Cursor, event: Any) -> None:
    topic = str(getattr(type(event), "TOPIC", ""))
    if not topic.startswith(ROUNDS):
        return
    round_id = str(event.originator_id)
    if topic in ENDED:
        cursor.execute("DELETE FROM open_rounds WHERE round_id = ?", (round_id,))
        return
    if topic in OPENED:
        dealer_id = getattr(event, "dealer_id", None)  # P2P baccarat only
        cursor.execute(
            "INSERT INTO open_rounds (round_id, player_id, dealer_id, last_action_at)"
            " VALUES (?, ?, ?, ?)",
            (round_id, event.player_id, dealer_id, event.timestamp.isoformat()),
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
