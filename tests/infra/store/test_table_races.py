"""Seats raced for at a multi-player table, on both stores (rules.md 2.2): two players
racing for one seat get it once; one player racing for two seats gets one; a sit
racing a bet on the coup in play costs neither a second attempt."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from domain.errors import AlreadyAtTable, SeatTaken
from domain.outcome import Receipt
from domain.tables.table import Table
from infra.http.routes.tables import _table
from infra.store.store import Store

T = TypeVar("T")


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


class Retries:
    """The seam's observer, keeping only its retries."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def finished(self, command: str, outcome: str) -> None: ...

    def retried(self, command: str, reason: str) -> None:
        self.seen.append((command, reason))

    def saved(self, events: int) -> None: ...

    def snapshot_failed(self) -> None: ...


def coup_in_play(store: Store) -> tuple[str, str]:
    """A chemin de fer table, ann banking, bob betting; the table's and coup's ids."""
    app = store.app
    for player_id in ("ann", "bob", "cat", "dan"):
        app.register_player(player_id, player_id)
    opened = app.open_table("chemin_de_fer", "real").result
    assert opened is not None
    table_id = opened.table_id
    for player_id, seat in (("ann", "1"), ("bob", "2"), ("cat", "3")):
        app.deposit(player_id, "real", 100_000)
        app.sit_at_table(table_id, player_id, seat)
    app.deposit("dan", "real", 100_000)
    app.put_up_bank(table_id, "ann", 10_000)
    coup = app.open_coup(table_id).result
    assert coup is not None
    app.place_bet(coup.round_id, "punto", 1_000, "bob")
    return table_id, coup.round_id


def decided_then_saved_after(app: Any, command: Callable[[], T], meanwhile: Callable[[], Any]) -> T:
    """Run `command`, and between its decision and its save, `meanwhile` (another
    command, saved first)."""
    seam = app.commands
    submit, ran = seam.submit, []

    def first_meanwhile(save: Any) -> Any:
        if not ran:
            ran.append(1)
            meanwhile()
        return submit(save)

    seam.submit = first_meanwhile
    try:
        return command()
    finally:
        del seam.submit


def test_a_sit_answered_with_the_coup_neither_waits_on_it_nor_caches_it_stale(
    store: Store,
) -> None:
    """The coup a sit's answer shows is not the sit's: a bet landing on it between the
    sit's decision and its save makes the sit run again no more than the next bet."""
    app = store.app
    table_id, round_id = coup_in_play(store)
    retries = Retries()
    store.commands.observe(retries)
    receipt = Receipt("sit-key", "fingerprint", _table(app))
    decided_then_saved_after(
        app,
        lambda: app.sit_at_table.with_receipt(receipt, table_id, "dan", "4"),
        lambda: app.place_bet(round_id, "punto", 2_000, "cat"),  # saved first
    )
    app.place_bet(round_id, "punto", 1_000, "dan")
    assert retries.seen == []
    assert app.round(round_id).bets == {"bob": {"punto": 1_000}, "cat": {"punto": 2_000},
                                        "dan": {"punto": 1_000}}  # fmt: skip


def test_a_bet_that_only_read_the_table_leaves_the_newer_table_a_sit_saved_meanwhile(
    store: Store,
) -> None:
    app = store.app
    table_id, round_id = coup_in_play(store)
    app.register_player("eve", "eve")
    retries = Retries()
    store.commands.observe(retries)
    receipt: Receipt[Any] = Receipt("bet-key", "fingerprint", lambda _: {})
    decided_then_saved_after(  # decided on the table as it was
        app,
        lambda: app.place_bet.with_receipt(receipt, round_id, "punto", 2_000, "cat"),
        lambda: app.sit_at_table(table_id, "dan", "4"),  # saved first: the table moves on
    )
    app.sit_at_table(table_id, "eve", "5")
    assert retries.seen == []
    assert sorted(app.table(table_id).seats.values()) == ["ann", "bob", "cat", "dan", "eve"]
