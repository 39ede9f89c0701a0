"""Faults lose nothing and double-count nothing, on both stores."""

from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import OperationalError

from domain.outcome import Receipt
from domain.wallet import load_wallet
from infra.store.store import Store
from tests.conftest import POSTGRES_URL, StoreFactory


def remembered(key: str) -> Receipt:
    return Receipt(key, "fingerprint", lambda movement: {"id": movement.transaction_id})


def lose_the_answer_of_the_next_save(store: Store) -> None:
    """The next save commits, but the connection drops before the answer comes back."""
    recorder: Any = store.app.recorder
    insert = recorder.insert_events

    def insert_then_fail(*args: Any, **kwargs: Any) -> Any:
        recorder.insert_events = insert
        insert(*args, **kwargs)
        raise OperationalError("server closed the connection unexpectedly")

    recorder.insert_events = insert_then_fail


def test_a_save_whose_answer_was_lost_is_not_applied_twice(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    lose_the_answer_of_the_next_save(store)
    outcome = store.app.deposit.with_receipt(remembered("k1"), "alice", "real", 700)
    assert outcome.replayed  # the retry found the receipt the lost save had written
    assert store.app.wallet("alice", "real").balance_cents == 700
    again = store.app.deposit.with_receipt(remembered("k1"), "alice", "real", 700)
    assert again.answer == outcome.answer
    assert store.app.wallet("alice", "real").balance_cents == 700


def test_without_a_receipt_a_lost_answer_is_reported_not_retried(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    lose_the_answer_of_the_next_save(store)
    with pytest.raises(OperationalError):
        store.app.deposit("alice", "real", 700)
    assert store.app.wallet("alice", "real").balance_cents == 700  # landed once, not twice


def test_a_command_that_fails_midway_saves_nothing(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 1000)

    def crash_after_changing_the_wallet(unit: Any) -> None:
        load_wallet(unit, "alice", "real").withdraw("t", 400)
        raise RuntimeError("the process died here")

    with pytest.raises(RuntimeError):
        store.commands.run(crash_after_changing_the_wallet)
    assert store.app.wallet("alice", "real").balance_cents == 1000
    store.app.withdraw("alice", "real", 400)  # and the cached wallet was not left changed
    assert store.app.wallet("alice", "real").balance_cents == 600


def test_a_save_whose_postings_do_not_balance_is_refused_whole(store: Store) -> None:
    from domain.wallet import UnbalancedPostings

    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 1000)

    def half_a_transfer(unit: Any) -> None:
        wallet = load_wallet(unit, "alice", "real")
        wallet.hold("r1", 500)
        wallet.settle("r1", -500, None)  # the other player's leg is missing

    with pytest.raises(UnbalancedPostings):
        store.commands.run(half_a_transfer)
    wallet = store.app.wallet("alice", "real")
    assert (wallet.balance_cents, wallet.held_cents) == (1000, 0)


def test_a_decision_on_a_wallet_another_process_moved_on_is_taken_again(
    stores: Any, store: Store
) -> None:
    from domain.errors import NotEligibleToDeal

    store.app.register_player("dan", "Dan")
    store.app.deposit("dan", "real", 200_000)  # now cached by this process
    store.app.adjust_points("dan", "real", 100, "qualifies")
    other_process = stores.open()
    other_process.app.withdraw("dan", "real", 150_000)  # leaves $500: too little to deal
    with pytest.raises(NotEligibleToDeal):
        store.app.sit_as_dealer("dan", "real", "II", auto_confirm=False)


def test_a_refusal_reached_from_a_stale_cached_wallet_is_decided_again(
    stores: Any, store: Store
) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 1000)  # this process now caches a $10 wallet
    stores.open().app.deposit("alice", "real", 5000)  # another process adds $50
    store.app.withdraw("alice", "real", 3000)  # not refused: the money is there
    assert store.app.wallet("alice", "real").balance_cents == 3000


def end_the_pools_connections(store: Store) -> None:
    """PostgreSQL ends every connection the store's pool holds (a restart, a failover)."""
    pool = store.app.recorder.datastore.pool
    held = [pool.getconn() for _ in range(pool.get_stats()["pool_size"])]
    pids = [connection.info.backend_pid for connection in held]
    for connection in held:
        pool.putconn(connection)
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


@pytest.mark.postgres
def test_a_read_on_a_connection_postgres_ended_is_retried(postgres_stores: StoreFactory) -> None:
    store = postgres_stores.open()
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 500)
    wallet = store.app.wallet("ann", "real")
    player = store.app.player("ann")
    end_the_pools_connections(store)
    assert store.app.wallet("ann", "real").balance_cents == 500
    end_the_pools_connections(store)
    newer = store.app.recorder.select_newer({wallet.id: 0, player.id: 0}, 10)
    assert newer is not None and len(newer[wallet.id]) == wallet.version
