"""P2P tables and lobbies (rules.md 2.1, 4), given / when / then, without a store."""

import pytest

from domain.baccarat.p2p import Lobby, P2PTable, eligibility_problem
from domain.errors import NotAtTable, TableNotReady
from domain.settings import TableType
from domain.wallet import Wallet
from tests.domain.events import given, kinds, then

TYPE_II = TableType("II", 500, 20_000, 50)


def seated(auto_confirm: bool = False) -> P2PTable:
    table = P2PTable("dan", "real", "II", auto_confirm)
    return given(table, lambda table: table.seat_player("pat"))


def test_a_table_waits_for_a_player_then_the_dealer_confirms_each_round() -> None:
    table = given(P2PTable("dan", "real", "II", False))
    with pytest.raises(TableNotReady, match="no player seated"):
        table.confirm_round("r1")
    table.seat_player("pat")
    table.confirm_round("r1")
    assert then(table) == [
        ("PlayerSeated", {"player_id": "pat"}),
        ("RoundConfirmed", {"round_id": "r1"}),
    ]
    with pytest.raises(TableNotReady, match="still in play"):
        table.confirm_round("r2")


def test_a_player_disconnecting_leaves_the_seat_at_once() -> None:
    table = given(seated(), lambda t: t.confirm_round("r1"))
    assert table.disconnect("pat") == "player"
    assert then(table) == [("PlayerDisconnected", {"player_id": "pat"})]
    assert (table.status, table.player_id, table.round_id) == ("waiting", None, None)


def test_a_dealer_disconnecting_mid_round_lets_it_finish_and_is_recorded_once() -> None:
    table = given(seated(auto_confirm=True), lambda t: t.confirm_round("r1"))
    assert table.disconnect("dan") == "dealer"
    assert table.disconnect("dan") == "dealer"
    assert kinds(table) == ["DealerDisconnected"]
    assert (table.round_id, table.auto_confirm) == ("r1", False)
    table.reconnect_dealer()
    assert kinds(table) == ["DealerReconnected"]
    assert table.auto_confirm  # the dealer's own choice comes back


def test_a_dealer_disconnecting_between_rounds_closes_the_table() -> None:
    table = seated()
    assert table.disconnect("dan") == "dealer_left"
    assert kinds(table) == ["DealerLeft"]
    with pytest.raises(NotAtTable):
        table.leave("pat")


def test_the_lobby_keeps_waiting_tables_longest_waiting_first_once_each() -> None:
    lobby = given(Lobby("real", "II"))
    for table_id in ("t1", "t2", "t1"):
        lobby.add(table_id)
    lobby.remove("t1")
    lobby.remove("t9")
    assert then(lobby) == [
        ("TableWaiting", {"table_id": "t1"}),
        ("TableWaiting", {"table_id": "t2"}),
        ("TableTaken", {"table_id": "t1"}),
    ]
    assert lobby.waiting == ["t2"]


def test_a_dealer_needs_the_points_then_the_worst_case_available() -> None:
    wallet = Wallet("dan", "real")
    wallet.deposit("t1", 180_349)
    problem = eligibility_problem(TYPE_II, 180_350, wallet)
    assert problem is not None and problem.facts["requirement"] == "dealer_points"
    wallet.change_points(50, "operator", None, "qualifies")
    problem = eligibility_problem(TYPE_II, 180_350, wallet)
    assert problem is not None and problem.facts == {
        "requirement": "available_balance",
        "required": "1803.50",
        "actual": "1803.49",
        "shortfall": "0.01",
    }
    wallet.deposit("t2", 1)
    assert eligibility_problem(TYPE_II, 180_350, wallet) is None
