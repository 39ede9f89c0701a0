"""Receipts in their own table (infra/store/receipts.py), on both stores: kept beside
the command's events, answered while they live, refused once expired, pruned without
freeing the key, and changed by nothing but pruning."""

from __future__ import annotations

import datetime
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest

from domain.errors import IdempotencyKeyExpired, IdempotencyKeyReused
from domain.outcome import Receipt
from infra.audit.verify import verify
from infra.commands.receipt import CommandReceipt
from infra.store import receipts as receipt_rows
from infra.store.store import Store
from infra.workers import ReceiptPruner
from tests.conftest import POSTGRES_URL, SEAL_KEY, StoreFactory, every_store_event

DAY = datetime.timedelta(days=1)


def remembered(key: str, fingerprint: str = "fingerprint") -> Receipt[Any]:
    return Receipt(key, fingerprint, lambda movement: {"id": movement.transaction_id})


def deposit(store: Store, key: str, cents: int = 500, fingerprint: str = "fingerprint") -> Any:
    return store.app.deposit.with_receipt(remembered(key, fingerprint), "ann", "real", cents)


@pytest.fixture
def ann(store: Store) -> Store:
    store.app.register_player("ann", "Ann")
    return store


class Service:
    """The service's own connection to the store, as its role may use it."""

    def __init__(self, stores: StoreFactory) -> None:
        self.connection: Any
        self.dialect = stores.backend
        if stores.backend == "sqlite":
            path = stores.url.removeprefix("sqlite:///")
            self.connection = sqlite3.connect(path, isolation_level=None)
        else:
            self.connection = psycopg.connect(POSTGRES_URL, autocommit=True)
            self.connection.execute(f"SET search_path TO {stores.schema}")

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        if self.dialect == "postgres":
            sql = sql.replace("?", "%s")
        cursor = self.connection.execute(sql, params)
        return list(cursor.fetchall()) if cursor.description else []


@pytest.fixture
def service(stores: StoreFactory, store: Store) -> Iterator[Service]:
    own = Service(stores)
    yield own
    own.connection.close()


def answers(service: Service) -> list[Any]:
    return [row[0] for row in service.run(f"SELECT answer FROM {receipt_rows.TABLE}")]


def later(store: Store, days: float) -> None:
    """Move the application's clock `days` on."""
    moved = datetime.datetime.now(datetime.UTC) + days * DAY
    store.app.clock = lambda: moved


def test_a_receipt_is_kept_beside_the_events_and_answers_a_repeat(
    ann: Store, service: Service
) -> None:
    first = deposit(ann, "k1")
    again = deposit(ann, "k1")
    assert again.replayed and again.answer == first.answer
    assert ann.app.wallet("ann", "real").balance_cents == 500
    kinds = {type(event) for event in every_store_event(ann)}
    assert CommandReceipt.Created not in kinds
    assert len(answers(service)) == 1
    assert verify(ann, None, lambda _: None, public_key=SEAL_KEY.public_key()).problems == []


def test_a_key_past_its_retention_is_refused_and_nothing_is_done(ann: Store) -> None:
    deposit(ann, "k1")
    later(ann, 91)
    with pytest.raises(IdempotencyKeyExpired):
        deposit(ann, "k1")
    with pytest.raises(IdempotencyKeyExpired):  # another body: the key is still taken
        deposit(ann, "k1", 700, fingerprint="other")
    assert ann.app.wallet("ann", "real").balance_cents == 500


def test_the_retention_is_configurable(ann: Store) -> None:
    deposit(ann, "k1")
    ann.commands.receipt_retention_days = 200
    later(ann, 91)
    assert deposit(ann, "k1").replayed


def test_the_pruner_drops_expired_answers_keeps_the_key_and_verify_holds(
    ann: Store, service: Service
) -> None:
    deposit(ann, "old")
    later(ann, 60)
    deposit(ann, "recent")
    pruned = ReceiptPruner(ann).prune(datetime.datetime.now(datetime.UTC) + 91 * DAY)
    assert pruned == 1
    assert sorted(answer is None for answer in answers(service)) == [False, True]
    with pytest.raises(IdempotencyKeyExpired):
        deposit(ann, "old")
    assert deposit(ann, "recent").replayed
    assert ann.app.wallet("ann", "real").balance_cents == 1000
    later(ann, 91)  # the audit, no earlier than the pruner: "old" was pruned in its time
    report = verify(ann, None, lambda _: None, public_key=SEAL_KEY.public_key())
    assert report.problems == [] and report.receipts == 2


def test_the_table_refuses_every_change_but_pruning(ann: Store, service: Service) -> None:
    deposit(ann, "k1")
    refused = (sqlite3.Error, psycopg.Error)
    with pytest.raises(refused):
        service.run(f"UPDATE {receipt_rows.TABLE} SET answer = ?", (b'{"id":"forged"}',))
    with pytest.raises(refused):
        service.run(f"UPDATE {receipt_rows.TABLE} SET fingerprint = 'other'")
    with pytest.raises(refused):
        service.run(f"DELETE FROM {receipt_rows.TABLE}")
    if service.dialect == "postgres":
        with pytest.raises(refused):
            service.run(f"TRUNCATE {receipt_rows.TABLE}")
    assert deposit(ann, "k1").replayed  # still there, unchanged
    service.run(f"UPDATE {receipt_rows.TABLE} SET answer = NULL")  # pruning: allowed
    with pytest.raises(IdempotencyKeyExpired):
        deposit(ann, "k1")


