"""Account balances per mode (the trial balance) and wallet balances (liability).

Fed by the postings that wallet events carry; see domain/wallet.py.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from domain import wallet
from projections.base import Cursor, add_to_rows, insert_rows, rows

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
# Each table with its primary key.
TABLES = {
    "wallet_index": ("wallet_id",),
    "account_balances": ("mode", "account"),
    "wallet_balances": ("player_id", "mode"),
}

_HOLD_SIGNS = {
    wallet.FUNDS_HELD: 1,
    wallet.HOLD_RELEASED: -1,
    wallet.BANK_HELD: 1,  # a player's bank at a table, held like a stake
    wallet.BANK_RELEASED: -1,
}


OWNERS_KEPT_MAX = 100_000  # About 30 MB; past it the memory starts afresh.


class Owners:
    """Whose each wallet is, by wallet id. A wallet never changes owner, so what is
    read once stays true: kept in memory across batches, up to a bound."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[str, str]] = {}
        self.cursor: Cursor | None = None  # The batch's, for wallets opened before it.

    def opened(self, event: Any) -> None:
        self._keep(str(event.originator_id), (event.player_id, event.mode))

    def _keep(self, wallet_id: str, owner: tuple[str, str]) -> None:
        if len(self._known) >= OWNERS_KEPT_MAX:
            self._known.clear()
        self._known[wallet_id] = owner

    def of(self, event: Any) -> tuple[str, str]:
        """(player_id, mode) of the wallet that recorded the event."""
        wallet_id = str(event.originator_id)
        if wallet_id not in self._known:
            assert self.cursor is not None
            self.cursor.execute(
                "SELECT player_id, mode FROM wallet_index WHERE wallet_id = ?", (wallet_id,)
            )
            row = self.cursor.fetchone()
            assert row is not None, f"wallet {wallet_id} has events but was never opened"
            self._keep(wallet_id, (str(row[0]), str(row[1])))
        return self._known[wallet_id]


class Balances:
    def __init__(self, owners: Owners) -> None:
        self.owners = owners
        self.opened: list[tuple[str, str, str]] = []
        self.accounts: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0])
        self.wallets: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0, 0])

    @staticmethod
    def wants(topic: str) -> bool:
        return topic.startswith(wallet.WALLET + ".")  # Created (OPENED) among them

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic == wallet.OPENED:
            self.owners.opened(event)
            self.opened.append((str(event.originator_id), event.player_id, event.mode))
            self.wallets[(event.player_id, event.mode)][0] += 0  # The row, at zero.
            return
        if not topic.startswith(wallet.WALLET + "."):
            return
        player_id, mode = self.owners.of(event)
        for account, cents in getattr(event, "postings", None) or ():
            self.accounts[(mode, account)][0] += cents
            if account.startswith("player:"):
                self.wallets[(account.removeprefix("player:"), mode)][0] += cents
        if topic in _HOLD_SIGNS:
            self.wallets[(player_id, mode)][1] += _HOLD_SIGNS[topic] * event.amount_cents
        elif topic == wallet.ROUND_SETTLED:
            # The settled round's whole hold goes; the event says how much was held then.
            self.wallets[(player_id, mode)][1] -= event.released_cents

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "wallet_index", ("wallet_id", "player_id", "mode"), self.opened)
        add_to_rows(
            cursor, "account_balances", ("mode", "account"), ("balance_cents",), self.accounts
        )
        add_to_rows(
            cursor,
            "wallet_balances",
            ("player_id", "mode"),
            ("balance_cents", "held_cents"),
            self.wallets,
        )


def trial_balance(cursor: Cursor, mode: str) -> list[tuple[str, int]]:
    return [
        (str(account), int(cents))
        for account, cents in rows(
            cursor,
            "SELECT account, balance_cents FROM account_balances WHERE mode = ? ORDER BY account",
            (mode,),
        )
    ]


def check_accounts(accounts: list[tuple[str, int]]) -> None:
    """Pair assertion on the read path (rules.md 1, 6): no player's account is below zero
    or above the balance ceiling, whatever was written into the read model."""
    for account, cents in accounts:
        if account.startswith(("player:", "bonus:")):
            assert 0 <= cents <= wallet.BALANCE_CENTS_MAX, f"{account[:80]} reads {cents}"


def check_liability(balance_cents: int, held_cents: int) -> None:
    """Pair assertion on the read path: what is held is part of what the players have."""
    assert 0 <= held_cents <= balance_cents, (balance_cents, held_cents)


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
