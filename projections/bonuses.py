"""Bonus money per day, and the bonuses still running (rules.md 9; api.md, GET
/v1/reports/bonus): what the bonus report sums, and what the expiry worker looks
through to end each bonus when due.

Fed by the wallets' bonus events. Per day: granted, converted (to cash, at the
conversion or as held money settles or is given back after it), forfeited (a forfeit,
what a conversion's maximum leaves, held money of a forfeited bonus), expired, and the
change of the players' bonus accounts, whose running sum is what is outstanding.
Only candidates: the command that expires a bonus re-checks the wallet.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from domain import wallet
from domain.bonus import EXPIRED
from projections.balances import Owners
from projections.base import Cursor, add_to_rows, delete_rows, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS bonuses_running (
    bonus_id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bonus_round_results (
    round_id TEXT NOT NULL,
    day TEXT NOT NULL,
    staked_cents BIGINT NOT NULL,
    returned_cents BIGINT NOT NULL,
    converted_cents BIGINT NOT NULL,
    PRIMARY KEY (round_id, day)
);
CREATE TABLE IF NOT EXISTS bonus_daily (
    day TEXT PRIMARY KEY,
    granted_cents BIGINT NOT NULL,
    converted_cents BIGINT NOT NULL,
    forfeited_cents BIGINT NOT NULL,
    expired_cents BIGINT NOT NULL,
    outstanding_change_cents BIGINT NOT NULL
);
"""
# Each table with its primary key.
TABLES = {
    "bonuses_running": ("bonus_id",),
    "bonus_round_results": ("round_id", "day"),
    "bonus_daily": ("day",),
}
ROUND_SUMS = ("staked_cents", "returned_cents", "converted_cents")
SUMS = ("granted_cents", "converted_cents", "forfeited_cents", "expired_cents",
        "outstanding_change_cents")  # fmt: skip
TOPICS = (wallet.BONUS_GRANTED, wallet.BONUS_SETTLED, wallet.BONUS_CONVERTED,
          wallet.BONUS_FORFEITED, wallet.BONUS_EXPIRED, wallet.ENDED_BONUS_RELEASED,
          wallet.STAKE_TAKEN, wallet.CREDITED)  # fmt: skip
# A third-party game's bet, win and rollback (rules.md 10) move bonus money at once.
_THIRD_PARTY = (wallet.STAKE_TAKEN, wallet.CREDITED)
_ENDS = (wallet.BONUS_CONVERTED, wallet.BONUS_FORFEITED, wallet.BONUS_EXPIRED)
GRANTED, CONVERTED, FORFEITED, EXPIRED_COLUMN, OUTSTANDING = range(5)


