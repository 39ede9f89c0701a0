"""Read-your-writes: every command's answer names its log position; a read given that
position never answers from read models older than the command. And the health
route shows how far the read models are behind."""

from __future__ import annotations

import json
import threading

import pytest
from fastapi.testclient import TestClient

from infra.config import ConfigError, load_settings
from infra.http.app import create_app
from infra.logs import configure_logging
from infra.store.store import Store
from infra.workers import ProjectorWorker
from tests.conftest import OPERATOR, Api


def deposit_to_alice(api: Api, amount: str) -> object:
    return api.post("/v1/players/alice/deposits", {"mode": "real", "amount": amount})


def position_of(answer: object) -> int:
    return int(answer.headers["Casino-Position"])  # type: ignore[attr-defined]


def test_every_command_answer_names_a_later_position(api: Api, store: Store) -> None:
    registered = api.post("/v1/players", {"player_id": "alice", "display_name": "Alice"})
    deposit = api.post(
        "/v1/players/alice/deposits", {"mode": "real", "amount": "5.00"}, key="dep-1"
    )
    assert 0 < position_of(registered) < position_of(deposit) == store.projector.head()
    deposit_to_alice(api, "1.00")
    replayed = api.post(
        "/v1/players/alice/deposits", {"mode": "real", "amount": "5.00"}, key="dep-1"
    )
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert position_of(replayed) >= position_of(deposit)  # Waiting for it is still enough.


@pytest.fixture
def separate(store: Store) -> Api:
    """A server whose read models another process keeps (CASINO_PROJECTOR=separate)."""
    store.projector_inside = False
    settings = load_settings(database_url=store.url, projector="separate", read_wait_seconds=0.3)
    return Api(TestClient(create_app(store, settings, background=False)))


def ledger(api: Api, min_position: int | None = None) -> object:
    query = "" if min_position is None else f"&min_position={min_position}"
    return api.get(f"/v1/players/alice/ledger?mode=real{query}")


def test_with_a_separate_projector_a_read_waits_for_the_position_it_was_given(
    separate: Api, store: Store
) -> None:
    separate.player("alice")
    deposit = deposit_to_alice(separate, "5.00")
    assert ledger(separate).json()["entries"] == []  # Not projected yet, and not asked to wait.
    catch_up_soon = threading.Timer(0.1, store.projector.catch_up)
    catch_up_soon.start()
    waited = ledger(separate, position_of(deposit))
    catch_up_soon.join()
    assert [e["amount"] for e in waited.json()["entries"]] == ["5.00"]


def test_a_read_that_cannot_reach_its_position_in_time_is_a_503(
    separate: Api, store: Store
) -> None:
    separate.player("alice")
    deposit = deposit_to_alice(separate, "5.00")
    answer = ledger(separate, position_of(deposit))
    assert (answer.status_code, answer.json()["code"]) == (503, "projection_behind")
    assert str(position_of(deposit)) in answer.json()["detail"]


def test_with_the_projector_inside_every_read_includes_every_answered_command(
    api: Api,
) -> None:
    api.player("alice")
    deposit_to_alice(api, "5.00")
    assert [e["amount"] for e in ledger(api).json()["entries"]] == ["5.00"]


def test_health_shows_how_far_the_read_models_are_behind(separate: Api, store: Store) -> None:
    separate.player("alice")
    deposit_to_alice(separate, "5.00")
    behind = separate.get("/v1/health", headers={}).json()
    head = store.projector.head()
    assert behind["status"] == "ok"
    assert behind["projections"] == {"position": 0, "lag": head, "runs": "separate"}
    store.projector.catch_up()
    assert separate.get("/v1/health", headers={}).json()["projections"]["lag"] == 0


def test_the_projector_worker_logs_its_lag(
    store: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("infra.workers.LAG_LOG_SECONDS", 0.0)
    configure_logging("info")
    store.app.register_player("alice", "Alice")
    worker = ProjectorWorker(store)
    worker.tick()
    worker.signal.close()
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    line = next(line for line in lines if line["event"] == "projection_lag")
    head = store.projector.head()
    assert (line["position"], line["lag"], line["applied"]) == (head, 0, head)


def test_reports_accept_a_position_to_wait_for(api: Api) -> None:
    api.player("alice")
    deposit = deposit_to_alice(api, "5.00")
    report = api.get(
        f"/v1/reports/liability?mode=real&min_position={position_of(deposit)}", headers=OPERATOR
    )
    assert report.json()["player_balances"] == "5.00"
    bad = api.get("/v1/reports/liability?min_position=-1", headers=OPERATOR)
    assert bad.status_code == 422


@pytest.mark.parametrize(
    ("setting", "value"), [("projector", "elsewhere"), ("read_wait_seconds", "0")]
)
def test_a_bad_projector_setting_is_refused_by_name(setting: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"CASINO_{setting.upper()}"):
        load_settings(**{setting: value})


def test_a_reconnect_goes_on_when_the_separate_projector_lags(separate: Api) -> None:
    separate.player("alice")
    deposit_to_alice(separate, "5.00")  # Never projected: no projector runs here.
    answer = separate.post("/v1/players/alice/reconnect")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"player_id": "alice", "open_rounds": []}
