"""The revenue read model fed directly, on an in-memory SQLite database: settlements
computed by the pure rules from seeded shoes, batches cut anywhere, days and months,
and the RTP report over 100,000 rounds agreeing with the exact figure."""

from __future__ import annotations

import datetime
import functools
import random
import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks import bench_blackjack_sim
from domain.baccarat.rules import BANKER, PLAYER, TIE, bet_net_cents, play_coup
from domain.blackjack import round as blackjack_round
from domain.cards import RANKS
from domain.providers import round as provider_round
from domain.rtp import figures
from domain.tables import old_rounds as baccarat_round
from infra import reports
from projections import bonuses, revenue, round_index

NOON = datetime.datetime(2026, 2, 15, 12, tzinfo=datetime.UTC)
HOUSE_SHOE = [rank for rank in RANKS for _ in range(4 * 8)]  # 8 decks; suits never matter


class Event(SimpleNamespace):
    TOPIC = ""


@functools.cache
def kind_of(topic: str) -> type[Event]:
    return type(topic.rsplit(".", 1)[-1], (Event,), {"TOPIC": topic})


def event(topic: str, round_id: str, at: datetime.datetime = NOON, **data: Any) -> Any:
    """A stand-in for the stored event: what the view reads of it, and its topic."""
    return kind_of(topic)(originator_id=round_id, timestamp=at, **data)


def house_round(
    round_id: str, bets: dict[str, int], cards: list[str], at: datetime.datetime
) -> Iterator[Any]:
    """The events of one settled house baccarat round, as the game records them."""
    outcome = play_coup(cards).outcome
    yield event(baccarat_round.OPENED, round_id, at, mode="real", variant="house", decks=8,
                tie_pays=8, dealer_id=None, player_id="alice")  # fmt: skip
    for spot, stake in bets.items():
        net = bet_net_cents(spot, stake, outcome, 8)
        yield event(baccarat_round.PAYOUT_MADE, round_id, at, spot=spot, stake_cents=stake,
                    net_cents=net)  # fmt: skip
    yield event(baccarat_round.SETTLED, round_id, at)


def feed(events: Iterator[Any], batch: int = 1000) -> sqlite3.Cursor:
    """Through the view as the projector would: a flush every `batch` events, wherever
    that falls, a round's events included."""
    cursor = sqlite3.connect(":memory:").cursor()
    cursor.executescript(revenue.SCHEMA + bonuses.SCHEMA + round_index.SCHEMA)
    view = revenue.Revenue()
    for position, one in enumerate(events, start=1):
        view.apply(one, position)
        if position % batch == 0:
            view.flush(cursor)
            view = revenue.Revenue()
    view.flush(cursor)
    return cursor


def simulated(rounds: int, seed: int) -> Iterator[Any]:
    rng = random.Random(seed)
    for number in range(rounds):
        spots = rng.sample((PLAYER, BANKER, TIE), rng.randint(1, 3))
        bets = {spot: 100 * rng.randint(1, 100) for spot in spots}
        yield from house_round(f"r{number}", bets, rng.sample(HOUSE_SHOE, 6), NOON)


def test_over_100000_rounds_the_actual_rtp_is_within_the_interval_of_the_exact_one() -> None:
    cursor = feed(simulated(100_000, seed=16))
    tally = revenue.rtp_tally(cursor, "real", "baccarat", "house", "2026-01-01", "2026-12-31")
    found = figures(tally)
    assert tally.rounds == 100_000
    assert found.interval is not None and found.theoretical is not None
    low, high = found.interval
    assert low <= 0 <= high  # the exact figure is within the interval of the actual one
    assert high - low < 0.02  # and the interval is narrow enough to mean something
    assert 0.9 < found.theoretical < 0.99
    cursor.execute("SELECT COUNT(*) FROM revenue_open_rounds")
    assert cursor.fetchone() == (0,)  # every round cut by a batch was finished later


def simulated_blackjack(rounds: int, seed: int) -> Iterator[Any]:
    """Rounds of one box played by basic strategy, settled by the game's own rules (the
    simulation the theoretical figure comes from, with another seed)."""
    rng, shoe = random.Random(seed), list(bench_blackjack_sim.SHOE)
    for number in range(rounds):
        rng.shuffle(shoe)
        net, staked = bench_blackjack_sim.play_round(shoe)
        round_id = f"b{number}"
        yield event(blackjack_round.OPENED, round_id, mode="real", hall="2", decks=2)
        yield event(blackjack_round.PAYOUT_MADE, round_id, box=1, insurance_net_cents=0,
                    hands=[{"stake_cents": staked}], net_cents=net)  # fmt: skip
        yield event(blackjack_round.SETTLED, round_id)


def test_blackjack_under_basic_strategy_agrees_with_the_simulated_figure() -> None:
    found = reports.rtp_report(feed(simulated_blackjack(20_000, seed=16)), "real", "blackjack",
                               "2", None, None)  # fmt: skip
    low, high = (Decimal(found["difference_ci95"][side]) for side in ("low", "high"))
    assert low <= 0 <= high
    assert found["theoretical_rtp"] == "0.998986"
    assert found["theoretical_source"].startswith("simulation")


def test_where_a_batch_ends_changes_no_figure() -> None:
    whole = feed(simulated(300, seed=3), batch=1_000_000)
    for batch in (1, 2, 7, 50):
        cut = feed(simulated(300, seed=3), batch=batch)
        for table in ("revenue_daily", "revenue_spots"):
            assert rows(cut, table) == rows(whole, table)


