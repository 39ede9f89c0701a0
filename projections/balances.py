"""Account balances per mode (the trial balance) and wallet balances (liability).

Fed by the postings that wallet events carry; see domain/wallet.py.
"""

from __future__ import annotations

from typing import Any

from domain import wallet
from projections.base import Cursor, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS wallet_index (
    wallet_id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    mode TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS account_balances (
    mode TEXT NOT NULL,
    account TEXT NOT NULL,
    balance_cents BIGINT NOT NULL,
    PRIMARY KEY (mode, account)
);
CREATE TABLE IF NOT EXISTS wallet_balances (
    player_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    balance_cents BIGINT NOT NULL,
    held_cents BIGINT NOT NULL,
    PRIMARY KEY (player_id, mode)
);
"""
TABLES = ("wallet_index", "account_balances", "wallet_balances")

_HOLD_SIGNS = {wallet.FUNDS_HELD: 1, wallet.HOLD_RELEASED: -1}


def apply(cursor: Cursor, event: Any) -> None:
    topic = wallet.topic_of(event)
    if topic == wallet.OPENED:
        _open_wallet(cursor, event)
        return
    if not topic.startswith(wallet.WALLET + "."):
        return
    player_id, mode = wallet_owner(cursor, str(event.originator_id))
    postings = getattr(event, "postings", None)
    if postings:
        _post(cursor, mode, postings)
    if topic in _HOLD_SIGNS:
        _change_held(cursor, player_id, mode, _HOLD_SIGNS[topic] * event.amount_cents)
    if topic == wallet.ROUND_SETTLED:
        _release_round_hold(cursor, player_id, mode, event)


def wallet_owner(cursor: Cursor, wallet_id: str) -> tuple[str, str]:
    cursor.execute("SELECT player_id, mode FROM wallet_index WHERE wallet_id = ?", (wallet_id,))
    row = cursor.fetchone()
    assert row is not None, f"wallet {wallet_id} has events but was never opened"
    return str(row[0]), str(row[1])


def _open_wallet(cursor: Cursor, event: Any) -> None:
    cursor.execute(
        "INSERT INTO wallet_index (wallet_id, player_id, mode) VALUES (?, ?, ?)",
        (str(event.originator_id), event.player_id, event.mode),
    )
    cursor.execute(
        "INSERT INTO wallet_balances (player_id, mode, balance_cents, held_cents)"
        " VALUES (?, ?, 0, 0)",
        (event.player_id, event.mode),
    )


def _post(cursor: Cursor, mode: str, postings: list[list[Any]]) -> None:
    for account, cents in postings:
        cursor.execute(
            "INSERT INTO account_balances (mode, account, balance_cents) VALUES (?, ?, ?)"
            " ON CONFLICT (mode, account)"
            " DO UPDATE SET"
            " balance_cents = account_balances.balance_cents + excluded.balance_cents",
            (mode, account, cents),
        )
        if account.startswith("player:"):
            cursor.execute(
                "UPDATE wallet_balances SET balance_cents = balance_cents + ?"
                " WHERE player_id = ? AND mode = ?",
                (cents, account.removeprefix("player:"), mode),
            )


def _change_held(cursor: Cursor, player_id: str, mode: str, cents: int) -> None:
    cursor.execute(
        "UPDATE wallet_balances SET held_cents = held_cents + ? WHERE player_id = ? AND mode = ?",
        (cents, player_id, mode),
    )


def _release_round_hold(cursor: Cursor, player_id: str, mode: str, event: Any) -> None:
    # The settled round's whole hold goes; the event says how much was held at that point.
    _change_held(cursor, player_id, mode, -event.released_cents)


def trial_balance(cursor: Cursor, mode: str) -> list[tuple[str, int]]:
    return [
        (str(account), int(cents))
        for account, cents in rows(
            cursor,
            "SELECT account, balance_cents FROM account_balances WHERE mode = ? ORDER BY account",
            (mode,),
        )
    ]


def liability(cursor: Cursor, mode: str) -> tuple[int, int, int]:
    """(total player balances, total held in open rounds, wallets) for a mode."""
    cursor.execute(
        "SELECT COALESCE(SUM(balance_cents), 0), COALESCE(SUM(held_cents), 0), COUNT(*)"
        " FROM wallet_balances WHERE mode = ?",
        (mode,),
    )
    row = cursor.fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])
