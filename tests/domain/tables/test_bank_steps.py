"""The bank at chemin de fer and en banque through the application, on the in-memory
store: a banco binds, a tie is no lost banco, banco suivi and the three lost bancos
each belong to one game, the offer of the bank goes round only the players still
there, and a house table has no bank to put up or call (rules.md 2.3, 2.4, 4)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from domain.application import CasinoApplication
from domain.errors import (
    BancoCalled,
    BancoRefused,
    HouseBanked,
    IllegalAction,
    InvalidLimits,
    NotOfferedTheBank,
    UnknownSeat,
)
from domain.settings import GameSettings
from infra.commands import with_commands
from tests.domain.tables.test_steps import NOW, Clock

PLAYERS = ("ann", "bob", "cat", "dan")
# Chemin de fer deals punto, banker, punto, banker.
PUNTO_WINS = ["9", "K", "K", "Q"]  # a natural 9 against 0
BANKER_WINS = ["K", "9", "Q", "K"]  # 0 against a natural 9
TIED = ["9", "9", "K", "K"]  # 9 each
PUNTO_ON_5 = ["2", "10", "3", "7"]  # the punto 5, the playing punter chooses; banker 7
# En banque deals right, left, banker, twice; the banker's natural ends the coup.
RIGHT_WINS = ["9", "K", "8", "K", "Q", "K"]  # right 9, left 0, banker 8
RIGHT_TIES = ["9", "K", "9", "K", "Q", "K"]  # right 9, left 0, banker 9
BANKER_BEATS_BOTH = ["K", "K", "9", "K", "Q", "K"]  # right 0, left 0, banker 9


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(clock: Clock) -> Iterator[CasinoApplication]:
    application = with_commands(games=GameSettings(test_mode=True), clock=clock)
    for name in PLAYERS:
        application.register_player(name, name.title())
        application.deposit(name, "real", 1_000_000)
    yield application
    application.close()


def table(app: CasinoApplication, game: str, *seats: tuple[str, str]) -> str:
    opened = app.open_table(game, "real").result
    assert opened is not None
    for player_id, seat in seats:
        app.sit_at_table(opened.table_id, player_id, seat)
    return opened.table_id


def chemin_de_fer(app: CasinoApplication) -> str:
    """Ann, Bob and Cat in seats 1-3; Ann was offered the bank and puts up $100."""
    table_id = table(app, "chemin_de_fer", ("ann", "1"), ("bob", "2"), ("cat", "3"))
    app.put_up_bank(table_id, "ann", 10_000)
    return table_id


def en_banque(app: CasinoApplication) -> str:
    """Ann on the right puts up a $200 bank; Bob on the left, Cat on the right."""
    table_id = table(app, "en_banque", ("ann", "R1"), ("bob", "L1"), ("cat", "R2"))
    app.put_up_bank(table_id, "ann", 20_000)
    return table_id


def coup(app: CasinoApplication, table_id: str, shoe: list[str]) -> str:
    opened = app.open_coup(table_id, shoe).result
    assert opened is not None
    return opened.round_id


def funds(app: CasinoApplication, player_id: str) -> tuple[int, int]:
    wallet = app.wallet(player_id, "real")
    return wallet.balance_cents, wallet.held_cents


def test_a_called_banco_binds_until_the_coup_is_over(app: CasinoApplication) -> None:
    round_id = coup(app, chemin_de_fer(app), BANKER_WINS)
    app.call_banco(round_id, "cat")
    before = funds(app, "cat")
    with pytest.raises(BancoCalled):
        app.cancel_bets(round_id, "cat")
    with pytest.raises(BancoCalled):
        app.remove_bet(round_id, "punto", player_id="cat")
    coup_now: Any = app.round(round_id)
    assert coup_now.bets == {"cat": {"punto": 10_000}} and funds(app, "cat") == before
    app.deal(round_id)
    assert funds(app, "cat") == (before[0] - 10_000, 0)  # the banco lost the whole bank


def test_a_tied_banco_lost_nothing_so_it_earns_no_banco_suivi(app: CasinoApplication) -> None:
    table_id = chemin_de_fer(app)
    app.call_banco(coup(app, table_id, TIED), "cat")
    app.deal(app.table(table_id).round_id or "")
    assert app.table(table_id).banco_suivi is None
    round_id = coup(app, table_id, BANKER_WINS)
    app.call_banco(round_id, "bob")
    with pytest.raises(BancoRefused) as refused:
        app.call_banco(round_id, "cat")
    assert refused.value.facts["reason"] == "already_called"


def test_a_lost_banco_goes_first_next_coup_at_chemin_de_fer(app: CasinoApplication) -> None:
    table_id = chemin_de_fer(app)
    first = coup(app, table_id, BANKER_WINS)
    app.call_banco(first, "cat")
    app.deal(first)
    round_id = coup(app, table_id, BANKER_WINS)
    app.call_banco(round_id, "bob")
    app.call_banco(round_id, "cat")  # banco suivi takes precedence
    coup_now: Any = app.round(round_id)
    assert coup_now.banco["player_id"] == "cat" and coup_now.banco["suivi"] is True


def test_en_banque_has_no_banco_suivi_and_counts_only_lost_bancos(
    app: CasinoApplication,
) -> None:
    table_id = en_banque(app)
    lost = coup(app, table_id, BANKER_BEATS_BOTH)
    app.call_banco(lost, "cat")
    app.deal(lost)
    for _ in range(3):  # ties lose nothing: they never count towards the three
        tied = coup(app, table_id, RIGHT_TIES)
        app.call_banco(tied, "cat")
        app.deal(tied)
    assert app.table(table_id).failed_bancos == {"cat": 1}
    round_id = coup(app, table_id, RIGHT_WINS)
    app.call_banco(round_id, "bob")
    with pytest.raises(BancoRefused) as refused:
        app.call_banco(round_id, "cat")  # no precedence for the loser at en banque
    assert refused.value.facts["reason"] == "already_called"


def test_a_winning_banco_that_left_is_not_offered_the_bank(app: CasinoApplication) -> None:
    table_id = en_banque(app)
    round_id = coup(app, table_id, RIGHT_WINS)
    app.call_banco(round_id, "cat")
    app.leave_seat(table_id, "cat")  # the banco stands; the seat frees when it ends
    app.deal(round_id)
    seen = app.table(table_id)
    assert (seen.banker, seen.bank_offered_to, seen.seat_of("cat")) == (None, None, None)
    app.put_up_bank(table_id, "bob", 20_000)  # anyone seated may now bank
    assert app.table(table_id).banker == "bob"


@pytest.mark.parametrize("goes", ["leave", "disconnect"])
def test_the_offer_of_the_bank_passes_on_from_a_player_who_goes(
    app: CasinoApplication, goes: str
) -> None:
    table_id = table(app, "chemin_de_fer", ("ann", "1"), ("bob", "2"), ("cat", "3"))
    assert app.table(table_id).bank_offered_to == "ann"
    if goes == "leave":
        app.leave_seat(table_id, "ann")
    else:
        app.disconnect("ann")
    assert app.table(table_id).bank_offered_to == "bob"
    with pytest.raises(NotOfferedTheBank):
        app.put_up_bank(table_id, "cat", 10_000)
    app.put_up_bank(table_id, "bob", 10_000)


def test_only_a_new_tables_first_player_is_offered_the_bank(app: CasinoApplication) -> None:
    table_id = table(app, "chemin_de_fer", ("ann", "1"), ("bob", "2"))
    app.decline_bank(table_id, "ann")
    app.decline_bank(table_id, "bob")  # nobody accepts: the table waits
    app.sit_at_table(table_id, "dan", "5")
    assert app.table(table_id).bank_offered_to is None
    app.put_up_bank(table_id, "bob", 5_000)
    assert app.table(table_id).banker == "bob"


def bob_owes_the_puntos_choice(app: CasinoApplication) -> tuple[str, str]:
    table_id = chemin_de_fer(app)
    round_id = coup(app, table_id, PUNTO_ON_5)
    app.place_bet(round_id, "punto", 1000, player_id="bob")
    app.deal(round_id)
    return table_id, round_id


def test_a_choice_after_its_deadline_is_refused_and_the_system_makes_it(
    app: CasinoApplication, clock: Clock
) -> None:
    _, round_id = bob_owes_the_puntos_choice(app)
    clock.now = NOW + datetime.timedelta(minutes=10)
    with pytest.raises(IllegalAction, match="ran out"):
        app.act(round_id, None, 0, "stand", player_id="bob")
    assert app.choose_when_due(round_id, clock.now).result is True
    coup_now: Any = app.round(round_id)
    assert coup_now.decisions == [
        {"hand": "punto", "action": "draw", "player_id": "bob", "by": "system"}
    ]


def test_a_player_who_leaves_owing_a_choice_has_it_made_at_once(
    app: CasinoApplication,
) -> None:
    table_id, round_id = bob_owes_the_puntos_choice(app)
    app.leave_seat(table_id, "bob")
    coup_now: Any = app.round(round_id)
    assert coup_now.decisions[0] == {
        "hand": "punto",
        "action": "draw",
        "player_id": "bob",
        "by": "system",
    }
    assert coup_now.status == "settled" and app.table(table_id).seat_of("bob") is None


def test_a_disconnect_names_only_the_coups_holding_the_players_stakes(
    app: CasinoApplication,
) -> None:
    table_id = chemin_de_fer(app)
    round_id = coup(app, table_id, BANKER_WINS)
    app.place_bet(round_id, "punto", 1000, player_id="bob")
    assert app.disconnect("cat").result == []  # no stake: the seat frees at once
    assert app.table(table_id).seat_of("cat") is None
    assert [r["round_id"] for r in app.disconnect("ann").result or []] == [round_id]  # banker


def test_a_house_table_has_no_bank_to_put_up_or_call(app: CasinoApplication) -> None:
    table_id = table(app, "punto_banco", ("ann", "1"))
    for attempt in (
        lambda: app.put_up_bank(table_id, "ann", 10_000),
        lambda: app.decline_bank(table_id, "ann"),
        lambda: app.withdraw_bank(table_id, "ann"),
        lambda: app.call_banco(coup(app, table_id, []), "ann"),
    ):
        with pytest.raises(HouseBanked):
            attempt()


def test_a_banked_table_whose_minimum_bet_no_bank_could_cover_is_refused(
    app: CasinoApplication,
) -> None:
    with pytest.raises(InvalidLimits, match="no bet could be covered"):
        app.open_table("chemin_de_fer", "real", (5_000, 10_000), (2_000, 3_000))


def test_an_en_banque_banker_plays_from_seat_b_and_goes_back_to_the_side_seat_left(
    app: CasinoApplication,
) -> None:
    table_id = en_banque(app)  # ann, at R1, put up the bank
    seen = app.table(table_id)
    assert (seen.seat_of("ann"), "R1" in seen.seats) == ("B", False)
    assert app.player("ann").table_seats == {table_id: "B"}
    with pytest.raises(UnknownSeat):
        app.sit_at_table(table_id, "dan", "B")  # nobody sits down at the banker's seat
    app.withdraw_bank(table_id, "ann")
    assert app.table(table_id).seat_of("ann") == "R1"
    assert app.player("ann").table_seats == {table_id: "R1"}


def test_a_banker_whose_side_seat_was_taken_goes_back_to_the_first_free_one(
    app: CasinoApplication,
) -> None:
    table_id = en_banque(app)  # bob L1, cat R2
    app.sit_at_table(table_id, "dan", "R1")
    app.withdraw_bank(table_id, "ann")
    assert app.table(table_id).seat_of("ann") == "R3"


def test_a_banker_giving_up_the_bank_with_no_side_seat_free_leaves_the_table(
    app: CasinoApplication,
) -> None:
    table_id = en_banque(app)
    taken = {"L1", "R2"}
    for seat in ("R1", "R3", "R4", "R5", "L2", "L3", "L4", "L5"):
        app.register_player(f"p{seat.lower()}", seat)
        app.sit_at_table(table_id, f"p{seat.lower()}", seat)
        taken.add(seat)
    assert len(taken) == 10
    app.withdraw_bank(table_id, "ann")
    assert app.table(table_id).seat_of("ann") is None
    assert app.player("ann").table_seats == {} and funds(app, "ann") == (1_000_000, 0)


def test_a_banker_who_leaves_between_coups_frees_the_bankers_seat(app: CasinoApplication) -> None:
    table_id = en_banque(app)
    app.leave_seat(table_id, "ann")
    seen = app.table(table_id)
    assert (seen.seat_of("ann"), "B" in seen.seats, seen.banker) == (None, False, None)
    app.put_up_bank(table_id, "bob", 20_000)
    assert app.table(table_id).seat_of("bob") == "B"


def test_chemin_de_fer_returns_what_the_bank_does_not_cover_to_the_wallets_at_the_deal(
    app: CasinoApplication,
) -> None:
    round_id = coup(app, chemin_de_fer(app), BANKER_WINS)  # a $100 bank; bob 2, cat 3
    app.place_bet(round_id, "punto", 9_000, player_id="cat")
    app.place_bet(round_id, "punto", 4_000, player_id="bob")  # $130 asked of $100
    assert funds(app, "cat") == (1_000_000, 9_000)
    app.deal(round_id)
    assert funds(app, "bob") == (1_000_000 - 4_000, 0)
    assert funds(app, "cat") == (1_000_000 - 6_000, 0)  # $30 of $90 went back
    settled: Any = app.round(round_id)
    assert settled.returned == [
        {"player_id": "cat", "spot": "punto", "amount_cents": 3_000, "covered_cents": 6_000}
    ]
