"""Attacks on receipts that are not looked up before the command runs (infra/commands/seam.py
`_attempts`), on both stores: concurrent and cross-process duplicates, a key taken
by either kind of receipt, stale caches, and what the observer is told."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError, OperationalError

from domain.errors import IdempotencyKeyReused, InsufficientFunds
from domain.ids import new_id, receipt_uuid
from domain.outcome import Receipt
from domain.wallet import load_wallet
from infra.commands.receipt import CommandReceipt
from infra.store.store import Store, open_store
from tests.conftest import StoreFactory

THREADS = 8


class Told:
    """What the seam tells its observer, counted."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.retries: Counter[str] = Counter()

    def finished(self, command: str, outcome: str) -> None:
        self.outcomes[outcome] += 1

    def retried(self, command: str, reason: str) -> None:
        self.retries[reason] += 1

    def saved(self, events: int) -> None:
        pass

    def snapshot_failed(self) -> None:
        pass


def told(store: Store) -> Told:
    counts = Told()
    store.commands.observe(counts)
    return counts


def assert_replayed_not_retried(again: Any, first: Any, counts: Told) -> None:
    """The repeat got the first answer, and the observer heard of no retry."""
    assert again.replayed and again.answer == first.answer
    assert counts.outcomes == Counter(replayed=1)
    assert counts.retries == Counter()


def deposit_once(store: Store) -> Any:
    return store.app.deposit.with_receipt(remembered("once"), "ann", "real", 500)


def assert_applied_once(store: Store, outcomes: list[Any]) -> None:
    """Of the outcomes of one request sent many times, one applied; all say the same."""
    assert store.app.wallet("ann", "real").balance_cents == 500
    assert sum(not o.replayed for o in outcomes) == 1
    assert len({str(o.answer) for o in outcomes}) == 1


def pay_ann(unit: Any) -> str:
    """A command that pays Ann $5 and says by which transaction: each run its own."""
    transaction_id = new_id()
    load_wallet(unit, "ann", "real").deposit(transaction_id, 500)
    return transaction_id


def remembered(key: str, fingerprint: str = "fingerprint") -> Receipt[Any]:
    return Receipt(key, fingerprint, lambda movement: {"id": movement.transaction_id})


def withdrawal(key: str) -> Receipt[Any]:
    return Receipt(key, "withdraw", lambda movement: {"id": movement.transaction_id})


@pytest.fixture
def ann(store: Store) -> Store:
    store.app.register_player("ann", "Ann")
    return store


def test_a_receipt_event_of_a_key_that_has_a_row_is_refused_by_the_store(ann: Store) -> None:
    # What a save of no event racing a save of events with one key would write
    ann.app.deposit.with_receipt(remembered("k"), "ann", "real", 500)
    event = CommandReceipt("k", "fingerprint", {"said": "other"})
    stored = [ann.app.mapper.to_stored_event(e) for e in event.collect_events()]
    assert stored[0].originator_id == receipt_uuid("k")
    with pytest.raises(IntegrityError):
        ann.app.recorder.insert_events(stored)


def test_a_row_of_a_key_that_has_a_receipt_event_is_refused_by_the_store(ann: Store) -> None:
    said = Receipt("k", "fingerprint", lambda result: {"said": result})
    ann.commands.run(lambda unit: "nothing", said)
    # The same request, whose command now saves an event: its row fails on the key
    again = ann.app.deposit.with_receipt(remembered("k"), "ann", "real", 500)
    assert again.replayed and again.answer == {"said": "nothing"}
    assert ann.app.wallet("ann", "real").balance_cents == 0


def test_duplicates_sent_at_once_among_other_saves_apply_once_with_one_answer(
    ann: Store,
) -> None:
    for n in range(THREADS):
        ann.app.register_player(f"p{n}", f"p{n}")
    counts = told(ann)

    def send(n: int) -> Any:
        if n % 2:  # other players' deposits share the batches
            return ann.app.deposit(f"p{n % THREADS}", "real", 100)
        return deposit_once(ann)

    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = list(pool.map(send, range(4 * THREADS)))
    duplicates = outcomes[::2]
    assert_applied_once(ann, duplicates)
    assert counts.outcomes["replayed"] == len(duplicates) - 1
    for n in range(1, THREADS, 2):
        assert ann.app.wallet(f"p{n}", "real").balance_cents == 400
    # No repeat's unsaved deposit reached the commands' cache: $5.01 is not there
    with pytest.raises(InsufficientFunds):
        ann.app.withdraw("ann", "real", 501)


