"""Player protection on both stores: concurrent deposits racing a limit, and an
exclusion that a restarted server's worker still ends (rules.md 7)."""

from __future__ import annotations

import datetime
import threading
from typing import Any

from domain.errors import DepositLimitExceeded
from domain.unit import Unit
from infra.audit.verify import verify
from infra.store.store import Store
from infra.workers import ExclusionWorker
from projections import significant_events
from tests.conftest import StoreFactory, every_store_event
from tests.domain.tables.test_steps import NOW, Clock

DAY = datetime.timedelta(days=1)


def test_two_concurrent_deposits_racing_a_limit_cannot_both_fit(store: Store) -> None:
    store.app.clock = Clock()
    store.app.register_player("alice", "Alice")
    store.app.set_limits("alice", {"deposit:day": 10_000})
    store.app.deposit("alice", "real", 4_000)
    # Both deposits pass the guard on the same state before either saves.
    barrier, first_try = threading.Barrier(2, timeout=10), threading.local()
    guard = store.app.before_save

    def racing(unit: Unit) -> None:
        guard(unit)
        if not getattr(first_try, "over", False):
            first_try.over = True
            barrier.wait()

    store.app.before_save = racing  # type: ignore[method-assign]
    results: list[str] = []

    def deposit() -> None:
        try:
            store.app.deposit("alice", "real", 4_000)
            results.append("ok")
        except DepositLimitExceeded as refused:
            results.append(refused.facts["remaining"])

    threads = [threading.Thread(target=deposit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["20.00", "ok"]  # one fits; the other sees 20.00 left
    assert store.app.wallet("alice", "real").balance_cents == 8_000
    deposits = [e for e in every_store_event(store) if type(e).__name__ == "Deposited"]
    assert len(deposits) == 2


def test_an_exclusion_still_ends_when_due_after_a_restart(
    stores: StoreFactory, store: Store
) -> None:
    store.app.clock = Clock()
    store.app.register_player("alice", "Alice")
    store.app.exclude("alice", "time_out", 1)
    stores.close(store)
    restarted = stores.open()
    worker = ExclusionWorker(restarted)
    assert worker.end_due_exclusions(NOW + DAY - datetime.timedelta(microseconds=1)) == []
    assert worker.end_due_exclusions(NOW + DAY) == ["alice"]
    assert worker.end_due_exclusions(NOW + 2 * DAY) == []  # ended once
    protection: Any = restarted.app.protection("alice")
    assert protection.exclusion is None
    recorded = every_store_event(restarted)
    kinds = [e.kind for e in recorded if type(e).__qualname__ == "SignificantEvent.Created"]
    assert kinds == ["player_excluded", "exclusion_ended"]


def test_a_store_with_limits_exclusions_and_their_refusals_verifies_clean(store: Store) -> None:
    store.app.clock = Clock()
    store.app.register_player("alice", "Alice")
    store.app.set_limits("alice", {"deposit:day": 10_000, "loss:day": 2_000})
    store.app.deposit("alice", "real", 10_000)
    round_ = store.app.open_house_round("alice", "real", ["10", "K", "3", "10", "10", "Q"])
    assert round_.result is not None
    store.app.place_bet(round_.result.round_id, "banker", 2_000)
    store.app.deal(round_.result.round_id)
    store.app.exclude("alice", "time_out", 1)
    store.app.withdraw("alice", "real", 8_000)
    assert verify(store, None, lambda _: None).problems == []
    assert rebuilt_equal(store)


def rebuilt_equal(store: Store) -> bool:
    """The read models rebuilt from the log equal the live ones (significant events and
    exclusions included)."""
    store.projector.catch_up()
    with store.database.read() as cursor:
        live = significant_events.listed(cursor, None, None, None, 0, 500)
    assert [event["kind"] for event in live] == ["limit_changed", "player_excluded"]
    store.projector.rebuild()
    with store.database.read() as cursor:
        return live == significant_events.listed(cursor, None, None, None, 0, 500)
