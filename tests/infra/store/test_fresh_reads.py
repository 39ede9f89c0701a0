"""Queries keep what they read (issue 15), yet never answer stale: a write by another
process, on either store, shows in the very next read."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import infra.commands.fresh_reads as fresh_reads
from domain.errors import UnknownPlayer, UnknownTable
from domain.tables.coup import Coup
from infra.store.store import Store
from tests.conftest import StoreFactory, seat_p2p_table


def test_a_read_sees_another_processs_deposit_at_once(stores: StoreFactory, store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 5000)
    assert store.app.wallet("alice", "real").balance_cents == 5000  # now kept
    stores.open().app.deposit("alice", "real", 700)  # another process
    assert store.app.wallet("alice", "real").balance_cents == 5700


def test_a_kept_table_shows_the_round_another_process_played(
    stores: StoreFactory, store: Store
) -> None:
    table_id = seat_p2p_table(store.app, auto_confirm=True)
    before = store.app.p2p_table(table_id)
    other = stores.open().app
    assert before.round_id is not None
    other.place_bet(before.round_id, "banker", 1000)
    other.deal(before.round_id)
    after = store.app.p2p_table(table_id)
    assert (after.rounds_played, after.round_id) == (
        before.rounds_played + 1,
        other.p2p_table(table_id).round_id,
    )
    assert store.app.round(before.round_id).outcome is not None
    assert before.rounds_played == 0  # what an earlier reader holds is never changed


def test_the_queries_cache_is_bounded(store: Store) -> None:
    reads = store.commands.fresh
    reads.kept_max = 3
    for n in range(5):
        store.app.register_player(f"p{n}", f"P{n}")
        store.app.player(f"p{n}")
    assert reads.kept_count() == 3
    assert [p.display_name for p in map(store.app.player, ["p0", "p4"])] == ["P0", "P4"]


def test_every_shape_of_the_event_query_reads_the_events_it_names(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    for cents in (100, 200, 300, 400):
        store.app.deposit("alice", "real", cents)
    recorder = store.app.recorder
    wallet_id = store.app.wallet("alice", "real").id
    everything = [e.originator_version for e in recorder.select_events(wallet_id)]
    assert everything == sorted(everything) and len(everything) >= 5
    first, last = everything[0], everything[-1]

    def versions(**query: Any) -> list[int]:
        return [e.originator_version for e in recorder.select_events(wallet_id, **query)]

    assert versions(gt=first) == everything[1:]
    assert versions(lte=first + 1) == everything[:2]
    assert versions(gt=first, lte=last - 1) == everything[1:-1]
    assert versions(desc=True) == everything[::-1]
    assert versions(desc=True, limit=2) == everything[::-1][:2]
    assert versions(gt=first, desc=True, limit=1) == [last]
    assert versions(limit=1) == [first]
    assert versions(gt=last) == []


def test_a_table_names_its_players_without_reading_them_again(store: Store) -> None:
    table_id = seat_p2p_table(store.app, auto_confirm=True)
    table = store.app.p2p_table(table_id)
    assert table.player_id is not None
    first = store.app.display_name(table.dealer_id), store.app.display_name(table.player_id)
    reads: list[object] = []
    recorder = store.app.recorder
    select = recorder.select_events
    recorder.select_events = lambda *a, **k: reads.append(a) or select(*a, **k)  # type: ignore[method-assign]
    again = store.app.display_name(table.dealer_id), store.app.display_name(table.player_id)
    assert again == first and reads == []
    with pytest.raises(UnknownPlayer):
        store.app.display_name("nobody")


def counted_reads(store: Store) -> list[str]:
    """The names of the recorder's reads of events from now on."""
    reads: list[str] = []
    recorder = store.app.recorder
    for name in ("select_events", "select_newer"):
        read = getattr(recorder, name, None)
        if read is not None:

            def counted(*args: Any, _read: Any = read, _name: str = name, **kwargs: Any) -> Any:
                reads.append(_name)
                return _read(*args, **kwargs)

            setattr(recorder, name, counted)
    return reads


def play_round(app: Any, table_id: str) -> None:
    round_id = app.p2p_table(table_id).round_id
    app.place_bet(round_id, "banker", 1000)
    app.deal(round_id)


def test_a_kept_table_and_its_round_are_checked_in_one_query(
    stores: StoreFactory, store: Store
) -> None:
    table_id = seat_p2p_table(store.app, auto_confirm=True)
    store.app.p2p_table_with_round(table_id)  # both now kept
    reads = counted_reads(store)
    table, current = store.app.p2p_table_with_round(table_id)
    assert current is not None and current.round_id == table.round_id
    one_query = stores.backend == "postgres"
    assert reads == (["select_newer"] if one_query else ["select_events", "select_events"])


