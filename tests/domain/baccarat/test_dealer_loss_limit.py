"""A P2P dealer past a loss limit is dealt no new round (rules.md 7), whatever the
rounds, stakes, outcomes and hours between them: a manual confirm is refused, and
auto-confirm opens nothing in the save that settles the round that took them past.
On the in-memory store, the clock passed in."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.application import CasinoApplication
from domain.errors import LossLimitExceeded
from domain.protection_record import window_sum
from domain.settings import GameSettings
from infra.commands import with_commands
from tests.domain.tables.test_steps import NOW, Clock

DAY = datetime.timedelta(days=1)
HOUR = datetime.timedelta(hours=1)
# Certification shoes in dealing order (Player, Banker, Player, Banker): naturals.
OUTCOMES = {
    "player": ["9", "K", "K", "K"],
    "banker": ["K", "9", "K", "K"],
    "tie": ["9", "9", "K", "K"],
}


def dealing_table(clock: Clock, limit_cents: int, auto_confirm: bool) -> tuple[Any, str]:
    """Dan, who may lose `limit_cents` a day, deals at a type II table; Pat plays there."""
    app = with_commands(games=GameSettings(test_mode=True), clock=clock)
    for player in ("dan", "pat"):
        app.register_player(player, player.title())
        app.deposit(player, "real", 10_000_000)
    app.adjust_points("dan", "real", 1_000_000, "may deal")
    app.set_limits("dan", {"loss:day": limit_cents})
    table = app.sit_as_dealer("dan", "real", "II", auto_confirm).result
    assert table is not None
    app.join_as_player("pat", "real", "II")
    return app, table.table_id


def lost_today(app: CasinoApplication, clock: Clock) -> int:
    """What Dan has lost in the day's window: realized, stakes lost minus returns."""
    protection: Any = app.protection("dan")
    return window_sum(protection.losses, clock.now, DAY)


ROUNDS = st.lists(
    st.tuples(
        st.sampled_from(["player", "banker", "tie"]),  # the spot Pat bets on
        st.integers(min_value=5, max_value=200),  # dollars, within the table's limits
        st.sampled_from(sorted(OUTCOMES)),  # how a round confirmed by hand comes out
        st.integers(min_value=0, max_value=30),  # hours before it
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(
    limit_dollars=st.integers(min_value=0, max_value=300),
    auto_confirm=st.booleans(),
    rounds=ROUNDS,
)
def test_a_dealer_never_opens_a_round_while_past_a_loss_limit(
    limit_dollars: int, auto_confirm: bool, rounds: list[tuple[str, int, str, int]]
) -> None:
    clock = Clock()
    limit = limit_dollars * 100
    app, table_id = dealing_table(clock, limit, auto_confirm)
    try:
        for spot, dollars, outcome, hours in rounds:
            clock.now += hours * HOUR
            round_id = app.p2p_table(table_id).round_id
            if round_id is None:  # the table waits: the dealer confirms by hand
                past = lost_today(app, clock) > limit
                if past:
                    with pytest.raises(LossLimitExceeded):
                        app.confirm(table_id, OUTCOMES[outcome])
                    continue
                opened = app.confirm(table_id, OUTCOMES[outcome]).result
                assert opened is not None
                round_id = opened.round_id
            auto = app.p2p_table(table_id).auto_confirm
            app.place_bet(round_id, spot, dollars * 100)
            app.deal(round_id)
            after = app.p2p_table(table_id)
            if lost_today(app, clock) > limit:
                assert after.round_id is None  # the settling save opened none
                assert after.auto_confirm is False  # the table waits, and says why
                assert not auto or "past the loss limit per day" in (after.notice or "")
                assert app.wallet("dan", "real").held_cents == 0
            else:
                assert (after.round_id is not None) == auto  # under the limit: as ever
    finally:
        app.close()


def test_matching_passes_over_a_dealer_past_a_loss_limit() -> None:
    # Given Dan, past his loss limit with his table waiting, and Eve dealing too,
    clock = Clock()
    app, table_id = dealing_table(clock, 0, auto_confirm=False)
    round_ = app.confirm(table_id, OUTCOMES["player"]).result
    assert round_ is not None
    app.place_bet(round_.round_id, "player", 1_000)
    app.deal(round_.round_id)  # Pat wins: Dan loses 10.18
    app.leave_table(table_id, "pat")
    app.register_player("eve", "Eve")
    app.deposit("eve", "real", 500_000)
    app.adjust_points("eve", "real", 100, "may deal")
    eves = app.sit_as_dealer("eve", "real", "II", True).result
    assert eves is not None
    # when Pat asks for a table, then he is seated with Eve, who waited less long,
    joined = app.join_as_player("pat", "real", "II").result
    assert joined is not None and joined.table_id == eves.table_id
    # and Dan may not sit down to deal again until his losses leave the window.
    with pytest.raises(LossLimitExceeded):
        app.sit_as_dealer("dan", "real", "II", False)
    assert clock.now == NOW
