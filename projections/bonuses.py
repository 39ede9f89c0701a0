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
from domain.providers import round as provider_round
from projections.balances import Owners
from projections.base import Cursor, add_to_rows, chunks, delete_rows, insert_rows, rows

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
CREATE TABLE IF NOT EXISTS bonus_external_rounds (
    round_id TEXT PRIMARY KEY,
    staked_cents BIGINT NOT NULL,
    returned_cents BIGINT NOT NULL,
    converted_cents BIGINT NOT NULL,
    ended INTEGER NOT NULL
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
    "bonus_external_rounds": ("round_id",),
    "bonus_daily": ("day",),
}
ROUND_SUMS = ("staked_cents", "returned_cents", "converted_cents")
SUMS = ("granted_cents", "converted_cents", "forfeited_cents", "expired_cents",
        "outstanding_change_cents")  # fmt: skip
TOPICS = (wallet.BONUS_GRANTED, wallet.BONUS_SETTLED, wallet.BONUS_CONVERTED,
          wallet.BONUS_FORFEITED, wallet.BONUS_EXPIRED, wallet.ENDED_BONUS_RELEASED,
          wallet.STAKE_TAKEN, wallet.CREDITED)  # fmt: skip
# A third-party game's bet, win and rollback (rules.md 10) move bonus money at once;
# the revenue report counts its round on the day it ends (projections/revenue.py), a
# win after that on its own day, and so does the round's bonus part here.
_THIRD_PARTY = (wallet.STAKE_TAKEN, wallet.CREDITED)
EXTERNAL_COLUMNS = ("round_id", "staked_cents", "returned_cents", "converted_cents", "ended")
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
        # Providers' rounds' bonus moves and ends, in log order, followed at the flush.
        self.external: list[Any] = []

    @staticmethod
    def wants(topic: str) -> bool:
        return topic in TOPICS or topic == provider_round.ENDED

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic == provider_round.ENDED:
            self.external.append(event)
            return
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
        sums = self.days[(event.timestamp.date().isoformat(),)]
        sums[OUTSTANDING] += sum(
            cents for account, cents in event.postings if account.startswith("bonus:")
        )
        self.external.append(event)  # its round's result: at the flush
        if topic == wallet.STAKE_TAKEN:
            return
        to_house = sum(cents for account, cents in event.postings if account == "casino:bonus")
        sums[CONVERTED] += event.to_cash_cents
        sums[EXPIRED_COLUMN if event.bonus_status == EXPIRED else FORFEITED] += to_house

    def _follow_external(self, cursor: Cursor) -> None:
        """Each provider's round's bonus staked (bets less rollbacks, as the revenue
        report counts its stakes), returned and converted, kept until the round ends
        and counted on that day; a move after its end, on its own day."""
        kept = _external_rounds(cursor, {_round_of(event) for event in self.external})
        for event in self.external:
            round_id, day = _round_of(event), event.timestamp.date().isoformat()
            found = kept.get(round_id)
            if wallet.topic_of(event) == provider_round.ENDED:
                if found is not None and not found[3]:  # its first end, with bonus in it
                    self._count(round_id, day, found[:3])
                    kept[round_id] = [0, 0, 0, 1]
                continue
            found = kept.setdefault(round_id, [0, 0, 0, 0])
            moved = _bonus_moved(event)
            if found[3]:
                self._count(round_id, day, moved)
            else:
                found[:3] = [a + b for a, b in zip(found[:3], moved, strict=True)]
        rows_kept = [(round_id, *values) for round_id, values in kept.items()]
        updated = ", ".join(f"{c} = excluded.{c}" for c in EXTERNAL_COLUMNS[1:])
        insert_rows(cursor, "bonus_external_rounds", EXTERNAL_COLUMNS, rows_kept,
                    f"ON CONFLICT (round_id) DO UPDATE SET {updated}")  # fmt: skip
        self.external = []

    def _count(self, round_id: str, day: str, amounts: list[int]) -> None:
        result = self.rounds[(round_id, day)]
        result[:] = [a + b for a, b in zip(result, amounts, strict=True)]

    def flush(self, cursor: Cursor) -> None:
        self._follow_external(cursor)
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


def _round_of(event: Any) -> str:
    """The provider's round a wallet's move or a round's end is of."""
    if wallet.topic_of(event) == provider_round.ENDED:
        return str(event.originator_id)
    return str(event.round_id)


def _bonus_moved(event: Any) -> list[int]:
    """A provider's call's bonus part: staked (a rollback takes its bet's back off the
    stake), returned, and of it converted to cash."""
    bonus = int(event.bonus_cents)
    if wallet.topic_of(event) == wallet.STAKE_TAKEN:
        return [bonus, 0, 0]
    if event.kind == "rollback":
        return [-bonus, 0, event.to_cash_cents]
    return [0, bonus, event.to_cash_cents]


def _external_rounds(cursor: Cursor, round_ids: set[str]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for chunk in chunks(sorted(round_ids)):
        for round_id, *values in rows(
            cursor,
            f"SELECT {', '.join(EXTERNAL_COLUMNS)} FROM bonus_external_rounds"
            f" WHERE round_id IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            found[str(round_id)] = [int(value) for value in values]
    return found


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