def rows(cursor: sqlite3.Cursor, table: str) -> list[Any]:
    cursor.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4")
    return cursor.fetchall()


def test_days_months_and_totals_to_date_follow_the_settlement_day() -> None:
    days = ("2025-12-31", "2026-01-31", "2026-02-01", "2026-02-15")
    played = []
    for number, day in enumerate(days):
        at = datetime.datetime.fromisoformat(f"{day}T23:59:00+00:00")
        # A $10 player bet that loses: banker 9 against player 0.
        played += house_round(f"r{number}", {PLAYER: 1000}, ["K", "9", "K", "K"], at)
    cursor = feed(iter(played))
    report = reports.revenue_report(
        cursor, "real", datetime.date(2026, 1, 1), datetime.date(2026, 2, 15), "month"
    )
    assert [(row["period"], row["rounds"], row["ggr"]) for row in report["rows"]] == [
        ("2026-01", 1, "10.00"),
        ("2026-02", 2, "20.00"),
    ]
    totals = {name: figures_["rounds"] for name, figures_ in report["totals"].items()}
    assert totals == {"period": 3, "mtd": 2, "ytd": 3, "ltd": 4}


def test_a_blackjack_boxs_stake_counts_its_doubles_splits_and_insurance() -> None:
    opened = event(blackjack_round.OPENED, "b", mode="real", hall="1", decks=2)
    lost = event(blackjack_round.PAYOUT_MADE, "b", box=1, insurance_net_cents=-500,
                 hands=[{"stake_cents": 2000, "net_cents": -2000}], net_cents=-2500)  # fmt: skip
    won = event(blackjack_round.PAYOUT_MADE, "b", box=2, insurance_net_cents=1000,
                hands=[{"stake_cents": 1000, "net_cents": -1000}], net_cents=0)  # fmt: skip
    cursor = feed(iter([opened, lost, won, event(blackjack_round.SETTLED, "b")]))
    found = reports.rtp_report(cursor, "real", "blackjack", "1", None, None)
    # A $20 doubled box with $5 insurance lost; a $10 box lost, its $5 insurance won 2:1.
    assert (found["stakes"], found["returns"]) == ("40.00", "15.00")


def test_a_voided_round_counts_for_nothing() -> None:
    opened, *_ = house_round("v", {PLAYER: 1000}, ["K", "9", "K", "K"], NOON)
    cursor = feed(iter([opened, event(baccarat_round.VOIDED, "v")]))
    assert rows(cursor, "revenue_daily") == rows(cursor, "revenue_open_rounds") == []


@pytest.mark.parametrize("rounds", [0, 1])
def test_too_few_rounds_have_no_interval(rounds: int) -> None:
    cursor = feed(simulated(rounds, seed=1))
    found = reports.rtp_report(cursor, "real", "baccarat", None, None, None)
    assert found["difference_ci95"] is None and found["rounds"] == rounds


def slot_round(round_id: str, stake: int, won: int, late: int) -> Iterator[Any]:
    """A provider's round: a bet, a win, its end for want of calls, and a win that lands
    the next day."""
    yield event(provider_round.OPENED, round_id, mode="real", provider_id="acme",
                theoretical_rtp="0.96")  # fmt: skip
    yield event(provider_round.BET_TAKEN, round_id, amount_cents=stake)
    yield event(provider_round.WIN_PAID, round_id, amount_cents=won)
    yield event(provider_round.ENDED, round_id)
    yield event(provider_round.WIN_PAID, round_id, NOON + datetime.timedelta(days=1),
                amount_cents=late)  # fmt: skip


def test_a_late_win_is_an_observation_of_its_own_on_its_day() -> None:
    """In the RTP interval's moments, a win after its round's end is a return on no
    stake on the day it lands (rules.md 7): every day's moments stay those of real
    (stake, return) pairs, so no period's variance can come out negative, wherever the
    batches fall."""
    played = [*slot_round("s1", 1_000, 700, 500), *slot_round("s2", 300, 0, 90)]
    for batch in (1, 2, 3, 1_000):
        cursor = feed(iter(played), batch=batch)
        cursor.execute(
            "SELECT day, rounds, stakes_cents, returns_cents, return_squares, return_stakes,"
            " stake_squares FROM revenue_daily ORDER BY day"
        )
        assert cursor.fetchall() == [
            ("2026-02-15", 2, 1_300, 700, 700**2, 1_000 * 700, 1_000**2 + 300**2),
            ("2026-02-16", 0, 0, 590, 500**2 + 90**2, 0, 0),
        ]


def test_a_period_of_late_wins_alone_has_an_interval() -> None:
    """Rounds ended one day, their wins landing the next beside rounds of that day: the
    next day's report has an interval (a correction of the earlier rounds' moments
    alone could make its variance negative)."""
    late = [*slot_round("s1", 10_000, 0, 1_000)]
    next_day = NOON + datetime.timedelta(days=1)
    for n, (stake, won) in enumerate(((100, 0), (100, 90))):
        late += [
            event(provider_round.OPENED, f"t{n}", next_day, mode="real", provider_id="acme",
                  theoretical_rtp="0.96"),
            event(provider_round.BET_TAKEN, f"t{n}", next_day, amount_cents=stake),
            event(provider_round.WIN_PAID, f"t{n}", next_day, amount_cents=won),
            event(provider_round.ENDED, f"t{n}", next_day),
        ]  # fmt: skip
    cursor = feed(iter(late))
    day = next_day.date()
    found = reports.rtp_report(cursor, "real", "external", "acme", day, day)
    assert found["rounds"] == 2 and found["difference_ci95"] is not None
