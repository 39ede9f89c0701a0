"""Each player's settled rounds, with the balance before and after (RULES.md 4).

Fed by the wallets' settlement and commission events; the cards and stakes of a
round are read from the round itself when the history is shown.
"""

from __future__ import annotations

from typing import Any

from domain import wallet
from projections.balances import wallet_owner
from projections.base import Cursor, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS round_results (
    position BIGINT PRIMARY KEY,
    player_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    round_id TEXT NOT NULL,
    at TEXT NOT NULL,
    net_cents BIGINT NOT NULL,
    commission_cents BIGINT NOT NULL,
    balance_before_cents BIGINT NOT NULL,
    balance_after_cents BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS round_results_by_player ON round_results (player_id, mode, position);
"""
TABLES = ("round_results",)
ROUNDS_MAX = 100


def apply(cursor: Cursor, event: Any, position: int) -> None:
    topic = wallet.topic_of(event)
    if topic == wallet.ROUND_SETTLED:
        player_id, mode = wallet_owner(cursor, str(event.originator_id))
        after = event.balance_after_cents
        cursor.execute(
            "INSERT INTO round_results (position, player_id, mode, round_id, at, net_cents,"
            " commission_cents, balance_before_cents, balance_after_cents)"
            " VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
            (position, player_id, mode, event.round_id, event.timestamp.isoformat(),
             event.net_cents, after - event.net_cents, after),
        )  # fmt: skip
    elif topic == wallet.COMMISSION_CHARGED:
        player_id, mode = wallet_owner(cursor, str(event.originator_id))
        cursor.execute(
            "UPDATE round_results SET net_cents = net_cents - ?, commission_cents = ?,"
            " balance_after_cents = ? WHERE player_id = ? AND mode = ? AND round_id = ?",
            (event.commission_cents, event.commission_cents, event.balance_after_cents,
             player_id, mode, event.round_id),
        )  # fmt: skip


def recent(cursor: Cursor, player_id: str, mode: str, limit: int) -> list[dict[str, Any]]:
    """The player's latest settled rounds, newest first."""
    found = rows(
        cursor,
        "SELECT round_id, at, net_cents, commission_cents, balance_before_cents,"
        " balance_after_cents FROM round_results WHERE player_id = ? AND mode = ?"
        " ORDER BY position DESC LIMIT ?",
        (player_id, mode, min(limit, ROUNDS_MAX)),
    )
    keys = ("round_id", "at", "net_cents", "commission_cents", "balance_before_cents",
            "balance_after_cents")  # fmt: skip
    return [dict(zip(keys, row, strict=True)) for row in found]
