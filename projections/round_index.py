"""Every round of every game, one row each: its game, variant, mode, table, status and
times, and who took part in which role (api.md, GET /v1/rounds; the auditor's index).

A round's row is made from its `Opened` event and moved on by the events that change
its status. Who took part is kept in a table of its own, so a round of many players
(the tables of rules.md 2.2-2.4, as they land) needs no change of schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain import wallet
from domain.blackjack import round as blackjack_round
from domain.providers import round as provider_round
from domain.tables import coup, old_rounds
from domain.tables.punto_banco import P2P
from projections.base import Cursor, insert_rows, rows, set_text_columns

SCHEMA = """
CREATE TABLE IF NOT EXISTS round_index (
    round_id TEXT PRIMARY KEY,
    position BIGINT NOT NULL,
    game TEXT NOT NULL,
    variant TEXT NOT NULL,
    mode TEXT NOT NULL,
    table_id TEXT,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS round_index_by_position ON round_index (position);
CREATE INDEX IF NOT EXISTS round_index_by_start ON round_index (started_at, position);
CREATE TABLE IF NOT EXISTS round_players (
    round_id TEXT NOT NULL,
    player_id TEXT NOT NULL,
    role TEXT NOT NULL,
    position BIGINT NOT NULL,
    PRIMARY KEY (round_id, player_id)
);
CREATE INDEX IF NOT EXISTS round_players_by_player ON round_players (player_id, position);
"""
# Each table with its primary key.
TABLES = {"round_index": ("round_id",), "round_players": ("round_id", "player_id")}
COLUMNS = ("round_id", "position", "game", "variant", "mode", "table_id", "status",
           "started_at", "ended_at")  # fmt: skip
STATUS, ENDED_AT = COLUMNS.index("status"), COLUMNS.index("ended_at")
ROUNDS_MAX = 500
PLAYER, DEALER, BANKER = "player", "dealer", "banker"

GAMES = {
    old_rounds.OPENED: "baccarat",
    blackjack_round.OPENED: "blackjack",
    coup.OPENED: "baccarat",  # a coup at a multi-player table; its variant is the table's game
    provider_round.OPENED: provider_round.GAME,  # its variant is the provider's id
}
# The events after which a round has a new status, and that status (as its answer says).
PLAYS = (coup.BET_PLACED, coup.BANCO_CALLED)  # who does one plays in the coup
STATUS_AFTER = {
    old_rounds.SETTLED: coup.SETTLED_STATUS,
    old_rounds.VOIDED: coup.VOIDED_STATUS,
    blackjack_round.HOLE_CARD_DEALT: blackjack_round.IN_PLAY,
    blackjack_round.INTERRUPTED: blackjack_round.INTERRUPTED_STATUS,
    blackjack_round.RESUMED: blackjack_round.IN_PLAY,
    blackjack_round.SETTLED: blackjack_round.SETTLED_STATUS,
    blackjack_round.VOIDED: blackjack_round.VOIDED_STATUS,
    coup.DECISION_OWED: coup.IN_PLAY,
    coup.SETTLED: coup.SETTLED_STATUS,
    coup.VOIDED: coup.VOIDED_STATUS,
    provider_round.ENDED: provider_round.CLOSED,
}
ENDED = (
    old_rounds.SETTLED,
    old_rounds.VOIDED,
    blackjack_round.SETTLED,
    blackjack_round.VOIDED,
    coup.SETTLED,
    coup.VOIDED,
    provider_round.ENDED,
)


class RoundIndex:
    def __init__(self) -> None:
        self.opened: dict[str, list[Any]] = {}  # Rows of rounds opened in this batch.
        self.players: list[tuple[str, str, str, int]] = []
        # The latest status and end of rounds opened in an earlier batch.
        self.changed: dict[str, tuple[str, str | None]] = {}

    @staticmethod
    def wants(topic: str) -> bool:
        return topic in GAMES or topic in PLAYS or topic in STATUS_AFTER

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic in GAMES:
            self._open(event, position, GAMES[topic])
            return
        if topic in PLAYS:  # who bet in a coup plays in it
            self.players.append((str(event.originator_id), event.player_id, PLAYER, position))
            return
        status = STATUS_AFTER.get(topic)
        if status is None:
            return
        round_id = str(event.originator_id)
        ended_at = event.timestamp.isoformat() if topic in ENDED else None
        row = self.opened.get(round_id)
        if row is None:
            self.changed[round_id] = (status, ended_at)
        else:
            row[STATUS], row[ENDED_AT] = status, ended_at

    def _open(self, event: Any, position: int, game: str) -> None:
        round_id = str(event.originator_id)
        # A blackjack round's variant is its hall, as its answer says; a provider's
        # round's the provider.
        variants = {"baccarat": "variant", "blackjack": "hall", provider_round.GAME: "provider_id"}
        variant = getattr(event, variants[game])
        self.opened[round_id] = [
            round_id, position, game, variant, event.mode, getattr(event, "table_id", None),
            coup.OPEN, event.timestamp.isoformat(), None,
        ]  # fmt: skip
        # A coup at a table has many players, none at its opening; a one-seat round
        # (house, P2P) has its player.
        player_id: str | None = getattr(event, "player_id", None)
        if player_id is not None:
            self.players.append((round_id, player_id, PLAYER, position))
        # A P2P round's dealer (a round stored before baccarat was one model names
        # them `dealer_id`); a coup at a player-banked table's banker.
        banker_id: str | None = getattr(event, "dealer_id", None) or getattr(
            event, "banker_id", None
        )
        if banker_id is not None:
            role = DEALER if variant == P2P else BANKER
            self.players.append((round_id, banker_id, role, position))

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "round_index", COLUMNS, list(self.opened.values()))
        insert_rows(cursor, "round_players", ("round_id", "player_id", "role", "position"),
                    self.players, "ON CONFLICT (round_id, player_id) DO NOTHING")  # fmt: skip
        if self.changed:
            set_text_columns(
                cursor, "round_index", "round_id", ("status", "ended_at"),
                [(round_id, *change) for round_id, change in self.changed.items()],
            )  # fmt: skip


def listed(
    cursor: Cursor,
    *,
    after: int = 0,
    limit: int = 100,
    player_id: str | None = None,
    round_id: str | None = None,
    since: str | None = None,
    before: str | None = None,
) -> list[dict[str, Any]]:
    """Rounds in the order they opened, after the one opened at `after`, each with its
    players: those `player_id` took part in, `round_id` alone, those that began at or
    after `since` and before `before` (ISO instants in UTC, as the events are stamped)."""
    conditions: list[str] = ["i.position > ?"]
    params: list[Any] = [after]
    join = ""
    if player_id is not None:
        join = " JOIN round_players p ON p.round_id = i.round_id AND p.player_id = ?"
        params.insert(0, player_id)
    for condition, value in (
        ("i.round_id = ?", round_id),
        ("i.started_at >= ?", since),
        ("i.started_at < ?", before),
    ):
        if value is not None:
            conditions.append(condition)
            params.append(value)
    columns = ", ".join(f"i.{column}" for column in COLUMNS)
    found = rows(
        cursor,
        f"SELECT {columns} FROM round_index i{join} WHERE {' AND '.join(conditions)}"
        " ORDER BY i.position LIMIT ?",
        (*params, min(limit, ROUNDS_MAX)),
    )
    listed = [dict(zip(COLUMNS, row, strict=True)) for row in found]
    players = _players(cursor, [entry["round_id"] for entry in listed])
    for entry in listed:
        entry["players"] = players.get(entry["round_id"], [])
    return listed


def _players(cursor: Cursor, round_ids: Sequence[str]) -> dict[str, list[dict[str, str]]]:
    if not round_ids:
        return {}
    marks = ", ".join("?" * len(round_ids))
    found = rows(
        cursor,
        f"SELECT round_id, player_id, role FROM round_players WHERE round_id IN ({marks})"
        " ORDER BY round_id, player_id",
        tuple(round_ids),
    )
    players: dict[str, list[dict[str, str]]] = {}
    for round_id, player_id, role in found:
        players.setdefault(str(round_id), []).append(
            {"player_id": str(player_id), "role": str(role)}
        )
    return players