def test_the_table_and_round_read_together_are_those_another_process_saved(
    stores: StoreFactory, store: Store
) -> None:
    table_id = seat_p2p_table(store.app, auto_confirm=True)
    before, first = store.app.p2p_table_with_round(table_id)
    other = stores.open().app
    assert first is not None
    other.place_bet(first.round_id, "banker", 1000)  # the kept round moves on: in play
    table, current = store.app.p2p_table_with_round(table_id)
    assert current is not None and current.round_id == first.round_id
    assert isinstance(current, Coup) and current.bets == {current.player_id: {"banker": 1000}}
    other.deal(first.round_id)  # and the table moves on to a round never kept here
    table, current = store.app.p2p_table_with_round(table_id)
    assert table.rounds_played == before.rounds_played + 1
    assert current is not None and current.round_id == other.p2p_table(table_id).round_id
    assert current.round_id != first.round_id


def test_a_kept_table_far_behind_is_read_from_its_snapshot(
    stores: StoreFactory, store: Store
) -> None:
    table_id = seat_p2p_table(store.app, auto_confirm=True)
    store.app.adjust_points("dan", "real", 1_000, "ten points a round")
    store.app.p2p_table_with_round(table_id)
    other = stores.open().app
    for _ in range(60):  # two events on the table each round: past EVENTS_AFTER_KEPT_MAX
        play_round(other, table_id)
    table, current = store.app.p2p_table_with_round(table_id)
    assert table.rounds_played == 60
    assert current is not None and current.round_id == other.p2p_table(table_id).round_id


@pytest.mark.postgres
def test_the_events_after_several_versions_come_in_one_answer_or_none(
    postgres_stores: StoreFactory,
) -> None:
    app = postgres_stores.open().app
    for name in ("ann", "bob"):
        app.register_player(name, name)
        for cents in (100, 200, 300):
            app.deposit(name, "real", cents)
    ann, bob = (app.wallet(name, "real") for name in ("ann", "bob"))
    newer = app.recorder.select_newer({ann.id: ann.version - 2, bob.id: bob.version}, 10)
    assert newer is not None
    assert [e.originator_version for e in newer[ann.id]] == [ann.version - 1, ann.version]
    assert newer[bob.id] == []
    # Four events at most for two aggregates: three of ann's and three of bob's are more.
    cut_short = {ann.id: ann.version - 3, bob.id: bob.version - 3}
    assert app.recorder.select_newer(cut_short, 2) is None


def test_a_multi_player_table_and_its_coup_are_read_as_another_process_saved_them(
    stores: StoreFactory, store: Store
) -> None:
    app = store.app
    app.register_player("ann", "Ann")
    app.deposit("ann", "real", 100_000)
    opened = app.open_table("punto_banco", "real").result
    assert opened is not None
    app.sit_at_table(opened.table_id, "ann", "1")
    coup = app.open_coup(opened.table_id).result
    assert coup is not None
    app.table_with_round(opened.table_id)  # both now kept
    reads = counted_reads(store)
    stores.open().app.place_bet(coup.round_id, "banker", 1000, player_id="ann")
    table, current = app.table_with_round(opened.table_id)
    assert table.round_id == coup.round_id
    assert isinstance(current, Coup) and current.round_id == coup.round_id
    assert current.bets == {"ann": {"banker": 1000}}
    assert reads == (["select_newer"] if stores.backend == "postgres" else ["select_events"] * 2)


def test_a_kept_rounds_id_is_no_tables(store: Store) -> None:
    table_id = seat_p2p_table(store.app, auto_confirm=True)
    _, current = store.app.p2p_table_with_round(table_id)
    assert current is not None
    with pytest.raises(UnknownTable):
        store.app.p2p_table_with_round(current.round_id)


def test_an_answer_cut_short_by_its_limit_is_read_aggregate_by_aggregate(
    stores: StoreFactory, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fresh_reads, "EVENTS_AFTER_KEPT_MAX", 3)
    table_id = seat_p2p_table(store.app, auto_confirm=True)
    store.app.p2p_table_with_round(table_id)
    other = stores.open().app
    for _ in range(3):
        play_round(other, table_id)
    table, current = store.app.p2p_table_with_round(table_id)
    saved = other.p2p_table(table_id)
    assert (table.version, table.rounds_played) == (saved.version, saved.rounds_played)
    assert current is not None and current.round_id == saved.round_id


def test_readers_in_threads_never_answer_stale_nor_change_what_they_hold(
    stores: StoreFactory, store: Store
) -> None:
    table_id = seat_p2p_table(store.app, auto_confirm=True)
    store.app.p2p_table_with_round(table_id)
    other = stores.open().app
    played, stop = [0], threading.Event()
    problems: list[str] = []
    held: list[tuple[Any, int, Any, int]] = []

    def read() -> None:
        while not stop.is_set():
            floor = played[0]  # saved before this read began
            table, current = store.app.p2p_table_with_round(table_id)
            if table.rounds_played < floor:
                problems.append(f"stale: {table.rounds_played} rounds, {floor} saved")
            if (None if current is None else current.round_id) != table.round_id:
                problems.append("the round is not the table's")
            held.append((table, table.version, current, current and current.version))

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    try:
        for n in range(1, 9):  # dan's 100 points deal ten rounds at a type I table
            play_round(other, table_id)
            played[0] = n
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    for table, version, current, current_version in held:
        if table.version != version or (current and current.version) != current_version:
            problems.append("an answer already given changed")
    assert problems == [] and len(held) > 8, problems[:5]
