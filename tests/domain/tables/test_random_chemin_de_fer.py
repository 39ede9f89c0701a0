"""Random chemin de fer sessions (Hypothesis, rules.md 2.3): banks put up, declined and
withdrawn, bets and bancos, choices made or left to the system. Between coups nothing
is held but the bank, the bank the table shows is the one its banker's wallet holds,
and every cent a player lost went to another player or to the casino's commission."""

from __future__ import annotations

import contextlib
import datetime
from typing import cast

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from domain.any_round import Dealt
from domain.application import CasinoApplication
from domain.errors import DomainError
from domain.tables.coup import IN_PLAY, Coup
from domain.tables.table import Table
from infra.commands import with_commands

PLAYERS = ("p1", "p2", "p3", "p4")
START_CENTS = 200_000
LATER = datetime.datetime(2100, 1, 1, tzinfo=datetime.UTC)

moves = st.lists(
    st.one_of(
        st.tuples(st.just("bank"), st.sampled_from(PLAYERS), st.integers(20, 400)),
        *[st.tuples(st.just("accept"), st.just(""), st.integers(20, 400))] * 2,
        st.tuples(st.just("decline"), st.sampled_from(PLAYERS), st.just(0)),
        st.tuples(st.just("withdraw"), st.sampled_from(PLAYERS), st.just(0)),
        *[st.tuples(st.just("bet"), st.sampled_from(PLAYERS), st.integers(1, 60))] * 4,
        st.tuples(st.just("banco"), st.sampled_from(PLAYERS), st.just(0)),
        *[st.tuples(st.just("deal"), st.sampled_from(("draw", "stand", "late")), st.just(0))] * 3,
    ),
    min_size=15,
    max_size=60,
)


def step(
    app: CasinoApplication, table_id: str, coup: str | None, move: tuple[str, str, int]
) -> str | None:
    kind, who, amount = move
    if kind == "accept":  # whoever the bank is offered to takes it
        who = app.table(table_id).bank_offered_to or ""
        kind = "bank"
    if kind == "bank":
        app.put_up_bank(table_id, who, amount * 100)
    elif kind == "decline":
        app.decline_bank(table_id, who)
    elif kind == "withdraw":
        app.withdraw_bank(table_id, who)
    elif kind in ("bet", "banco"):
        coup = coup or cast(Coup, app.open_coup(table_id).result).round_id
        if kind == "bet":
            app.place_bet(coup, "punto", amount * 100, player_id=who)
        else:
            app.call_banco(coup, who)
    elif coup is not None:
        played = cast(Coup, cast(Dealt, app.deal(coup).result).round)
        while played.status == IN_PLAY and played.pending is not None:
            if who == "late":  # the system chooses once the deadline is reached
                app.choose_when_due(
                    coup, datetime.datetime.fromisoformat(played.pending["deadline"])
                )
            else:
                app.act(coup, None, 0, who, player_id=played.pending["player_id"])
            played = cast(Coup, app.round(coup))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(20, 400), moves)
def test_the_bank_and_the_books_hold_through_random_sessions(
    first_bank: int, plays: list[tuple[str, str, int]]
) -> None:
    app = with_commands()
    for player_id in PLAYERS:
        app.register_player(player_id, player_id)
        app.deposit(player_id, "real", START_CENTS)
    table = cast(Table, app.open_table("chemin_de_fer", "real").result)
    for seat, player_id in enumerate(PLAYERS, start=1):
        app.sit_at_table(table.table_id, player_id, str(seat))
    app.put_up_bank(table.table_id, PLAYERS[0], first_bank * 100)  # offered to the first seated
    for move in plays:
        with contextlib.suppress(DomainError):  # refused, and nothing changed
            step(app, table.table_id, app.table(table.table_id).round_id, move)
    coup = app.table(table.table_id).round_id
    if coup is not None and app.round(coup).status == "open":
        app.end_idle_round(coup, LATER)  # the idle timeout voids an undealt coup
    table = app.table(table.table_id)
    wallets = {p: app.wallet(p, "real") for p in PLAYERS}
    for player_id, wallet in wallets.items():
        bank = table.bank_cents if player_id == table.banker else 0
        assert wallet.held_cents == bank == wallet.bank_at(table.table_id)
    coups = _commissions(app, table)
    event(f"coups: {min(len(coups), 5)}")
    commission = sum(coup.commission_cents for coup in coups)
    assert sum(w.balance_cents for w in wallets.values()) == len(PLAYERS) * START_CENTS - commission
    app.close()


def _commissions(app: CasinoApplication, table: Table) -> list[Coup]:
    ended = [e.round_id for e in app.events.get(table.id) if type(e).__name__ == "CoupEnded"]
    return [cast(Coup, app.round(round_id)) for round_id in ended]