class Bonuses:
    def __init__(self, owners: Owners) -> None:
        self.owners = owners
        self.running: dict[str, tuple[str, str] | None] = {}  # bonus -> (player, expiry)
        self.days: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0] * len(SUMS))
        # (round, day) -> bonus staked, returned and converted: the revenue report's
        # bonus figures, by the round's game (joined with the round index when read).
        self.rounds: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0, 0, 0])

    @staticmethod
    def wants(topic: str) -> bool:
        return topic in TOPICS

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic not in TOPICS:
            return
        if topic in _THIRD_PARTY:
            self._third_party(topic, event)
            return
        sums = self.days[(event.timestamp.date().isoformat(),)]
        sums[OUTSTANDING] += sum(
            cents for account, cents in event.postings if account.startswith("bonus:")
        )
        if topic == wallet.BONUS_GRANTED:
            player_id, _ = self.owners.of(event)
            self.running[event.bonus_id] = (player_id, event.expires_at)
            sums[GRANTED] += event.amount_cents
        elif topic in (wallet.BONUS_SETTLED, wallet.ENDED_BONUS_RELEASED):
            to_house = sum(cents for account, cents in event.postings if account == "casino:bonus")
            sums[CONVERTED] += event.to_cash_cents
            sums[EXPIRED_COLUMN if event.bonus_status == EXPIRED else FORFEITED] += to_house
            if topic == wallet.ENDED_BONUS_RELEASED:
                return  # a bet taken back: no round's result
            result = self.rounds[(event.round_id, event.timestamp.date().isoformat())]
            result[0] += event.released_cents
            result[1] += event.released_cents + event.net_cents
            result[2] += event.to_cash_cents
        elif topic == wallet.BONUS_CONVERTED:
            sums[CONVERTED] += event.converted_cents
            sums[FORFEITED] += event.forfeited_cents
            self.rounds[(event.round_id, event.timestamp.date().isoformat())][2] += (
                event.converted_cents
            )
        else:
            expired = topic == wallet.BONUS_EXPIRED
            sums[EXPIRED_COLUMN if expired else FORFEITED] += event.forfeited_cents
        if topic in _ENDS:
            self.running[event.bonus_id] = None

    def _third_party(self, topic: str, event: Any) -> None:
        """A provider's bet took `bonus_cents` from the bonus; a win's or rollback's
        bonus share went back to it, to cash (the bonus converted) or to casino:bonus
        (it was forfeited or expired)."""
        bonus = int(getattr(event, "bonus_cents", 0))
        if not bonus:
            return
        day = event.timestamp.date().isoformat()
        sums, result = self.days[(day,)], self.rounds[(event.round_id, day)]
        sums[OUTSTANDING] += sum(
            cents for account, cents in event.postings if account.startswith("bonus:")
        )
        if topic == wallet.STAKE_TAKEN:
            result[0] += bonus
            return
        to_house = sum(cents for account, cents in event.postings if account == "casino:bonus")
        sums[CONVERTED] += event.to_cash_cents
        sums[EXPIRED_COLUMN if event.bonus_status == EXPIRED else FORFEITED] += to_house
        result[1] += bonus
        result[2] += event.to_cash_cents

    def flush(self, cursor: Cursor) -> None:
        if self.running:
            delete_rows(cursor, "bonuses_running", "bonus_id", sorted(self.running))
        insert_rows(
            cursor,
            "bonuses_running",
            ("bonus_id", "player_id", "expires_at"),
            [(bonus_id, *kept) for bonus_id, kept in self.running.items() if kept is not None],
        )
        add_to_rows(cursor, "bonus_daily", ("day",), SUMS, self.days)
        add_to_rows(cursor, "bonus_round_results", ("round_id", "day"), ROUND_SUMS, self.rounds)


def revenue_rows(
    cursor: Cursor, first_day: str, last_day: str, month: bool
) -> dict[tuple[str, str, str], tuple[int, int, int]]:
    """(period, game, variant) -> bonus staked, returned and converted in the rounds
    that settled then (real money: the only money with a bonus)."""
    period = "substr(b.day, 1, 7)" if month else "b.day"
    found = rows(
        cursor,
        f"SELECT {period}, r.game, r.variant, SUM(b.staked_cents), SUM(b.returned_cents),"
        " SUM(b.converted_cents) FROM bonus_round_results b"
        " JOIN round_index r ON r.round_id = b.round_id"
        f" WHERE b.day >= ? AND b.day <= ? GROUP BY {period}, r.game, r.variant",
        (first_day, last_day),
    )
    return {(str(p), str(g), str(v)): (int(s), int(r), int(c)) for p, g, v, s, r, c in found}


def due_by(cursor: Cursor, now_iso: str) -> list[str]:
    """`player_id bonus_id` of every bonus past its expiry, the longest due first."""
    found = rows(
        cursor,
        "SELECT player_id, bonus_id FROM bonuses_running WHERE expires_at <= ? ORDER BY expires_at",
        (now_iso,),
    )
    return [f"{row[0]} {row[1]}" for row in found]


def daily(cursor: Cursor, first_day: str, last_day: str) -> list[dict[str, Any]]:
    """Each day from `first_day` to `last_day` with bonus activity, and what was
    outstanding at its end (every change before it counted)."""
    found = rows(
        cursor, "SELECT COALESCE(SUM(outstanding_change_cents), 0) FROM bonus_daily WHERE day < ?",
        (first_day,),
    )  # fmt: skip
    outstanding = int(next(iter(found))[0])
    result = []
    for day, *sums in rows(
        cursor,
        f"SELECT day, {', '.join(SUMS)} FROM bonus_daily WHERE day >= ? AND day <= ? ORDER BY day",
        (first_day, last_day),
    ):
        outstanding += int(sums[OUTSTANDING])
        result.append({"day": str(day), "granted_cents": int(sums[GRANTED]),
                       "converted_cents": int(sums[CONVERTED]),
                       "forfeited_cents": int(sums[FORFEITED]),
                       "expired_cents": int(sums[EXPIRED_COLUMN]),
                       "outstanding_cents": outstanding})  # fmt: skip
    return result
