"""A multi-player table (rules.md 2.2), given / when / then: seats, leaving, coups."""

import pytest

from domain.errors import AlreadyAtTable, CoupInProgress, NotSeated, SeatTaken
from domain.tables.table import Table
from tests.domain.events import given, kinds, then


def table_with(*seated: tuple[str, str]) -> Table:
    return given(
        Table("punto_banco", "real", 100, 100_000, 0, 0),
        *(lambda t, s=sitting: t.sit(*s) for sitting in seated),
    )


def test_a_player_takes_a_free_seat() -> None:
    table = table_with()
    table.sit("ann", "7")
    assert then(table) == [("PlayerSat", {"player_id": "ann", "seat": "7"})]
    assert (table.seats, table.seat_of("ann")) == ({"7": "ann"}, "7")


def test_a_taken_seat_and_a_second_seat_are_refused() -> None:
    table = table_with(("ann", "7"))
    with pytest.raises(SeatTaken) as taken:
        table.sit("bob", "7")
    with pytest.raises(AlreadyAtTable):
        table.sit("ann", "8")
    assert taken.value.facts == {"seat": "7"}
    assert then(table) == []


def test_leaving_without_stakes_frees_the_seat_at_once() -> None:
    table = table_with(("ann", "7"))
    assert table.leave("ann", holds_stakes=False, reason="left the table")
    assert then(table) == [
        ("PlayerLeft", {"player_id": "ann", "seat": "7", "reason": "left the table"})
    ]
    with pytest.raises(NotSeated):
        table.leave("ann", holds_stakes=False, reason="again")


def test_leaving_during_a_coup_that_holds_stakes_frees_the_seat_when_it_ends() -> None:
    table = given(table_with(("ann", "7"), ("bob", "8")), lambda t: t.open_coup("c1"))
    assert not table.leave("ann", holds_stakes=True, reason="disconnected")
    assert not table.leave("ann", holds_stakes=True, reason="disconnected")
    assert kinds(table) == ["LeavingAfterCoup"]
    with pytest.raises(NotSeated):
        table.check_seated("ann")  # no more bets from a seat being left
    assert table.end_coup("c1") == ["ann"]
    assert kinds(table) == ["PlayerLeft", "CoupEnded"]
    assert (table.seats, table.status, table.coups_played) == ({"8": "bob"}, "open", 1)


def test_a_player_back_before_the_coup_ends_keeps_the_seat() -> None:
    table = given(
        table_with(("ann", "7")),
        lambda t: t.open_coup("c1"),
        lambda t: t.leave("ann", True, "disconnected"),
    )
    table.stay("ann")
    table.end_coup("c1")
    assert kinds(table) == ["Staying", "CoupEnded"]
    assert table.seats == {"7": "ann"}


def test_one_coup_at_a_time() -> None:
    table = given(table_with(("ann", "7")), lambda t: t.open_coup("c1"))
    with pytest.raises(CoupInProgress) as refused:
        table.open_coup("c2")
    assert refused.value.facts == {"round_id": "c1"}
    assert table.status == "in_coup"
