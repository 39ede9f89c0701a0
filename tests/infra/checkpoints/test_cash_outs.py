"""Money that leaves waits for the witness (rules.md 5, 8): a withdrawal is answered
201 only once a checkpoint covering its save has been acknowledged by the JetStream
witness; with the witness known to be unreachable it is refused before anything is
saved; if the witness fails after the save, the debit stands and a retry with the
same key once it is back gets the 201. On both stores."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from infra.audit.verify import verify
from infra.checkpoints.format import Checkpoint, parse
from infra.checkpoints.witnesses import WitnessUnavailable, open_witness
from infra.store import chain as event_chain
from infra.store import receipts
from infra.store import seal as seals
from infra.store.store import Store
from tests.conftest import SEAL_KEY, StoreFactory
from tests.infra.audit.test_verify import Attacker
from tests.infra.checkpoints.nats_server import NatsServer
from tests.infra.http.helpers import serving

WITHDRAWAL = {"mode": "real", "amount": "5.00"}
CASH_OUT = {"mode": "real", "amount": "48.01"}
SLOW = 3_600.0  # the worker's own notes never due during a test: only cash-outs note


def noted_positions(server: NatsServer) -> list[int]:
    records = [parse(data) for data in server.records()]
    return [r.position for r in records if isinstance(r, Checkpoint)]


def test_a_withdrawal_is_answered_once_the_witness_holds_a_checkpoint_covering_it(
    store: Store, nats_server: NatsServer
) -> None:
    store.app.register_player("ann", "Ann")
    witness = nats_server.url()
    with serving(store, background=True, witness=witness, witness_seconds=SLOW) as api:
        api.deposit("ann", "10.00")
        answer = api.post("/v1/players/ann/withdrawals", WITHDRAWAL, key="w1")
        # Then when the 201 comes, the witness already holds a checkpoint past its save
        assert answer.status_code == 201, answer.text
        position = int(answer.headers["Casino-Position"])
        assert max(noted_positions(nats_server)) >= position
        # And a deposit does not wait for one: nothing leaves
        before = len(noted_positions(nats_server))
        api.deposit("ann", "1.00")
        assert len(noted_positions(nats_server)) == before


def test_withdrawals_one_after_another_are_each_answered_once_covered(
    store: Store, nats_server: NatsServer
) -> None:
    store.app.register_player("ann", "Ann")
    witness = nats_server.url()
    with serving(store, background=True, witness=witness, witness_seconds=SLOW) as api:
        api.deposit("ann", "20.00")
        # When withdrawals follow one another, each noted by a cash-out's own note
        for n in range(3):
            answer = api.post("/v1/players/ann/withdrawals", WITHDRAWAL, key=f"w{n}")
            # Then each is answered 201 once covered, not only the first
            assert answer.status_code == 201, answer.text
            position = int(answer.headers["Casino-Position"])
            assert max(noted_positions(nats_server)) >= position
        assert api.wallet("ann")["balance"] == "5.00"


def test_with_the_witness_down_a_withdrawal_is_refused_and_nothing_is_saved(
    store: Store, nats_server: NatsServer
) -> None:
    store.app.register_player("ann", "Ann")
    with serving(store, background=True, witness=nats_server.url(), witness_seconds=0.1) as api:
        api.deposit("ann", "10.00")
        nats_server.stop()
        api.deposit("ann", "1.00")  # deposits and play go on
        # Once the worker has found the witness down
        waited_for(lambda: not ready_with_witness(api))
        answer = api.post("/v1/players/ann/withdrawals", WITHDRAWAL, key="w1")
        assert (answer.status_code, answer.json()["code"]) == (503, "witness_unavailable")
        assert "nothing was done" in answer.json()["detail"]
        assert api.wallet("ann")["balance"] == "11.00"
        # And when it is back, the same request is made once
        nats_server.start()
        waited_for(lambda: ready_with_witness(api))
        again = api.post("/v1/players/ann/withdrawals", WITHDRAWAL, key="w1")
        assert again.status_code == 201, again.text
        assert api.wallet("ann")["balance"] == "6.00"


def test_a_witness_that_fails_after_the_save_leaves_the_debit_and_a_retry_gets_the_201(
    store: Store, nats_server: NatsServer
) -> None:
    store.app.register_player("ann", "Ann")
    witness = nats_server.url()
    with serving(store, background=True, witness=witness, witness_seconds=SLOW) as api:
        api.deposit("ann", "10.00")
        waited_for(lambda: bool(noted_positions(nats_server)))  # the worker's first note
        worker: Any = api.client.app.state.witness  # type: ignore[attr-defined]
        note = worker.witness.note

        def refused(checkpoint: Checkpoint) -> str:
            raise WitnessUnavailable("the witness did not acknowledge in time")

        worker.witness.note = refused
        first = api.post("/v1/players/ann/withdrawals", WITHDRAWAL, key="w1")
        assert (first.status_code, first.json()["code"]) == (503, "witness_unavailable")
        assert "the debit stands" in first.json()["detail"]
        assert api.wallet("ann")["balance"] == "5.00"  # saved: not known to be witnessed
        worker.witness.note = note
        worker.problem = None  # as the worker's next pass would find it
        again = api.post("/v1/players/ann/withdrawals", WITHDRAWAL, key="w1")
        assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (201, "true")
        assert api.wallet("ann")["balance"] == "5.00"
        assert max(noted_positions(nats_server)) >= int(first.headers.get("Casino-Position", 0))


def ready_with_witness(api: Any) -> bool:
    checks = api.client.get("/v1/health/ready").json()["checks"]
    return bool(next(c for c in checks if c["name"] == "workers")["ok"])


def waited_for(condition: Callable[[], bool], seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "it never came to pass"
        time.sleep(0.05)


@pytest.fixture
def attacker(stores: StoreFactory, store: Store) -> Iterator[Attacker]:
    evil = Attacker(stores)
    yield evil
    evil.close()


def test_an_acknowledged_cash_out_cut_from_the_tail_is_named_and_not_paid_twice(
    stores: StoreFactory, store: Store, nats_server: NatsServer, attacker: Attacker
) -> None:
    # Given a withdrawal of $48.01 answered 201 (so witnessed), the server stopped
    store.app.register_player("ann", "Ann")
    witness = nats_server.url()
    with serving(store, background=True, witness=witness, witness_seconds=SLOW) as api:
        api.deposit("ann", "100.00")
        paid = api.post("/v1/players/ann/withdrawals", CASH_OUT, key="w")
        assert paid.status_code == 201, paid.text
    # When the insider cuts its save from the tail, with everything after it: events,
    # links, seals and receipts, and the server starts again
    cut_from = int(paid.headers["Casino-Position"])
    for table, column in (
        (attacker.events, attacker.position),
        (event_chain.TABLE, "position"),
        (seals.TABLE, "last_position"),
        (receipts.TABLE, "position"),
    ):
        attacker.run(f"DELETE FROM {table} WHERE {column} >= ?", (cut_from,))
    restarted = stores.open()
    with serving(restarted, background=True, witness=witness, witness_seconds=SLOW) as api:
        # Then the same request is not paid again: the witness holds a checkpoint the
        # store no longer does, so no money leaves until someone has looked
        waited_for(lambda: not ready_with_witness(api))
        again = api.post(
            "/v1/players/ann/withdrawals", {"mode": "real", "amount": "48.01"}, key="w"
        )
        assert (again.status_code, again.json()["code"]) == (503, "witness_unavailable")
        assert api.wallet("ann")["balance"] == "100.00"
    # And verify, with the witness, names the cut
    problems = verify(restarted, None, lambda _: None, public_key=SEAL_KEY.public_key(),
                      witness=open_witness(witness)).problems  # fmt: skip
    # (the restart's own events took the cut positions: the seal there is another)
    named = ("no seal ending at position", "is not the one the witness saw")
    assert any(p.startswith("witness") and any(n in p for n in named) for p in problems), problems