def test_one_request_sent_at_once_from_many_threads_lands_once(ann: Store) -> None:
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda _: deposit(ann, "same"), range(16)))
    assert sum(not outcome.replayed for outcome in outcomes) == 1
    assert len({str(outcome.answer) for outcome in outcomes}) == 1
    assert ann.app.wallet("ann", "real").balance_cents == 500


def test_a_receipt_event_of_an_older_store_still_answers_and_expires(ann: Store) -> None:
    # Stores written before the table hold receipts as events of the log.
    movement = ann.app.deposit("ann", "real", 500).result
    assert movement is not None
    answer = {"id": movement.transaction_id}
    ann.app.save(CommandReceipt("legacy", "fingerprint", answer))
    again = deposit(ann, "legacy")
    assert again.replayed and again.answer == answer
    later(ann, 91)
    with pytest.raises(IdempotencyKeyExpired):
        deposit(ann, "legacy")
    assert ann.app.wallet("ann", "real").balance_cents == 500


def test_a_repeat_gets_its_first_answer_even_where_the_command_would_now_be_refused(
    ann: Store,
) -> None:
    # The repeat is not run against today's state: the balance is gone since
    deposit(ann, "top-up")
    withdrawal = Receipt("all", "fingerprint", lambda movement: {"id": movement.transaction_id})
    first = ann.app.withdraw.with_receipt(withdrawal, "ann", "real", 500)
    again = ann.app.withdraw.with_receipt(withdrawal, "ann", "real", 500)
    assert again.replayed and again.answer == first.answer
    assert ann.app.wallet("ann", "real").balance_cents == 0


def test_a_command_that_saves_nothing_keeps_its_receipt_and_answers_a_repeat(ann: Store) -> None:
    # No event to hang a row on: the receipt is an event of the log, one per key still
    said = Receipt("nothing", "fingerprint", lambda result: {"said": result})
    first = ann.commands.run(lambda unit: "nothing to do", said)
    again = ann.commands.run(lambda unit: "something else", said)
    assert not first.replayed and again.replayed
    assert again.answer == {"said": "nothing to do"}
    reused = Receipt("nothing", "another request", lambda movement: {"id": movement.transaction_id})
    with pytest.raises(IdempotencyKeyReused):  # the key is taken, whichever kind its receipt
        ann.app.deposit.with_receipt(reused, "ann", "real", 500)
    assert ann.app.wallet("ann", "real").balance_cents == 0


def quiet(key: str) -> Receipt[Any]:
    """The receipt of a request that succeeds saving no event: its receipt goes to the
    log as an event, since a row of the table hangs on a save's position."""
    return Receipt(key, "quiet", lambda _: {"saved": "nothing"})


def test_a_request_that_saves_no_event_keeps_its_receipt_and_answers_a_repeat(ann: Store) -> None:
    first = ann.commands.run(lambda unit: None, quiet("q1"))
    again = ann.commands.run(lambda unit: None, quiet("q1"))
    assert again.replayed and again.answer == first.answer == {"saved": "nothing"}
    with pytest.raises(IdempotencyKeyReused):
        deposit(ann, "q1")
    assert ann.app.wallet("ann", "real").balance_cents == 0
    assert verify(ann, None, lambda _: None, public_key=SEAL_KEY.public_key()).problems == []


def test_one_key_is_never_answered_both_by_a_save_with_events_and_one_without(
    ann: Store,
) -> None:
    # Given a request that saves no event, and the same key's deposit landing while it
    # is decided (two requests racing): the later save must find the key taken.
    def saving_nothing_while_the_deposit_lands(unit: Any) -> None:
        deposit(ann, "k1")

    with pytest.raises(IdempotencyKeyReused):
        ann.commands.run(saving_nothing_while_the_deposit_lands, quiet("k1"))
    assert ann.app.wallet("ann", "real").balance_cents == 500


def test_one_key_is_never_answered_both_by_a_save_without_events_and_one_with(
    ann: Store,
) -> None:
    # The other order: the deposit is decided while the quiet request lands.
    def deposit_while_the_quiet_request_lands(unit: Any) -> Any:
        ann.commands.run(lambda _: None, quiet("k1"))
        return ann.app.deposit._method(ann.app, unit, "ann", "real", 500)

    with pytest.raises(IdempotencyKeyReused):
        ann.commands.run(deposit_while_the_quiet_request_lands, remembered("k1"))
    assert ann.app.wallet("ann", "real").balance_cents == 0


def test_an_answer_pruned_before_its_time_is_refused_not_run_again_and_named(
    ann: Store, service: Service
) -> None:
    # The service's role may set an answer to NULL (that is pruning): done early, the
    # key is refused as expired, and verify must say it was not the pruner's doing.
    deposit(ann, "k1")
    service.run(f"UPDATE {receipt_rows.TABLE} SET answer = NULL, pruned_ms = 1")
    with pytest.raises(IdempotencyKeyExpired):
        deposit(ann, "k1")
    assert ann.app.wallet("ann", "real").balance_cents == 500
    problems = verify(ann, None, lambda _: None, public_key=SEAL_KEY.public_key()).problems
    assert any("pruned before its 90 days had passed" in problem for problem in problems)
