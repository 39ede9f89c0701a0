"""What an operator sees: Prometheus metrics that move with the traffic, liveness, and
readiness that names what is wrong."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError, OperationalError

from domain.wallet import Wallet
from infra.commands import seam
from infra.store.store import Store
from infra.workers import IdleRoundWorker
from tests.conftest import Api, StoreFactory, eventually, every_store_event
from tests.infra.http.helpers import later, serving


def scrape(api: Api) -> dict[str, float]:
    """Every sample of /metrics, by its name and labels as printed."""
    answer = api.client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for line in answer.text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def sample(samples: dict[str, float], name: str, **labels: str) -> float:
    """The sum of the samples of `name` whose labels include these."""
    total = 0.0
    for key, value in samples.items():
        found, _, rest = key.partition("{")
        given = dict(re.findall(r'(\w+)="([^"]*)"', rest))
        if found == name and all(given.get(k) == v for k, v in labels.items()):
            total += value
    return total


def test_requests_commands_saves_and_the_log_are_counted(api: Api, store: Store) -> None:
    api.player("alice", real="10.00")
    api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "1.00"}, key="d-1")
    api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "1.00"}, key="d-1")
    api.post("/v1/players/alice/withdrawals", {"mode": "real", "amount": "99.00"})
    api.get("/v1/players/alice/ledger")
    samples = scrape(api)
    route = "/v1/players/{player_id}/deposits"
    assert sample(samples, "casino_http_requests_total", route=route, status="201") == 3
    assert sample(samples, "casino_http_request_duration_seconds_count", route=route) == 3
    withdrawals = "/v1/players/{player_id}/withdrawals"
    assert sample(samples, "casino_http_requests_total", route=withdrawals, status="409") == 1
    assert sample(samples, "casino_commands_total", command="deposit", outcome="applied") == 2
    assert sample(samples, "casino_commands_total", command="deposit", outcome="replayed") == 1
    assert sample(samples, "casino_commands_total", command="withdraw", outcome="refused") == 1
    head = store.projector.head()
    assert sample(samples, "casino_saves_total") == 3  # register, two deposits
    assert sample(samples, "casino_group_commit_saves_total") == 3
    assert 1 <= sample(samples, "casino_group_commit_transactions_total") <= 3
    assert sample(samples, "casino_events_written_total") == head
    assert sample(samples, "casino_projection_head") == head
    assert sample(samples, "casino_seal_position") == head  # every event sealed
    assert sample(samples, "casino_projection_position") == head  # the ledger read caught up
    assert sample(samples, "casino_projection_lag") == 0


def test_a_conflict_with_another_process_is_a_retry(api: Api, stores: StoreFactory) -> None:
    api.player("alice", real="10.00")
    elsewhere = stores.open()  # another server on the same store
    elsewhere.app.deposit("alice", "real", 100)  # this server's cached wallet is now stale
    api.deposit("alice", "1.00")
    samples = scrape(api)
    assert sample(samples, "casino_command_retries_total", command="deposit") >= 1
    assert api.wallet("alice")["balance"] == "12.00"


def test_a_command_that_loses_every_race_is_counted_exhausted(
    api: Api, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.player("alice", real="10.00")

    def conflicting(*_: Any, **__: Any) -> Any:
        raise IntegrityError("another command saved first")

    monkeypatch.setattr(store.app.recorder, "insert_events", conflicting)
    monkeypatch.setattr(store.commands, "_sleep", lambda _: None)
    answer = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "1.00"})
    assert (answer.status_code, answer.json()["code"]) == (503, "concurrent_update")
    samples = scrape(api)
    assert sample(samples, "casino_commands_total", command="deposit", outcome="exhausted") == 1
    retries = seam.ATTEMPTS_MAX - 1
    assert sample(samples, "casino_command_retries_total", reason="conflict") == retries


def test_a_failed_snapshot_is_counted(
    api: Api, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*_: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store.app.snapshots, "put", failing)
    monkeypatch.setitem(store.app.snapshotting_intervals, Wallet, 1)  # every save is due
    api.player("alice", real="10.00")
    assert sample(scrape(api), "casino_snapshot_failures_total") >= 1
    assert api.wallet("alice")["balance"] == "10.00"  # the command still landed


def test_a_worker_action_is_counted(api: Api, store: Store) -> None:
    api.player("alice", real="10.00")
    opened = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"})
    api.post(f"/v1/rounds/{opened.json()['round_id']}/bets", {"spot": "player", "amount": "5"})
    worker = IdleRoundWorker(store, 60)
    worker.observer = api.client.app.state.metrics  # type: ignore[attr-defined]
    assert len(worker.void_idle_rounds(later(120))) == 1
    samples = scrape(api)
    labels = {"worker": "idle_rounds", "action": "idle_round_ended"}
    assert sample(samples, "casino_worker_actions_total", **labels) == 1


def test_liveness_reads_nothing(api: Api, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store.projector, "head", lambda: 1 / 0)
    answer = api.client.get("/v1/health/live")
    assert (answer.status_code, answer.json()) == (200, {"status": "alive"})


def test_a_server_with_its_workers_is_ready(store: Store) -> None:
    with serving(store, background=True) as api:
        answer = api.client.get("/v1/health/ready")
        assert answer.status_code == 200, answer.text
        assert answer.json()["status"] == "ready"
        checks = {check["name"]: check["ok"] for check in answer.json()["checks"]}
        assert checks == {
            "store": True, "log": True, "start": True, "projector": True, "workers": True
        }  # fmt: skip
        workers = next(c for c in answer.json()["checks"] if c["name"] == "workers")
        assert workers["detail"] == (
            "store_watch, idle_rounds, lapsed_provider_rounds, abandoned_rounds, due_choices, "
            "exclusions, bonus_expiry, significant_events, receipt_pruner, witness"
        )
        deadline = time.monotonic() + 10
        while not sample(scrape(api), "casino_worker_ticks_total", worker="projector"):
            assert time.monotonic() < deadline, "the projector never ticked"
            time.sleep(0.05)


def test_a_start_up_event_the_store_could_not_take_is_saved_once_it_can(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store that refuses the server's first save (down as it starts)
    record = store.app.record_significant
    refused: list[str] = []

    def down_once(kind: str, details: dict[str, Any]) -> Any:
        if kind == "started" and not refused:
            refused.append(kind)
            raise OperationalError("connection refused")
        return record(kind, details)

    monkeypatch.setattr(store.app, "record_significant", down_once)
    with serving(store, background=True) as api:
        # Then the server starts, not ready until its start-up is saved, which the
        # store watch tries again every second
        first = api.client.get("/v1/health/ready")
        ready = eventually(
            lambda: api.client.get("/v1/health/ready"), lambda a: a.status_code == 200
        )
    assert refused == ["started"]
    if first.status_code == 503:  # unless the watch was quicker than the first look
        assert first.json()["detail"] == (
            "start: its start-up event is not saved yet: connection refused"
        )
    assert {c["name"]: c["ok"] for c in ready.json()["checks"]}["start"]
    started = [e for e in every_store_event(store) if getattr(e, "kind", None) == "started"]
    assert len(started) == 1


def failing_checks(answer: Any) -> dict[str, str]:
    return {c["name"]: c["detail"] for c in answer.json()["checks"] if not c["ok"]}


def test_a_separate_projector_that_is_not_running_degrades_a_ready_server(
    store: Store,
) -> None:
    # Commands still save without it (rules.md 8): a failing check inside a 200
    store.projector_inside = False
    with serving(store, projector="separate") as api:
        answer = api.client.get("/v1/health/ready")
        assert (answer.status_code, answer.json()["status"]) == (200, "degraded")
        assert failing_checks(answer) == {
            "projector": "no separate projector has ever run on this store"
        }
        store.projector.beat(time.time() - 60)  # one ran, a minute ago
        answer = api.client.get("/v1/health/ready")
        assert answer.status_code == 200
        assert failing_checks(answer)["projector"].startswith(
            "the separate projector (casino projections run) is not running"
        )
        store.projector.beat(time.time())  # it runs again
        answer = api.client.get("/v1/health/ready")
        assert (answer.status_code, answer.json()["status"]) == (200, "ready")


def test_a_store_that_does_not_answer_is_a_503_everywhere_but_liveness(
    api: Api, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store.projector, "head", lambda: 1 / 0)
    health = api.client.get("/v1/health")
    assert (health.status_code, health.json()["code"]) == (503, "store_unavailable")
    ready = api.client.get("/v1/health/ready")
    assert (ready.status_code, ready.json()["code"]) == (503, "not_ready")
    assert ready.json()["detail"] == "store: the store does not answer: division by zero"
    assert api.client.get("/metrics").status_code == 200  # without the store's gauges


def test_a_witness_that_cannot_write_degrades_a_ready_server(store: Store, tmp_path: Any) -> None:
    # Given a witness file where no file can be made (its directory is a file)
    (tmp_path / "not-a-directory").write_text("")
    witness = str(tmp_path / "not-a-directory" / "witness.jsonl")
    store.app.register_player("ann", "Ann")  # a seal to note
    with serving(store, background=True, witness=witness) as api:
        deadline = time.monotonic() + 10
        while (answer := api.client.get("/v1/health/ready")).json()["status"] == "ready":
            assert time.monotonic() < deadline, "readiness never saw the witness fail"
            time.sleep(0.05)
        # Then readiness names it, a failing check of a server that still saves
        assert answer.status_code == 200
        assert f"the witness cannot write {witness}" in failing_checks(answer)["workers"]


def test_the_witness_notes_the_last_seal_when_the_server_stops(store: Store, tmp_path: Any) -> None:
    # Given a serving server whose witness has made its first note
    witness = tmp_path / "witness.jsonl"
    store.app.register_player("ann", "Ann")
    with serving(store, background=True, witness=str(witness)) as api:
        deadline = time.monotonic() + 10
        while not witness.is_file() or not witness.read_text().strip():
            assert time.monotonic() < deadline, "the witness never made its first note"
            time.sleep(0.05)
        # When it saves a little more (neither seconds nor events due) and stops
        answer = api.post("/v1/players/ann/deposits", {"mode": "real", "amount": "5.00"})
        assert answer.status_code == 201, answer.text
    # Then the witness's last note is the log's last seal: nothing the server saved
    # waits for its next start to be noted, while a tail could be cut unseen
    last = json.loads(witness.read_text().splitlines()[-1])
    assert last["position"] == store.app.recorder.max_notification_id()
