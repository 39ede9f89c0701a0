"""Every request is answered within the deadline, and a fault of the store is a 503
`store_unavailable`, never a 500 (rules.md 8), on both stores."""

from __future__ import annotations

import time
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from infra.config import load_settings
from infra.http.app import create_app
from infra.store.faults import NOT_KNOWN
from infra.store.store import Store
from tests.conftest import SERVICE, Api, eventually
from tests.infra.http.helpers import serving

DEPOSIT = {"mode": "real", "amount": "1.00"}
DEADLINE = 1.0  # CASINO_REQUEST_DEADLINE_SECONDS's least


def land_the_next_save_late(store: Store, seconds: float) -> list[float]:
    """The next save commits, then its answer takes `seconds` more; when it landed."""
    recorder: Any = store.app.recorder
    insert, landed = recorder.insert_events, []

    def late(*args: Any, **kwargs: Any) -> Any:
        recorder.insert_events = insert
        ids = insert(*args, **kwargs)
        landed.append(time.monotonic())
        time.sleep(seconds)
        return ids

    recorder.insert_events = late
    return landed


def test_a_command_that_lands_after_the_deadline_is_a_503_then_its_first_answer(
    store: Store,
) -> None:
    with serving(store) as api:  # set up at the patient deadline: a loaded machine is slow
        api.player("alice", real="10.00")
    with serving(store, request_deadline_seconds=DEADLINE) as api:
        landed = land_the_next_save_late(store, DEADLINE + 1)
        started = time.monotonic()
        first = api.post("/v1/players/alice/deposits", DEPOSIT, key="late")
        waited = time.monotonic() - started
        # Answered at the deadline, not when the save came back, saying what a 503 means
        assert (first.status_code, first.json()["code"]) == (503, "store_unavailable")
        assert waited < DEADLINE + 0.5
        assert first.headers["Retry-After"] == "1"
        assert first.headers["X-Request-ID"]
        assert NOT_KNOWN in first.json()["detail"]
        # The save had landed: the retry with the same key gets its answer, once
        assert landed
        again = eventually(
            lambda: api.post("/v1/players/alice/deposits", DEPOSIT, key="late"),
            lambda answer: answer.status_code != 503,
        )
        assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (201, "true")
        assert again.json()["wallet"]["balance"] == "11.00"
        assert api.wallet("alice")["balance"] == "11.00"


def test_a_read_the_store_cannot_answer_is_a_503_not_a_500(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(store) as api:
        api.player("alice", real="10.00")

        def lost(*_: Any, **__: Any) -> Any:
            raise psycopg.OperationalError("server closed the connection unexpectedly")

        monkeypatch.setattr(store.database, "read", lost)
        answer = api.get("/v1/players/alice/ledger?mode=real")
        assert (answer.status_code, answer.json()["code"]) == (503, "store_unavailable")
        assert answer.headers["X-Request-ID"]
        assert "server closed the connection unexpectedly" in answer.json()["detail"]


def test_our_own_bug_is_a_500_that_carries_the_request_id(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(database_url=store.url)
    # Not the contract-checking client: a 500 is in no route's document, being a bug.
    with TestClient(create_app(store, settings, background=False)) as client:
        Api(client).player("alice", real="10.00")
        monkeypatch.setattr(store.app, "wallet", lambda *_: 1 / 0)
        answer = client.get(
            "/v1/players/alice/wallets/real", headers={**SERVICE, "X-Request-ID": "mine-1"}
        )
        assert (answer.status_code, answer.json()["code"]) == (500, "internal_error")
        assert answer.headers["X-Request-ID"] == "mine-1"
        assert "ZeroDivisionError" not in answer.text  # logged, never answered
