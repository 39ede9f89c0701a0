"""Rounds not over yet (baccarat open for bets, blackjack open or in play, coups at
tables), with the time of their last action: what the idle-round worker looks
through (rules.md 4), and who plays in them (what a reconnect lists)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from domain.blackjack import round as blackjack_round
from domain.tables import coup, old_rounds
from projections.base import Cursor, delete_rows, insert_rows, rows, set_text_columns
from projections.round_trail import ENDED, ROUNDS

SCHEMA = """
CREATE TABLE IF NOT EXISTS open_rounds (
    round_id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    dealer_id TEXT,
    last_action_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS open_round_players (
    round_id TEXT NOT NULL,
    player_id TEXT NOT NULL,
    PRIMARY KEY (round_id, player_id)
);
"""
# Each table with its primary key.
TABLES = {"open_rounds": ("round_id",), "open_round_players": ("round_id", "player_id")}
OPENED = (old_rounds.OPENED, blackjack_round.OPENED, coup.OPENED)


class OpenRounds:
    def __init__(self) -> None:
        # Rows of rounds opened in this batch, and the last action of those opened
        # before it. Times are kept as they come and written as text at the flush: most
        # rounds of a batch end in it, and formatting each action's time was a twentieth
        # of a rebuild (py-spy).
        self.opened: dict[str, list[Any]] = {}
        self.touched: dict[str, datetime] = {}
        self.ended: set[str] = set()
        # Who plays in each coup, by round: an ended round's are dropped at once.
        self.players: dict[str, set[str]] = defaultdict(set)

    @staticmethod
    def wants(topic: str) -> bool:
        return topic.startswith(ROUNDS)

    def apply(self, event: Any, position: int) -> None:
        topic = str(getattr(type(event), "TOPIC", ""))
        if not topic.startswith(ROUNDS):
            return
        round_id, at = str(event.originator_id), event.timestamp
        if not isinstance(at, datetime):  # formatted only at the flush, if at all
            raise TypeError(f"an event's timestamp is {type(at).__name__}, not a datetime")
        if topic in (coup.BET_PLACED, coup.BANCO_CALLED):
            self.players[round_id].add(event.player_id)
        if topic in ENDED:
            # Deleted even if opened in this batch: a tampered log may have opened it
            # (or bet in it) in an earlier one too, and the rows must not depend on
            # where the batches fall. (One statement per table: projections/base.py.)
            self.ended.add(round_id)
            self.opened.pop(round_id, None)
            self.touched.pop(round_id, None)
            self.players.pop(round_id, None)
        elif topic in OPENED:
            dealer_id = getattr(event, "dealer_id", None)  # P2P baccarat only
            # A coup at a table has many players, none of its own: they are in
            # open_round_players. A one-seat coup (house, P2P) has its player.
            player_id = getattr(event, "player_id", None) or ""
            self.opened[round_id] = [round_id, player_id, dealer_id, at]
            banker_id = getattr(event, "banker_id", None)  # a player-banked coup's banker
            if banker_id is not None:
                self.players[round_id].add(banker_id)
        elif round_id in self.opened:
            self.opened[round_id][3] = at
        else:
            self.touched[round_id] = at

    def flush(self, cursor: Cursor) -> None:
        if self.ended:
            ended = sorted(self.ended)
            delete_rows(cursor, "open_rounds", "round_id", ended)
            delete_rows(cursor, "open_round_players", "round_id", ended)
        insert_rows(
            cursor,
            "open_round_players",
            ("round_id", "player_id"),
            sorted((r, p) for r, players in self.players.items() for p in players),
            "ON CONFLICT (round_id, player_id) DO NOTHING",
        )
        insert_rows(
            cursor,
            "open_rounds",
            ("round_id", "player_id", "dealer_id", "last_action_at"),
            [[*row[:3], row[3].isoformat()] for row in self.opened.values()],
        )
        if self.touched:
            touched = [(round_id, at.isoformat()) for round_id, at in self.touched.items()]
            set_text_columns(cursor, "open_rounds", "round_id", ("last_action_at",), touched)


def idle_since(cursor: Cursor, cutoff_iso: str) -> list[str]:
    """Open rounds whose last action was at or before the cutoff, oldest first."""
    found = rows(
        cursor,
        "SELECT round_id FROM open_rounds WHERE last_action_at <= ? ORDER BY last_action_at",
        (cutoff_iso,),
    )
    return [str(row[0]) for row in found]


def of_player(cursor: Cursor, player_id: str) -> list[str]:
    """Open rounds in which the player plays, deals or holds the bank, oldest first."""
    found = rows(
        cursor,
        "SELECT round_id FROM open_rounds WHERE player_id = ? OR dealer_id = ? OR round_id IN"
        " (SELECT round_id FROM open_round_players WHERE player_id = ?) ORDER BY last_action_at",
        (player_id, player_id, player_id),
    )
    return [str(row[0]) for row in found]
