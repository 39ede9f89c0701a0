"""Rounds left open with no action are voided after the idle timeout (RULES.md 4)."""

import datetime

from infra.store import Store
from infra.workers import IdleRoundWorker
from tests.conftest import StoreFactory

TIMEOUT = 600


def later(seconds: int) -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=seconds)


def test_an_idle_house_round_is_voided_and_its_stake_returned(
    stores: StoreFactory, store: Store
) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 5000)
    idle = store.app.open_house_round("alice", "real").result
    busy = store.app.open_house_round("alice", "real").result
    assert idle is not None and busy is not None
    store.app.place_bet(idle.round_id, "tie", 1000)
    worker = IdleRoundWorker(stores.open(), TIMEOUT)  # a restarted process sees them too
    assert worker.void_idle_rounds(later(TIMEOUT - 60)) == []
    assert sorted(worker.void_idle_rounds(later(TIMEOUT + 1))) == sorted(
        [idle.round_id, busy.round_id]
    )
    wallet = store.app.wallet("alice", "real")
    assert (wallet.balance_cents, wallet.held_cents) == (5000, 0)
    assert store.app.round(idle.round_id).status == "voided"  # type: ignore[attr-defined]
    assert worker.void_idle_rounds(later(TIMEOUT * 3)) == []


def test_an_idle_p2p_round_releases_the_dealers_hold_and_frees_the_table(store: Store) -> None:
    app = store.app
    for name in ("dan", "pat"):
        app.register_player(name, name)
        app.deposit(name, "real", 500_000)
    app.adjust_points("dan", "real", 100, "qualifies")
    table = app.sit_as_dealer("dan", "real", "I", False).result
    assert table is not None
    app.join_as_player("pat", "real", "I")
    round_ = app.confirm(table.table_id).result
    assert round_ is not None
    app.place_bet(round_.round_id, "banker", 500)
    assert IdleRoundWorker(store, TIMEOUT).void_idle_rounds(later(TIMEOUT + 1)) == [round_.round_id]
    assert app.wallet("dan", "real").held_cents == 0
    assert app.wallet("pat", "real").held_cents == 0
    seen = app.table(table.table_id)
    assert seen.round_id is None
    assert seen.notice is not None and "voided" in seen.notice
    assert app.confirm(table.table_id).result is not None  # the dealer can go on
