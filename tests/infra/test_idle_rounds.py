"""Rounds left open with no action are voided after the idle timeout (rules.md 4)."""

import datetime

from infra.store.store import Store
from infra.workers import IdleRoundWorker
from tests.conftest import StoreFactory, seat_p2p_table

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
    table_id = seat_p2p_table(app)
    round_ = app.confirm(table_id).result
    assert round_ is not None
    app.place_bet(round_.round_id, "banker", 500)
    assert IdleRoundWorker(store, TIMEOUT).void_idle_rounds(later(TIMEOUT + 1)) == [round_.round_id]
    assert app.wallet("dan", "real").held_cents == 0
    assert app.wallet("pat", "real").held_cents == 0
    seen = app.p2p_table(table_id)
    assert seen.round_id is None
    assert seen.notice is not None and "voided" in seen.notice
    assert app.confirm(table_id).result is not None  # the dealer can go on


def test_an_idle_blackjack_round_never_dealt_is_voided_and_its_stakes_returned(
    store: Store,
) -> None:
    app = store.app
    app.register_player("alice", "Alice")
    app.deposit("alice", "real", 5000)
    round_ = app.open_blackjack_round("alice", "real", "1").result
    assert round_ is not None
    app.place_bet(round_.round_id, "1", 500)
    app.disconnect("alice")  # an undealt round is not interrupted: nothing is in play
    assert IdleRoundWorker(store, TIMEOUT).void_idle_rounds(later(TIMEOUT + 1)) == [round_.round_id]
    ended = app.round(round_.round_id)
    assert ended.status == "voided"  # type: ignore[attr-defined]
    wallet = app.wallet("alice", "real")
    assert (wallet.balance_cents, wallet.held_cents) == (5000, 0)


def test_an_idle_blackjack_round_in_play_is_finished_with_the_house_defaults(
    store: Store,
) -> None:
    app = store.app
    app.register_player("alice", "Alice")
    app.deposit("alice", "real", 5000)
    # Box 1 gets 10 and 2 (12), the dealer shows 6 and has 10 in the hole: 16, draws 9.
    shoe = ["10", "6", "2", "10", "9"]
    round_ = app.open_blackjack_round("alice", "real", "2", shoe).result
    assert round_ is not None
    app.place_bet(round_.round_id, "1", 1000)
    app.deal(round_.round_id)
    assert IdleRoundWorker(store, TIMEOUT).void_idle_rounds(later(TIMEOUT + 1)) == [round_.round_id]
    ended = app.round(round_.round_id)
    assert ended.status == "settled"  # type: ignore[attr-defined]
    decisions = [e for e in app.events.get(ended.id) if type(e).TOPIC.endswith("PlayerActed")]
    assert [(d.action, d.by) for d in decisions] == [("stand", "system")]
    wallet = app.wallet("alice", "real")
    assert (wallet.balance_cents, wallet.held_cents) == (6000, 0)  # dealer 25 busts: +$10
