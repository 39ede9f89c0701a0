"""The application's commands and its seam, on both stores."""

import threading

import pytest

from domain.errors import (
    ConcurrencyExhausted,
    IdempotencyKeyReused,
    InsufficientFunds,
    InvalidMode,
    InvalidPlayerId,
    InvalidPointsChange,
    PlayerExists,
    UnknownPlayer,
)
from domain.outcome import Receipt
from infra.store.store import Store
from projections import balances
from tests.conftest import StoreFactory, every_store_event


def remembered(key: str, fingerprint: str = "f") -> Receipt:
    return Receipt(
        key=key, fingerprint=fingerprint, render=lambda m: {"balance": m.wallet.balance_cents}
    )


def test_registering_a_player_opens_a_real_and_a_play_wallet(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    assert store.app.wallet("alice", "real").balance_cents == 0
    assert store.app.wallet("alice", "play").balance_cents == 0


def test_a_player_id_can_be_registered_once(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    with pytest.raises(PlayerExists):
        store.app.register_player("alice", "Another Alice")
    assert store.app.player("alice").display_name == "Alice"


@pytest.mark.parametrize("player_id", ["", "a" * 65, "bad id", "x/y", "é"])
def test_malformed_player_ids_are_refused(store: Store, player_id: str) -> None:
    with pytest.raises(InvalidPlayerId):
        store.app.register_player(player_id, "X")


def test_unknown_players_and_modes_are_refused(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    with pytest.raises(UnknownPlayer):
        store.app.deposit("bob", "real", 100)
    with pytest.raises(InvalidMode):
        store.app.deposit("alice", "bonus", 100)


def test_play_money_never_reaches_the_real_wallet(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "play", 5000)
    assert store.app.wallet("alice", "real").balance_cents == 0
    with pytest.raises(InsufficientFunds):
        store.app.withdraw("alice", "real", 1)


def test_a_retried_command_with_the_same_receipt_applies_once(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    first = store.app.deposit.with_receipt(remembered("k1"), "alice", "real", 700)
    again = store.app.deposit.with_receipt(remembered("k1"), "alice", "real", 700)
    assert (first.replayed, again.replayed) == (False, True)
    assert again.answer == first.answer == {"balance": 700}
    assert store.app.wallet("alice", "real").balance_cents == 700


def test_a_receipt_key_reused_for_another_request_is_refused(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit.with_receipt(remembered("k1", "first body"), "alice", "real", 700)
    with pytest.raises(IdempotencyKeyReused):
        store.app.deposit.with_receipt(remembered("k1", "other body"), "alice", "real", 900)
    assert store.app.wallet("alice", "real").balance_cents == 700


def test_receipts_survive_a_restart(stores: StoreFactory, store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit.with_receipt(remembered("k1"), "alice", "real", 700)
    restarted = stores.open()
    again = restarted.app.deposit.with_receipt(remembered("k1"), "alice", "real", 700)
    assert again.replayed
    assert restarted.app.wallet("alice", "real").balance_cents == 700


def test_operator_adjustments_move_points_with_a_reason(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.adjust_points("alice", "real", 50, "welcome bonus")
    store.app.adjust_points("alice", "real", -80, "abuse")
    assert store.app.wallet("alice", "real").points == -30
    assert store.app.wallet("alice", "play").points == 0


@pytest.mark.parametrize(
    ("change", "reason"), [(0, "x"), (5, "   "), (10**10, "x"), (5, "r" * 501)]
)
def test_points_adjustments_need_a_real_change_and_a_reason(
    store: Store, change: int, reason: str
) -> None:
    store.app.register_player("alice", "Alice")
    with pytest.raises(InvalidPointsChange):
        store.app.adjust_points("alice", "real", change, reason)
    assert store.app.wallet("alice", "real").points == 0


def test_eight_threads_withdrawing_at_once_never_overdraw(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 10_000)
    attempts_per_thread, amount = 10, 150  # 80 x $1.50 asked for; $100 there.
    results: list[str] = []
    lock = threading.Lock()

    def withdraw_repeatedly() -> None:
        for _ in range(attempts_per_thread):
            outcome = None
            while outcome is None:
                try:
                    store.app.withdraw("alice", "real", amount)
                    outcome = "ok"
                except InsufficientFunds:
                    outcome = "refused"
                except ConcurrencyExhausted:
                    pass  # Lost every race, nothing applied: a client tries again (a 503).
            with lock:
                results.append(outcome)

    threads = [threading.Thread(target=withdraw_repeatedly) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wallet = store.app.wallet("alice", "real")
    assert results.count("ok") == 10_000 // amount  # 66 fit, the rest are refused
    assert wallet.balance_cents == 10_000 - results.count("ok") * amount == 100
    withdrawals = [e for e in every_store_event(store) if type(e).__name__ == "Withdrawn"]
    assert len(withdrawals) == results.count("ok")


def test_the_trial_balance_of_each_mode_sums_to_zero(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.register_player("bob", "Bob")
    store.app.deposit("alice", "real", 1234)
    store.app.deposit("bob", "play", 999)
    store.app.withdraw("alice", "real", 234)
    store.projector.catch_up()
    with store.database.read() as cursor:
        real = dict(balances.trial_balance(cursor, "real"))
        play = dict(balances.trial_balance(cursor, "play"))
    assert real == {"cashier": -1000, "player:alice": 1000}
    assert play == {"cashier": -999, "player:bob": 999}


def test_rebuilding_the_read_models_gives_the_same_figures(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 1234)
    store.app.adjust_points("alice", "real", 5, "x")
    store.projector.catch_up()
    with store.database.read() as cursor:
        before = balances.trial_balance(cursor, "real"), balances.liability(cursor, "real")
    assert store.projector.rebuild() == len(every_store_event(store))
    with store.database.read() as cursor:
        after = balances.trial_balance(cursor, "real"), balances.liability(cursor, "real")
    assert after == before
