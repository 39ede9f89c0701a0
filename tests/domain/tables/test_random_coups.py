"""Random coups at an American table, with players sitting down, betting, leaving and
disconnecting at random (Hypothesis): the house's result is exactly the players'
losses, nothing stays held once the coups end, and dealer points follow the stakes."""

from __future__ import annotations

from typing import cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.application import CasinoApplication
from domain.errors import DomainError
from domain.tables.coup import Coup
from domain.tables.table import Table
from infra.commands import with_commands

PLAYERS = tuple(f"p{n}" for n in range(6))
SEATS = ("1", "2", "3", "5", "8", "14", "15")
START_CENTS = 50_000

sit = st.tuples(st.just("sit"), st.sampled_from(PLAYERS), st.sampled_from(SEATS))
bet = st.tuples(
    st.just("bet"), st.sampled_from(PLAYERS), st.sampled_from(("player", "banker", "tie"))
)
actions = st.lists(
    st.one_of(
        sit,
        st.tuples(st.sampled_from(("leave", "disconnect")), st.sampled_from(PLAYERS), st.just("")),
        bet,
        bet,
        bet,
        st.tuples(st.just("deal"), st.just(""), st.just("")),
    ),
    max_size=60,
)
# Most games begin with a few players seated.
openings = st.lists(sit, min_size=2, max_size=6)


def played(app: CasinoApplication, steps: list[tuple[str, str, str]], dollars: list[int]) -> str:
    table = app.open_table("punto_banco", "real").result
    assert isinstance(table, Table)
    coup: str | None = None
    for (kind, who, what), amount in zip(steps, dollars * len(steps), strict=False):
        try:
            if kind == "sit":
                app.sit_at_table(table.table_id, who, what)
            elif kind == "leave":
                app.leave_seat(table.table_id, who)
            elif kind == "disconnect":
                app.disconnect(who)
            elif kind == "bet":
                coup = coup or cast(Coup, app.open_coup(table.table_id).result).round_id
                app.place_bet(coup, what, amount * 100, player_id=who)
            elif coup is not None:
                app.deal(coup)
                coup = None
        except DomainError:
            pass  # refused: seat taken, not seated, limits, ... - and nothing changed
    if coup is not None and app.round(coup).bets:
        app.deal(coup)
    return table.table_id


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(openings, actions, st.lists(st.integers(1, 400), min_size=1, max_size=8))
def test_the_house_wins_exactly_what_the_players_lose(
    seated: list[tuple[str, str, str]], steps: list[tuple[str, str, str]], dollars: list[int]
) -> None:
    app = with_commands()
    for player_id in PLAYERS:
        app.register_player(player_id, player_id)
        app.deposit(player_id, "real", START_CENTS)
    table_id = played(app, seated + steps, dollars)
    wallets = [app.wallet(player_id, "real") for player_id in PLAYERS]
    assert all(wallet.held_cents == 0 for wallet in wallets)
    players_result = sum(wallet.balance_cents - START_CENTS for wallet in wallets)
    coups = [cast(Coup, app.round(round_id)) for round_id in _coups_ended(app, table_id)]
    house_result = -sum(sum(coup.nets().values()) for coup in coups)
    assert house_result == -players_result
    staked = {p: 0 for p in PLAYERS}
    for coup in coups:
        for player_id in coup.bets:
            staked[player_id] += coup.stake_of(player_id) // 100
    assert {w.player_id: w.points for w in wallets} == staked
    assert app.table(table_id).leaving == []
    app.close()


def _coups_ended(app: CasinoApplication, table_id: str) -> list[str]:
    table_events = list(app.events.get(app.table(table_id).id))
    return [e.round_id for e in table_events if type(e).__name__ == "CoupEnded"]
