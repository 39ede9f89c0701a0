"""Multi-player tables through the application, on the in-memory store: seats, a coup
settling every wallet in one save, disconnects, the idle timeout, and choices owed
to others made by them or, once due, by the system (rules.md 2.2, 4)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import pytest

from domain.any_round import Dealt
from domain.application import CasinoApplication
from domain.errors import InvalidPlayerId, NotSeated, NotYourDecision, SeatTaken, UnknownSeat
from domain.settings import GameSettings, TableGame, TableSettings
from domain.tables import games
from domain.tables.tableau import TableGameRules
from infra.commands import with_commands
from tests.domain.tables.test_coup import CHOOSING, FIVE

NOW = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.UTC)
EXAMPLE = ["10", "K", "3", "10", "10", "Q"]  # player wins, 3 to 0


def highest_stake_plays(
    bets: Mapping[str, Mapping[str, int]], order: Sequence[str], banker: str | None
) -> dict[str, str]:
    staked = [(-sum(bets[p].values()), order.index(p), p) for p in bets]
    return {"punto": min(staked)[2]}


CHOOSING_AT_A_TABLE = TableGameRules(**{**vars(CHOOSING), "choosers": highest_stake_plays})


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime.datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Iterator[CasinoApplication]:
    monkeypatch.setitem(games.RULES, "choosing", CHOOSING_AT_A_TABLE)
    table_games = {
        "punto_banco": TableGame("punto_banco", 8, 8, 100, 100_000),
        "choosing": TableGame("choosing", 8, 8, 100, 100_000),
    }
    settings = GameSettings(tables=TableSettings(games=table_games), test_mode=True)
    application = with_commands(games=settings, clock=clock)
    for name in ("ann", "bob", "cat"):
        application.register_player(name, name.title())
        application.deposit(name, "real", 100_000)
    yield application
    application.close()


def seated(app: CasinoApplication, game: str = "punto_banco") -> str:
    table = app.open_table(game, "real").result
    assert table is not None
    for seat, name in enumerate(("ann", "bob", "cat"), start=1):
        app.sit_at_table(table.table_id, name, str(seat))
    return table.table_id


def coup_at(app: CasinoApplication, table_id: str, shoe: list[str] = EXAMPLE) -> str:
    coup = app.open_coup(table_id, shoe).result
    assert coup is not None
    return coup.round_id


def balances(app: CasinoApplication) -> dict[str, tuple[int, int]]:
    wallets = {name: app.wallet(name, "real") for name in ("ann", "bob", "cat")}
    return {name: (w.balance_cents, w.held_cents) for name, w in wallets.items()}


def test_a_seat_is_taken_once_and_exists_at_the_tables_game() -> None:
    application = with_commands()
    application.register_player("ann", "Ann")
    application.register_player("bob", "Bob")
    table = application.open_table("punto_banco", "real").result
    assert table is not None
    application.sit_at_table(table.table_id, "ann", "7")
    with pytest.raises(SeatTaken):
        application.sit_at_table(table.table_id, "bob", "7")
    for seat in ("13", "16", "R1"):
        with pytest.raises(UnknownSeat):
            application.sit_at_table(table.table_id, "bob", seat)
    assert application.player("ann").table_seats == {table.table_id: "7"}


def test_a_coup_settles_every_player_against_the_bank_in_one_save(app: CasinoApplication) -> None:
    round_id = coup_at(app, seated(app))
    app.place_bet(round_id, "player", 1000, player_id="ann")
    app.place_bet(round_id, "banker", 2000, player_id="bob")
    with pytest.raises(InvalidPlayerId):
        app.place_bet(round_id, "tie", 500)
    assert balances(app) == {"ann": (100_000, 1000), "bob": (100_000, 2000), "cat": (100_000, 0)}
    app.deal(round_id)
    assert balances(app) == {"ann": (101_000, 0), "bob": (98_000, 0), "cat": (100_000, 0)}
    assert (app.wallet("ann", "real").points, app.wallet("bob", "real").points) == (10, 20)


def test_a_bet_by_someone_not_seated_is_refused(app: CasinoApplication) -> None:
    table_id = seated(app)
    app.leave_seat(table_id, "cat")
    round_id = coup_at(app, table_id)
    with pytest.raises(NotSeated):
        app.place_bet(round_id, "player", 1000, player_id="cat")


def test_a_disconnect_leaves_the_bets_standing_and_frees_the_seat_when_the_coup_ends(
    app: CasinoApplication,
) -> None:
    table_id = seated(app)
    round_id = coup_at(app, table_id)
    app.place_bet(round_id, "player", 1000, player_id="ann")
    affected = app.disconnect("ann").result
    assert affected == [{"round_id": round_id, "effect": "bets stand; the coup goes on"}]
    assert app.table(table_id).seats == {"1": "ann", "2": "bob", "3": "cat"}
    app.disconnect("cat")  # no stake in the coup: the seat frees at once
    assert "3" not in app.table(table_id).seats
    app.deal(round_id)
    assert app.table(table_id).seats == {"2": "bob"}
    assert balances(app)["ann"] == (101_000, 0)
    assert app.player("ann").table_seats == {}


def test_the_idle_timeout_voids_a_coup_never_dealt_returning_every_stake(
    app: CasinoApplication, clock: Clock
) -> None:
    table_id = seated(app)
    round_id = coup_at(app, table_id)
    app.place_bet(round_id, "player", 1000, player_id="ann")
    app.place_bet(round_id, "tie", 500, player_id="bob")
    assert app.end_idle_round(round_id, NOW - datetime.timedelta(days=1)).result is False
    assert app.end_idle_round(round_id, datetime.datetime.now(datetime.UTC)).result is True
    assert app.round(round_id).status == "voided"
    assert balances(app) == {name: (100_000, 0) for name in ("ann", "bob", "cat")}
    assert app.table(table_id).status == "open"


def test_a_choice_is_owed_by_whoever_plays_the_hand_and_made_by_them(
    app: CasinoApplication, clock: Clock
) -> None:
    round_id = coup_at(app, seated(app, "choosing"), FIVE)
    app.place_bet(round_id, "player", 1000, player_id="ann")
    app.place_bet(round_id, "player", 2000, player_id="bob")  # the highest stake plays
    coup: Any = cast(Dealt, app.deal(round_id).result).round
    assert coup.pending["player_id"] == "bob"
    assert coup.pending["deadline"] == (NOW + datetime.timedelta(seconds=30)).isoformat()
    with pytest.raises(NotYourDecision):
        app.act(round_id, None, 0, "stand", player_id="ann")
    coup = app.act(round_id, None, 0, "stand", player_id="bob").result
    assert coup.decisions == [
        {"hand": "player", "action": "stand", "player_id": "bob", "by": "player"}
    ]
    assert balances(app)["bob"] == (98_000, 0)  # 5 against the banker's 9


def test_a_choice_due_is_made_by_the_system_and_not_before(
    app: CasinoApplication, clock: Clock
) -> None:
    round_id = coup_at(app, seated(app, "choosing"), FIVE)
    app.place_bet(round_id, "player", 1000, player_id="ann")
    app.deal(round_id)
    assert app.choose_when_due(round_id, NOW + datetime.timedelta(seconds=29)).result is False
    assert app.choose_when_due(round_id, NOW + datetime.timedelta(seconds=30)).result is True
    coup: Any = app.round(round_id)
    assert coup.decisions[0]["by"] == "system" and coup.status == "settled"


def test_a_disconnected_participant_s_choice_is_made_by_the_system_at_once(
    app: CasinoApplication,
) -> None:
    round_id = coup_at(app, seated(app, "choosing"), FIVE)
    app.place_bet(round_id, "player", 1000, player_id="ann")
    app.deal(round_id)
    app.disconnect("ann")
    coup: Any = app.round(round_id)
    assert coup.decisions == [
        {"hand": "player", "action": "draw", "player_id": "ann", "by": "system"}
    ]
    assert coup.status == "settled"