def test_a_repeat_at_another_server_whose_cache_is_stale_is_replayed_not_retried(
    stores: StoreFactory, ann: Store
) -> None:
    other = stores.open()
    first = other.app.deposit.with_receipt(remembered("k"), "ann", "real", 500)  # caches it
    ann.app.deposit("ann", "real", 100)  # the other server's cached wallet is stale now
    counts = told(other)
    again = other.app.deposit.with_receipt(remembered("k"), "ann", "real", 500)
    assert_replayed_not_retried(again, first, counts)
    assert ann.app.wallet("ann", "real").balance_cents == 600
    other.app.deposit("ann", "real", 1)  # and its cache serves the next command right
    assert other.app.wallet("ann", "real").balance_cents == 601


def test_a_repeat_refused_by_a_stale_cache_is_replayed_not_counted_as_a_retry(
    stores: StoreFactory, ann: Store
) -> None:
    other = stores.open()
    other.app.deposit("ann", "real", 500)
    first = other.app.withdraw.with_receipt(withdrawal("w"), "ann", "real", 500)  # cached: $0
    ann.app.deposit("ann", "real", 100)  # the cached wallet is stale; $1 would not do
    counts = told(other)
    again = other.app.withdraw.with_receipt(withdrawal("w"), "ann", "real", 500)
    assert_replayed_not_retried(again, first, counts)
    assert ann.app.wallet("ann", "real").balance_cents == 100


def test_a_genuine_conflict_with_another_server_still_retries_and_applies(
    stores: StoreFactory, ann: Store
) -> None:
    other = stores.open()
    other.app.deposit("ann", "real", 500)  # cached by the other server
    ann.app.deposit("ann", "real", 100)
    counts = told(other)
    outcome = other.app.deposit.with_receipt(remembered("fresh"), "ann", "real", 50)
    assert not outcome.replayed
    assert ann.app.wallet("ann", "real").balance_cents == 650
    assert counts.retries == Counter(conflict=1)
    assert counts.outcomes == Counter(applied=1)


def test_duplicates_at_two_servers_at_once_apply_once(stores: StoreFactory, ann: Store) -> None:
    other = stores.open()
    servers = [ann, other]

    def send(n: int) -> Any:
        return deposit_once(servers[n % 2])

    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = list(pool.map(send, range(4 * THREADS)))
    assert_applied_once(ann, outcomes)


def test_a_save_of_no_event_racing_a_save_of_events_on_one_key_keeps_one_receipt(
    ann: Store,
) -> None:
    # One request whose command saves an event, or none, by the state it finds: a
    # repeat may save no event while the first is still in flight.
    ann.app.deposit("ann", "real", 500)

    def once(unit: Any) -> str:
        wallet = load_wallet(unit, "ann", "real")
        if wallet.balance_cents >= 500:
            wallet.withdraw("t", 500)
            return "withdrawn"
        return "nothing left"

    said = Receipt("race", "fingerprint", lambda result: {"said": result})
    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = list(pool.map(lambda _: ann.commands.run(once, said), range(4 * THREADS)))
    assert ann.app.wallet("ann", "real").balance_cents == 0
    assert {str(o.answer) for o in outcomes} == {str({"said": "withdrawn"})}
    assert sum(not o.replayed for o in outcomes) == 1


def test_a_repeat_that_read_a_stale_cached_aggregate_is_replayed_not_retried(
    stores: StoreFactory, ann: Store
) -> None:
    ann.app.register_player("bob", "Bob")
    other = stores.open()

    def pay_ann_as_bob_reads(unit: Any) -> Any:
        load_wallet(unit, "bob", "real")  # read, not changed: the save will not check it
        return pay_ann(unit)

    key = Receipt("k", "fingerprint", lambda result: {"said": result})
    first = other.commands.run(pay_ann_as_bob_reads, key)  # the other server caches bob's wallet
    ann.app.deposit("bob", "real", 100)  # which is stale now
    counts = told(other)
    again = other.commands.run(pay_ann_as_bob_reads, key)
    assert_replayed_not_retried(again, first, counts)
    assert ann.app.wallet("ann", "real").balance_cents == 500


