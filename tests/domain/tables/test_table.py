"""A multi-player table (rules.md 2.2), given / when / then: seats, leaving, coups."""

import pytest
from eventsourcing.domain import Snapshot

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


def test_a_player_moves_to_a_free_seat_and_the_bankers_seat_remembers_the_side_left() -> None:
    table = given(
        Table("en_banque", "real", 100, 100_000, 10_000, 5_000_000),
        lambda t: t.sit("ann", "R3"),
        lambda t: t.sit("bob", "L1"),
    )
    table.move("ann", "B")
    assert then(table) == [("PlayerMoved", {"player_id": "ann", "from_seat": "R3", "to_seat": "B"})]
    assert (table.seat_of("ann"), table.banker_side_seat, "R3" in table.seats) == ("B", "R3", False)
    assert table.play_order() == ["ann", "bob"]  # B first, then the left, then the right


def test_a_table_snapshot_from_before_the_bankers_seat_loads_remembering_none() -> None:
    table = given(Table("en_banque", "real", 100, 100_000, 10_000, 5_000_000),
                  lambda t: t.sit("ann", "R1"))  # fmt: skip
    taken = Snapshot.take(table)
    old_state = {k: v for k, v in taken.state.items() if k not in ("class_version",
                                                                  "banker_side_seat")}  # fmt: skip
    old = Snapshot(originator_id=taken.originator_id, originator_version=taken.originator_version,
                   timestamp=taken.timestamp, topic=taken.topic, state=old_state)  # fmt: skip
    loaded = old.mutate(None)
    assert isinstance(loaded, Table)
    assert (loaded.banker_side_seat, loaded.seats) == (None, {"R1": "ann"})
