"""Seats raced for at a multi-player table, on both stores (rules.md 2.2): two players
racing for one seat get it once; one player racing for two seats gets one."""

from __future__ import annotations

import threading
from collections.abc import Callable

from domain.errors import AlreadyAtTable, SeatTaken
from domain.tables.table import Table
from infra.store.store import Store


def race(*attempts: Callable[[], object]) -> list[str]:
    start = threading.Barrier(len(attempts))
    results: list[str] = []

    def attempt(run: Callable[[], object]) -> None:
        start.wait()
        try:
            run()
            results.append("seated")
        except (SeatTaken, AlreadyAtTable) as refusal:
            results.append(refusal.code)

    threads = [threading.Thread(target=attempt, args=(run,)) for run in attempts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(results)


def new_table(store: Store, *players: str) -> str:
    for player_id in players:
        store.app.register_player(player_id, player_id)
    table = store.app.open_table("punto_banco", "real").result
    assert isinstance(table, Table)
    return table.table_id


def test_two_players_racing_for_one_seat_get_it_once(store: Store) -> None:
    for attempt in range(5):
        table_id = new_table(store, f"ann{attempt}", f"bob{attempt}")
        results = race(
            lambda: store.app.sit_at_table(table_id, f"ann{attempt}", "7"),  # noqa: B023
            lambda: store.app.sit_at_table(table_id, f"bob{attempt}", "7"),  # noqa: B023
        )
        assert results == ["seat_taken", "seated"]
        assert len(store.app.table(table_id).seats) == 1


def test_one_player_racing_for_two_seats_gets_one(store: Store) -> None:
    for attempt in range(5):
        table_id = new_table(store, f"cat{attempt}")
        results = race(
            lambda: store.app.sit_at_table(table_id, f"cat{attempt}", "1"),  # noqa: B023
            lambda: store.app.sit_at_table(table_id, f"cat{attempt}", "2"),  # noqa: B023
        )
        assert results == ["already_at_table", "seated"]
        seats = store.app.table(table_id).seats
        assert list(seats.values()) == [f"cat{attempt}"]
        assert store.app.player(f"cat{attempt}").table_seats == {table_id: next(iter(seats))}
