"""Revenue and return to player per day, mode, game and variant (api.md, GET
/v1/reports/revenue and /v1/reports/rtp; docs/rules.md 7).

Fed by the rounds' own events: `Opened` says the game, variant, mode, shoe and who
banks; each `PayoutMade` a stake and what it returned; `CommissionCharged` the
casino's take; `Settled` ends the round, and the day it settled is the day it counts
for. A round's payouts and its end are one save, but a batch of the log may end inside
a save, so a round not over at the end of a batch waits in `revenue_open_rounds`.

The sums of squares the RTP interval needs are exact integers in cents squared
(NUMERIC columns). A batch adds them up in memory before writing; on SQLite that sum
must stay under 2^63, so one round may return up to about $960,000 (a thousand such
rounds in one batch): ten times what the largest default limit lets a round return.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from domain import wallet
from domain.blackjack import round as blackjack_round
from domain.providers import round as provider_round
from domain.rtp import BACCARAT, BLACKJACK, BLACKJACK_SPOT, EXTERNAL, UNDECLARED, Rules, Tally
from domain.tables import coup, old_rounds
from projections.base import Cursor, add_to_rows, chunks, delete_rows, insert_rows, rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS revenue_daily (
    mode TEXT NOT NULL,
    day TEXT NOT NULL,
    game TEXT NOT NULL,
    variant TEXT NOT NULL,
    rounds BIGINT NOT NULL,
    stakes_cents BIGINT NOT NULL,
    returns_cents BIGINT NOT NULL,
    commission_cents BIGINT NOT NULL,
    ggr_cents BIGINT NOT NULL,
    return_squares NUMERIC NOT NULL,
    return_stakes NUMERIC NOT NULL,
    stake_squares NUMERIC NOT NULL,
    PRIMARY KEY (mode, day, game, variant)
);
CREATE TABLE IF NOT EXISTS revenue_spots (
    mode TEXT NOT NULL,
    day TEXT NOT NULL,
    game TEXT NOT NULL,
    variant TEXT NOT NULL,
    decks INTEGER NOT NULL,
    tie_pays INTEGER NOT NULL,
    spot TEXT NOT NULL,
    stakes_cents BIGINT NOT NULL,
    returns_cents BIGINT NOT NULL,
    PRIMARY KEY (mode, day, game, variant, decks, tie_pays, spot)
);
CREATE TABLE IF NOT EXISTS revenue_open_rounds (
    round_id TEXT PRIMARY KEY,
    mode TEXT NOT NULL,
    game TEXT NOT NULL,
    variant TEXT NOT NULL,
    decks INTEGER NOT NULL,
    tie_pays INTEGER NOT NULL,
    house_banked INTEGER NOT NULL,
    commission_cents BIGINT NOT NULL,
    spots TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS revenue_external_rounds (
    round_id TEXT PRIMARY KEY,
    mode TEXT NOT NULL,
    variant TEXT NOT NULL,
    spot TEXT NOT NULL
);
"""
# Each table with its primary key.
TABLES = {
    "revenue_daily": ("mode", "day", "game", "variant"),
    "revenue_spots": ("mode", "day", "game", "variant", "decks", "tie_pays", "spot"),
    "revenue_open_rounds": ("round_id",),
    "revenue_external_rounds": ("round_id",),
}
DAY_KEY = ("mode", "day", "game", "variant")
DAY_SUMS = ("rounds", "stakes_cents", "returns_cents", "commission_cents", "ggr_cents",
            "return_squares", "return_stakes", "stake_squares")  # fmt: skip
SPOT_KEY = (*DAY_KEY, "decks", "tie_pays", "spot")
OPEN_COLUMNS = ("round_id", "mode", "game", "variant", "decks", "tie_pays", "house_banked",
                "commission_cents", "spots")  # fmt: skip
ROWS_MAX = 10_000  # rows of one revenue report: 27 years of days at one game