def test_a_save_of_no_event_that_loses_its_key_to_a_row_is_replayed_not_retried(
    stores: StoreFactory, ann: Store
) -> None:
    # The first request saved events (a row); its repeat, saving none, looked for the
    # key while the first was still in flight and found nothing
    said = Receipt("k", "fingerprint", lambda result: {"said": result})
    first = ann.commands.run(pay_ann, said)
    other = stores.open()
    recorder: Any = other.app.recorder
    select = recorder.select_receipt
    recorder.select_receipt = lambda key_id: (setattr(recorder, "select_receipt", select), None)[1]
    counts = told(other)
    again = other.commands.run(lambda unit: "nothing to do", said)
    assert_replayed_not_retried(again, first, counts)


def test_one_key_sent_at_once_with_two_requests_applies_one_and_refuses_the_other(
    ann: Store,
) -> None:
    def send(n: int) -> Any:
        try:
            return ann.app.deposit.with_receipt(
                remembered("k", f"body {n % 2}"), "ann", "real", 500
            )
        except IdempotencyKeyReused:
            return None

    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = list(pool.map(send, range(4 * THREADS)))
    assert ann.app.wallet("ann", "real").balance_cents == 500
    answered = [o for o in outcomes if o is not None]
    assert sum(not o.replayed for o in answered) == 1
    refused = {n % 2 for n, o in enumerate(outcomes) if o is None}
    assert len(refused) == 1 and len(outcomes) - len(answered) == 2 * THREADS


def test_a_save_lost_with_its_connection_before_it_landed_is_made_once(ann: Store) -> None:
    recorder: Any = ann.app.recorder
    insert = recorder.insert_events

    def fail_once(*args: Any, **kwargs: Any) -> Any:
        recorder.insert_events = insert
        raise OperationalError("server closed the connection unexpectedly")

    recorder.insert_events = fail_once
    counts = told(ann)
    outcome = ann.app.deposit.with_receipt(remembered("k"), "ann", "real", 500)
    again = ann.app.deposit.with_receipt(remembered("k"), "ann", "real", 500)
    assert not outcome.replayed and again.replayed and again.answer == outcome.answer
    assert ann.app.wallet("ann", "real").balance_cents == 500
    assert counts.retries == Counter(connection=1)
    assert counts.outcomes == Counter(applied=1, replayed=1)


def test_requests_of_their_own_keys_on_one_wallet_at_once_each_apply(ann: Store) -> None:
    # In-batch and cross-batch conflicts on the wallet, none on a key: all retried
    counts = told(ann)

    def send(n: int) -> Any:
        return ann.app.deposit.with_receipt(remembered(f"k{n}"), "ann", "real", 100 + n)

    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = list(pool.map(send, range(4 * THREADS)))
    assert not any(o.replayed for o in outcomes)
    assert ann.app.wallet("ann", "real").balance_cents == sum(100 + n for n in range(4 * THREADS))
    assert counts.outcomes == Counter(applied=4 * THREADS)


def test_duplicates_at_once_on_a_store_that_seals_nothing_apply_once(
    stores: StoreFactory,
) -> None:
    # PostgreSQL saves such a store's receipts in another script (its position read
    # under the lock, not given): the key must fail there too
    unsealed = open_store(stores.url, postgres_schema=stores.schema, pool_size=2)
    stores.opened.append(unsealed)
    unsealed.app.register_player("ann", "Ann")
    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = list(pool.map(lambda _: deposit_once(unsealed), range(4 * THREADS)))
    assert_applied_once(unsealed, outcomes)


def test_a_first_request_is_not_looked_up_and_a_repeat_once(ann: Store) -> None:
    # What the receipts table is for: no lookup on the way of a command that lands
    recorder: Any = ann.app.recorder
    select = recorder.select_receipt
    looked: list[Any] = []
    recorder.select_receipt = lambda key_id: looked.append(key_id) or select(key_id)
    first = deposit_once(ann)
    assert looked == []
    again = deposit_once(ann)
    assert again.replayed and again.answer == first.answer
    assert looked == [receipt_uuid("once")]
