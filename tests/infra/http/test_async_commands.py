"""Command routes (issue 15): with group commit on, a command runs on the event loop
and awaits its save (`CommandSeam.arun`), no thread blocked on it; with it off, the
save is the store's own blocking call and the command runs in a worker thread."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from domain.seam import CommandSeam
from infra.config import load_settings
from infra.http.app import create_app
from infra.store.store import Store
from tests.conftest import SERVICE, Api, StoreFactory

CLIENTS = 16


def refused(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("this driver must not run here")


def test_with_group_commit_a_command_route_awaits_its_save(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(CommandSeam, "run", refused)
    api.player("alice", real="5.00")
    assert api.wallet("alice")["balance"] == "5.00"


def test_without_group_commit_a_command_route_runs_in_a_worker_thread(
    stores: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = stores.open(group_commit=None)
    monkeypatch.setattr(CommandSeam, "arun", refused)
    with TestClient(create_app(store, load_settings(), background=False)) as client:
        api = Api(client)
        api.player("alice", real="5.00")
        assert api.wallet("alice")["balance"] == "5.00"


def test_commands_racing_on_the_loop_for_one_wallet_each_apply_once(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    app = create_app(store, load_settings(), background=False)

    async def race() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://casino") as client:
            answers = await asyncio.gather(
                *(
                    client.post(
                        "/v1/players/alice/deposits",
                        json={"mode": "real", "amount": "1.00"},
                        headers={**SERVICE, "Idempotency-Key": f"d-{n}"},
                    )
                    for n in range(CLIENTS)
                )
            )
        return [answer.status_code for answer in answers]

    assert asyncio.run(race()) == [201] * CLIENTS
    assert store.app.wallet("alice", "real").balance_cents == CLIENTS * 100