OPENED = (old_rounds.OPENED, blackjack_round.OPENED, coup.OPENED, provider_round.OPENED)
PAYOUTS = (old_rounds.PAYOUT_MADE, blackjack_round.PAYOUT_MADE, coup.PAYOUT_MADE)
COMMISSIONS = (old_rounds.COMMISSION_CHARGED, coup.COMMISSION_CHARGED)
SETTLED = (old_rounds.SETTLED, blackjack_round.SETTLED, coup.SETTLED)
VOIDED = (old_rounds.VOIDED, blackjack_round.VOIDED, coup.VOIDED)
# A provider's round (rules.md 10): its money as it moves, counted when it ends; a win
# after its end (one ended for want of calls) counts on the day it lands.
CALLS = (provider_round.BET_TAKEN, provider_round.WIN_PAID, provider_round.BET_ROLLED_BACK)
FOLLOWED = frozenset((*PAYOUTS, *COMMISSIONS, *SETTLED, *VOIDED, *CALLS, provider_round.ENDED))
EXTERNAL_COLUMNS = ("round_id", "mode", "variant", "spot")


@dataclass
class OpenRound:
    """A round's money so far: (stake, return) in cents per spot, return stake included."""

    mode: str
    rules: Rules
    house_banked: bool
    commission_cents: int = 0
    spots: dict[str, list[int]] = field(default_factory=dict)

    def paid(self, spot: str, stake_cents: int, net_cents: int) -> None:
        money = self.spots.setdefault(spot, [0, 0])
        money[0] += stake_cents
        money[1] += stake_cents + net_cents

    def ggr_cents(self) -> int:
        """Gross gaming revenue (rules.md 7): what the house won where it banks, and
        the commission wherever one was charged."""
        stakes = sum(stake for stake, _ in self.spots.values())
        returns = sum(back for _, back in self.spots.values())
        return self.commission_cents + (stakes - returns if self.house_banked else 0)


def opened_round(event: Any) -> OpenRound:
    topic = wallet.topic_of(event)
    if topic == provider_round.OPENED:
        # The house banks it; its one spot is the return its provider declared.
        spot = event.theoretical_rtp or UNDECLARED
        return OpenRound(event.mode, Rules(EXTERNAL, event.provider_id, 0, 0), True,
                         spots={spot: [0, 0]})  # fmt: skip
    if topic == blackjack_round.OPENED:
        # Blackjack's variant is its hall, as the round's answer says; a tie pays nothing.
        return OpenRound(event.mode, Rules(BLACKJACK, event.hall, event.decks, 0), True)
    # A P2P round has a dealer, a coup at a player-banked table a banker: else the house.
    banker = getattr(event, "dealer_id", None) or getattr(event, "banker_id", None)
    rules = Rules(BACCARAT, event.variant, event.decks, event.tie_pays)
    return OpenRound(event.mode, rules, banker is None)


def called(round_: OpenRound, event: Any) -> None:
    """A provider's call in its round: a stake taken, given back, or a win."""
    money = next(iter(round_.spots.values()))
    topic = wallet.topic_of(event)
    if topic == provider_round.BET_TAKEN:
        money[0] += event.amount_cents
    elif topic == provider_round.BET_ROLLED_BACK:
        money[0] -= event.amount_cents
    else:
        money[1] += event.amount_cents


def paid_out(round_: OpenRound, event: Any) -> None:
    if wallet.topic_of(event) != blackjack_round.PAYOUT_MADE:
        round_.paid(event.spot, event.stake_cents, event.net_cents)
        return
    # A box's stake: its hands' final stakes (doubles and splits), and insurance, which
    # the event gives only by its result: lost, the stake; won, twice the stake (2:1).
    insurance = event.insurance_net_cents
    stake = sum(hand["stake_cents"] for hand in event.hands)
    stake += -insurance if insurance < 0 else insurance // 2
    round_.paid(BLACKJACK_SPOT, stake, event.net_cents)


