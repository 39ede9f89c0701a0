"""A read model that cannot apply an event stops the projector there, loudly: nothing
after it is applied, readiness turns 503 naming it, and reads say why (problem+json),
never a bare 500. Both stores."""

from __future__ import annotations

from typing import Any

import pytest

from infra.store.store import Store
from infra.workers import ProjectorWorker
from projections import balances, ledger
from projections.failure import ProjectionFailed
from projections.runner import Projector
from tests.conftest import OPERATOR, Api

POISON_CENTS = 666  # the deposit a broken read model cannot take


def restarted(store: Store) -> Projector:
    """The projector of a process started again on the same store."""
    old = store.projector
    return Projector(
        old.database, old.recorder, old.to_event, read_notifications=old.read_notifications
    )


def ledger_refusing_the_poison(monkeypatch: pytest.MonkeyPatch) -> None:
    apply = ledger.Ledger.apply

    def refusing(self: ledger.Ledger, event: Any, position: int) -> None:
        if event_is_poison(event):
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        apply(self, event, position)

    monkeypatch.setattr(ledger.Ledger, "apply", refusing)


def event_is_poison(event: Any) -> bool:
    return getattr(event, "amount_cents", None) == POISON_CENTS


def deposits(store: Store, *cents: int) -> list[int]:
    """Deposit each amount; the log position of each."""
    positions = []
    for amount in cents:
        store.app.deposit("alice", "real", amount)
        positions.append(store.projector.head())
    return positions


def test_the_projector_stops_at_the_event_it_cannot_apply_and_says_where(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a ledger that cannot take one deposit, between two it can,
    store.app.register_player("alice", "Alice")
    before, poison, after = deposits(store, 100, POISON_CENTS, 200)
    ledger_refusing_the_poison(monkeypatch)
    # when the projector catches up, it stops at that event, naming it and the model;
    with pytest.raises(ProjectionFailed) as stopped:
        store.projector.catch_up()
    assert (stopped.value.position, stopped.value.read_model) == (poison, "ledger")
    assert "OverflowError" in stopped.value.detail
    # nothing at or after it is applied, in any read model,
    assert store.projector.position() == before
    with store.database.read() as cursor:
        assert dict(balances.trial_balance(cursor, "real"))["player:alice"] == 100
    # it tries no more, and another process reads why it stopped;
    with pytest.raises(ProjectionFailed):
        store.projector.catch_up()
    assert restarted(store).failed() is not None
    # once the read model is fixed and the projector started again, it goes on.
    monkeypatch.undo()
    fixed = restarted(store)
    assert fixed.catch_up() == after - before
    assert fixed.failed() is None


def test_a_write_that_fails_for_a_batch_is_narrowed_to_its_event(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given account balances whose write fails for any batch holding the poisoned deposit,
    store.app.register_player("alice", "Alice")
    first, poison, _ = deposits(store, 100, POISON_CENTS, 200)
    apply, flush = balances.Balances.apply, balances.Balances.flush

    def noting(self: balances.Balances, event: Any, position: int) -> None:
        self.poisoned = getattr(self, "poisoned", False) or event_is_poison(event)
        apply(self, event, position)

    def failing(self: balances.Balances, cursor: Any) -> None:
        if getattr(self, "poisoned", False):
            raise OverflowError("integer overflow")
        flush(self, cursor)

    monkeypatch.setattr(balances.Balances, "apply", noting)
    monkeypatch.setattr(balances.Balances, "flush", failing)
    # when the projector catches up, the events before it are applied, and it is named.
    with pytest.raises(ProjectionFailed) as stopped:
        store.projector.catch_up()
    assert (stopped.value.position, stopped.value.read_model) == (poison, "balances")
    assert store.projector.position() == first


def test_readiness_and_reads_say_why_once_the_projector_stopped(
    api: Api, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the server's projector stopped at an event its ledger cannot apply,
    api.player("alice", real="1.00")
    ledger_refusing_the_poison(monkeypatch)
    api.deposit("alice", "6.66")
    notifications = store.app.recorder.select_notifications(start=1, limit=100)
    poison = [n.id for n in notifications if n.topic == "casino:Wallet.Deposited"][-1]
    worker = ProjectorWorker(store)
    worker.tick()  # It logs `projection_failed` and makes no more passes.
    assert worker._stopping.is_set()
    # then readiness names the read model and the position, in a failing check of a
    # server that still saves commands (rules.md 8),
    ready = api.get("/v1/health/ready")
    assert (ready.status_code, ready.json()["status"]) == (200, "degraded")
    projector = next(c for c in ready.json()["checks"] if c["name"] == "projector")
    assert not projector["ok"]
    assert f"read model ledger cannot apply the event at position {poison}" in projector["detail"]
    # and a read of a read model answers 503 projection_failed, saying the same.
    for path, headers in (
        ("/v1/players/alice/ledger?mode=real", None),
        ("/v1/reports/trial-balance?mode=real", OPERATOR),
    ):
        answer = api.get(path, headers=headers)
        assert answer.status_code == 503, path
        assert answer.headers["content-type"] == "application/problem+json"
        body = answer.json()
        assert (body["code"], body["read_model"], body["position"]) == (
            "projection_failed",
            "ledger",
            poison,
        )


def test_a_read_model_that_fails_to_be_read_is_a_problem_not_a_crash(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.player("alice", real="1.00")

    def broken(*_: Any) -> Any:
        raise AssertionError("an account balance below the limit")

    monkeypatch.setattr(balances, "trial_balance", broken)
    answer = api.get("/v1/reports/trial-balance?mode=real", headers=OPERATOR)
    assert answer.status_code == 503
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "read_model_unavailable"


def test_a_balance_written_into_a_read_model_past_its_limits_is_refused_on_reading(
    api: Api, store: Store
) -> None:
    # Given someone wrote a negative balance straight into the read models,
    api.player("alice", real="1.00")
    api.trial_balance()
    with store.database.write() as cursor:
        cursor.execute(
            "UPDATE account_balances SET balance_cents = -100 WHERE account = 'player:alice'"
        )
        cursor.execute("UPDATE wallet_balances SET held_cents = 1000 WHERE player_id = 'alice'")
    # then the reports that read them answer a problem rather than show it, or crash.
    for path in ("/v1/reports/trial-balance?mode=real", "/v1/reports/liability?mode=real"):
        answer = api.get(path, headers=OPERATOR)
        assert answer.status_code == 503, path
        assert answer.json()["code"] == "read_model_unavailable"


def test_a_read_waiting_for_a_projector_in_another_process_hears_it_stopped(
    api: Api, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given reads that wait for a projector beside the server, and that projector
    # (another process here: another Projector on the same store) stopped at an event,
    api.player("alice", real="1.00")
    store.projector_inside, store.reads_wait_for_head = False, True
    ledger_refusing_the_poison(monkeypatch)
    api.deposit("alice", "6.66")
    with pytest.raises(ProjectionFailed):
        restarted(store).catch_up()
    # then a read answers why at once, not `projection_behind` after the whole wait.
    answer = api.get("/v1/players/alice/ledger?mode=real")
    assert answer.status_code == 503
    assert (answer.json()["code"], answer.json()["read_model"]) == ("projection_failed", "ledger")
