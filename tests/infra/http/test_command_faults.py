"""Faults on the command path, through HTTP: a command route answers a lost
connection or a refused save as the seam's run does in process
(tests/infra/store/test_faults.py), on both stores."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import OperationalError

from infra.store.seal import LogTampered
from infra.store.store import Store
from tests.conftest import Api, StoreFactory

DEPOSIT = {"mode": "real", "amount": "1.00"}


def fail_the_next_save(store: Store, error: Exception, *, land: bool) -> list[int]:
    """The next save raises `error`, after it committed (`land`) or before; how many
    saves it has failed so far."""
    recorder: Any = store.app.recorder
    insert, failed = recorder.insert_events, []

    def failing(*args: Any, **kwargs: Any) -> Any:
        recorder.insert_events = insert
        failed.append(1)
        if land:
            insert(*args, **kwargs)
        raise error

    recorder.insert_events = failing
    return failed


def test_a_save_whose_answer_was_lost_is_answered_from_its_receipt_once(
    api: Api, store: Store
) -> None:
    api.player("alice", real="10.00")  # the wallet is cached: the deposit runs on the loop
    failed = fail_the_next_save(store, OperationalError("server closed the connection"), land=True)
    first = api.post("/v1/players/alice/deposits", DEPOSIT, key="k")
    assert failed == [1]
    assert (first.status_code, first.headers.get("Idempotent-Replayed")) == (201, "true")
    again = api.post("/v1/players/alice/deposits", DEPOSIT, key="k")
    assert again.json() == first.json()
    assert api.wallet("alice")["balance"] == "11.00"


def test_a_save_lost_before_it_landed_is_made_once(api: Api, store: Store) -> None:
    api.player("alice", real="10.00")
    failed = fail_the_next_save(store, OperationalError("server closed the connection"), land=False)
    first = api.post("/v1/players/alice/deposits", DEPOSIT, key="k")
    assert failed == [1]
    assert (first.status_code, first.headers.get("Idempotent-Replayed")) == (201, None)
    assert first.json()["wallet"]["balance"] == "11.00"
    assert api.wallet("alice")["balance"] == "11.00"


def test_a_save_the_store_refuses_as_tampered_is_answered_503_and_changes_nothing(
    api: Api, store: Store
) -> None:
    api.player("alice", real="10.00")
    fail_the_next_save(store, LogTampered("events after position 3 are in no seal"), land=False)
    refused = api.post("/v1/players/alice/deposits", DEPOSIT, key="k")
    assert (refused.status_code, refused.json()["code"]) == (503, "log_tampered")
    assert api.wallet("alice")["balance"] == "10.00"
    # The same request again, once the store saves again, is made, once.
    again = api.post("/v1/players/alice/deposits", DEPOSIT, key="k")
    assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (201, None)
    assert api.wallet("alice")["balance"] == "11.00"


def test_a_command_on_a_wallet_another_server_moved_on_is_decided_again_once(
    stores: StoreFactory, store: Store, api: Api
) -> None:
    api.player("alice", real="10.00")  # cached here, at its version then
    other = stores.open()
    other.app.withdraw("alice", "real", 900)  # another server takes $9.00 meanwhile
    # Decided on the loop from the stale cached wallet, its save conflicts; it is
    # decided again on the wallet as stored.
    moved = api.post("/v1/players/alice/deposits", DEPOSIT, key="k")
    assert moved.status_code == 201
    assert moved.json()["wallet"]["balance"] == "2.00"
    # A refusal reached from a stale cached wallet is checked against the store too.
    other.app.deposit("alice", "real", 500)
    taken = api.post("/v1/players/alice/withdrawals", {"mode": "real", "amount": "6.00"})
    assert taken.status_code == 201, taken.text
    assert api.wallet("alice")["balance"] == "1.00"