class Revenue:
    def __init__(self) -> None:
        self.events: list[Any] = []  # Of rounds, gathered; worked through at the flush.
        self.rounds: dict[str, OpenRound] = {}
        self.ended: set[str] = set()
        self.stored: set[str] = set()  # Rounds read from revenue_open_rounds.
        self.external: list[tuple[str, str, str, str]] = []  # providers' rounds opened
        # Providers' rounds over, by id: (mode, variant, spot), for a win that comes late.
        self.over: dict[str, tuple[str, str, str]] = {}
        self.days: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0] * len(DAY_SUMS))
        self.spots: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0, 0])

    @staticmethod
    def wants(topic: str) -> bool:
        return topic in OPENED or topic in FOLLOWED

    def apply(self, event: Any, position: int) -> None:
        topic = wallet.topic_of(event)
        if topic in OPENED:
            round_ = self.rounds[str(event.originator_id)] = opened_round(event)
            if topic == provider_round.OPENED:
                spot = next(iter(round_.spots))
                self.external.append(
                    (str(event.originator_id), event.mode, event.provider_id, spot)
                )
        elif topic in FOLLOWED:
            self.events.append(event)

    def flush(self, cursor: Cursor) -> None:
        insert_rows(cursor, "revenue_external_rounds", EXTERNAL_COLUMNS, self.external)
        self._load(cursor, {str(e.originator_id) for e in self.events} - self.rounds.keys())
        for event in self.events:
            if str(event.originator_id) in self.ended or str(event.originator_id) in self.over:
                self._late(event)
            else:
                self._follow(event)
        self._store(cursor)
        add_to_rows(cursor, "revenue_daily", DAY_KEY, DAY_SUMS, self.days)
        add_to_rows(
            cursor, "revenue_spots", SPOT_KEY, ("stakes_cents", "returns_cents"), self.spots
        )

    def _follow(self, event: Any) -> None:
        round_id = str(event.originator_id)
        round_ = self.rounds[round_id]
        topic = wallet.topic_of(event)
        if topic in CALLS:
            called(round_, event)
        elif topic in PAYOUTS:
            paid_out(round_, event)
        elif topic in COMMISSIONS:
            round_.commission_cents += event.commission_cents
        else:
            if topic in SETTLED or topic == provider_round.ENDED:
                self._count(round_, event.timestamp.date().isoformat())
            self.ended.add(round_id)

    def _late(self, event: Any) -> None:
        """A provider's call after its round was counted: a win, on the day it lands (a
        second end changes nothing)."""
        if wallet.topic_of(event) != provider_round.WIN_PAID:
            return
        round_id = str(event.originator_id)
        found = self.rounds.get(round_id)
        if found is not None:
            mode, variant, spot = found.mode, found.rules.variant, next(iter(found.spots))
        else:
            mode, variant, spot = self.over[round_id]
        key = (mode, event.timestamp.date().isoformat(), EXTERNAL, variant)
        cents = event.amount_cents
        # Its returns and the house's loss of them; in the interval's moments, a return of
        # its own on no stake. Not a correction of its round's (stake, return), counted on
        # the day the round ended: over a period without that day, a correction alone
        # is no sum of squares and the variance could come out negative (rules.md 7).
        late = (0, 0, cents, 0, -cents, cents * cents, 0, 0)
        self.days[key] = [a + b for a, b in zip(self.days[key], late, strict=True)]
        self.spots[(*key, 0, 0, spot)][1] += cents

    def _count(self, round_: OpenRound, day: str) -> None:
        rules = round_.rules
        key = (round_.mode, day, rules.game, rules.variant)
        tally = Tally()
        tally.add_round(rules, {spot: (m[0], m[1]) for spot, m in round_.spots.items()})
        sums = (tally.rounds, tally.stakes_cents, tally.returns_cents, round_.commission_cents,
                round_.ggr_cents(), tally.return_squares, tally.return_stakes,
                tally.stake_squares)  # fmt: skip
        self.days[key] = [a + b for a, b in zip(self.days[key], sums, strict=True)]
        for spot, (stake, returned) in round_.spots.items():
            money = self.spots[(*key, rules.decks, rules.tie_pays, spot)]
            money[0] += stake
            money[1] += returned

    def _load(self, cursor: Cursor, round_ids: set[str]) -> None:
        """Rounds opened in an earlier batch and not over then."""
        for chunk in chunks(sorted(round_ids)):
            for row in rows(
                cursor,
                f"SELECT {', '.join(OPEN_COLUMNS)} FROM revenue_open_rounds"
                f" WHERE round_id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ):
                round_id, mode, game, variant, decks, tie_pays, banked, commission, spots = row
                rules = Rules(str(game), str(variant), int(decks), int(tie_pays))
                self.rounds[str(round_id)] = OpenRound(
                    str(mode), rules, bool(banked), int(commission), json.loads(str(spots))
                )
                self.stored.add(str(round_id))
        self._load_over(cursor, round_ids - self.rounds.keys())
        missing = round_ids - self.rounds.keys() - self.over.keys()
        assert not missing, f"rounds with events but never opened: {sorted(missing)[:5]}"

    def _load_over(self, cursor: Cursor, round_ids: set[str]) -> None:
        """Providers' rounds counted in an earlier batch: a win may still land."""
        for chunk in chunks(sorted(round_ids)):
            for round_id, mode, variant, spot in rows(
                cursor,
                "SELECT round_id, mode, variant, spot FROM revenue_external_rounds"
                f" WHERE round_id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ):
                self.over[str(round_id)] = (str(mode), str(variant), str(spot))

    def _store(self, cursor: Cursor) -> None:
        waiting = [
            (round_id, r.mode, r.rules.game, r.rules.variant, r.rules.decks, r.rules.tie_pays,
             int(r.house_banked), r.commission_cents, json.dumps(r.spots, sort_keys=True))
            for round_id, r in self.rounds.items() if round_id not in self.ended
        ]  # fmt: skip
        insert_rows(
            cursor,
            "revenue_open_rounds",
            OPEN_COLUMNS,
            waiting,
            "ON CONFLICT (round_id) DO UPDATE SET commission_cents = excluded.commission_cents,"
            " spots = excluded.spots",
        )
        gone = sorted(self.ended & self.stored)
        if gone:
            delete_rows(cursor, "revenue_open_rounds", "round_id", gone)


# The reports' reads.


def revenue_rows(
    cursor: Cursor, mode: str, first_day: str, last_day: str, month: bool
) -> list[tuple[Any, ...]]:
    """(period, game, variant, rounds, stakes, returns, ggr, commission) per period
    (a day, or a month with `month`), game and variant, oldest first; at most
    ROWS_MAX + 1 rows, so a caller can tell there were more."""
    period = "substr(day, 1, 7)" if month else "day"
    found = rows(
        cursor,
        f"SELECT {period}, game, variant, SUM(rounds), SUM(stakes_cents), SUM(returns_cents),"
        " SUM(ggr_cents), SUM(commission_cents) FROM revenue_daily"
        " WHERE mode = ? AND day >= ? AND day <= ?"
        f" GROUP BY {period}, game, variant ORDER BY {period}, game, variant LIMIT ?",
        (mode, first_day, last_day, ROWS_MAX + 1),
    )
    return [(str(p), str(g), str(v), *(int(n) for n in sums)) for p, g, v, *sums in found]


def revenue_total(cursor: Cursor, mode: str, first_day: str, last_day: str) -> tuple[int, ...]:
    """(rounds, stakes, returns, ggr, commission) of every game over the days."""
    cursor.execute(
        "SELECT COALESCE(SUM(rounds), 0), COALESCE(SUM(stakes_cents), 0),"
        " COALESCE(SUM(returns_cents), 0), COALESCE(SUM(ggr_cents), 0),"
        " COALESCE(SUM(commission_cents), 0) FROM revenue_daily"
        " WHERE mode = ? AND day >= ? AND day <= ?",
        (mode, first_day, last_day),
    )
    row = cursor.fetchone()
    assert row is not None
    return tuple(int(n) for n in row)


def rtp_tally(
    cursor: Cursor, mode: str, game: str, variant: str | None, first_day: str, last_day: str
) -> Tally:
    """The settled rounds of a game (and variant, or all its variants) over the days.
    The moments are summed here, not in SQL, because they outgrow SQLite's integers."""
    where = " WHERE mode = ? AND game = ? AND day >= ? AND day <= ?"
    params: list[Any] = [mode, game, first_day, last_day]
    if variant is not None:
        where += " AND variant = ?"
        params.append(variant)
    tally = Tally()
    for row in rows(cursor, f"SELECT {', '.join(DAY_SUMS)} FROM revenue_daily{where}", params):
        rounds, stakes, returns, _, _, *moments = (int(n) for n in row)
        tally.add(rounds, stakes, returns, *moments)
    for variant_, decks, tie_pays, spot, stakes in rows(
        cursor,
        "SELECT variant, decks, tie_pays, spot, SUM(stakes_cents) FROM revenue_spots"
        f"{where} GROUP BY variant, decks, tie_pays, spot",
        params,
    ):
        rules = Rules(game, str(variant_), int(decks), int(tie_pays))
        tally.add_spot(rules, str(spot), int(stakes))
    return tally
