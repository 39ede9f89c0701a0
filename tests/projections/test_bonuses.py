"""The bonus read model's part of the revenue report for a provider's round (rules.md
9, 10), fed directly on an in-memory SQLite database: the round's bonus staked (bets
less rollbacks), returned and converted count on the day the round ends, as its cash
does in the revenue model, and a win after its end on its own day, wherever the
batches fall."""

from __future__ import annotations

import datetime
import sqlite3
from typing import Any

import pytest

from domain import wallet
from domain.providers import round as provider_round
from projections import bonuses
from projections.balances import Owners
from tests.projections.test_revenue import NOON, event, kind_of

ROUND = "6f0c1d9e-0000-4000-8000-000000000001"
NEXT_DAY = NOON + datetime.timedelta(days=1)
LATER_DAY = NOON + datetime.timedelta(days=2)


def moved(topic: str, at: datetime.datetime, bonus: int, **data: Any) -> Any:
    """A wallet's move in the round: its bonus part, and its postings on the bonus."""
    sign = -1 if topic == wallet.STAKE_TAKEN else 1
    postings = [["bonus:alice", sign * bonus], ["casino:games:bonusy", -sign * bonus]]
    return kind_of(topic)(originator_id="wallet-of-alice", timestamp=at, round_id=ROUND,
                          bonus_cents=bonus, postings=postings, **data)  # fmt: skip


def credited(kind: str, at: datetime.datetime, bonus: int) -> Any:
    return moved(wallet.CREDITED, at, bonus, kind=kind, to_cash_cents=0, bonus_status=None)


PLAYED = [
    moved(wallet.STAKE_TAKEN, NOON, 4_000),  # a bet of 60.00: 20.00 cash, 40.00 bonus
    moved(wallet.STAKE_TAKEN, NOON, 1_000),  # 10.00, all bonus
    credited("rollback", NOON, 1_000),  # ... taken back: it was never staked
    credited("win", NOON, 2_000),  # 30.00 won: 20.00 of it to the bonus
    event(provider_round.ENDED, ROUND, NEXT_DAY),
    credited("win", LATER_DAY, 500),  # a late win
]


def results(batch: int) -> list[tuple[Any, ...]]:
    cursor = sqlite3.connect(":memory:").cursor()
    cursor.executescript(bonuses.SCHEMA)
    view = bonuses.Bonuses(Owners())
    for position, one in enumerate(PLAYED, start=1):
        view.apply(one, position)
        if position % batch == 0:
            view.flush(cursor)
            view = bonuses.Bonuses(Owners())
    view.flush(cursor)
    cursor.execute(
        "SELECT day, staked_cents, returned_cents, converted_cents FROM bonus_round_results"
        " WHERE staked_cents <> 0 OR returned_cents <> 0 ORDER BY day"
    )
    return cursor.fetchall()


@pytest.mark.parametrize("batch", [1, 2, 4, 1_000])
def test_a_providers_round_counts_its_bonus_part_on_the_day_it_ends(batch: int) -> None:
    assert results(batch) == [("2026-02-16", 4_000, 2_000, 0), ("2026-02-17", 0, 500, 0)]
