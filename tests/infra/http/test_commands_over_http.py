"""Command routes run their command in a worker thread, to its end (infra/http/
driver.py): the answer, the counts, a refusal, a repeat, the snapshots a save makes
due, and a caller who goes away while the command runs."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import threading
from typing import Any
from uuid import UUID

import httpx
import pytest
from fastapi.testclient import TestClient

from domain.ids import wallet_uuid
from domain.tables.coup import Coup
from domain.wallet import Wallet
from infra.config import load_settings
from infra.http.app import create_app
from infra.store.store import Store
from tests.conftest import SERVICE, Api
from tests.infra.http.test_operations import sample, scrape

SECONDS = 10  # how long a test waits for an answer before calling it lost


def test_a_refusal_is_answered_and_counted_once(api: Api) -> None:
    api.player("alice", real="10.00")
    refused = api.post("/v1/players/alice/withdrawals", {"mode": "real", "amount": "50.00"})
    assert (refused.status_code, refused.json()["code"]) == (409, "insufficient_funds")
    samples = scrape(api)
    assert sample(samples, "casino_commands_total", command="withdraw", outcome="refused") == 1
    assert api.wallet("alice")["balance"] == "10.00"


def test_a_refused_repeat_of_a_key_past_its_retention_is_a_422(api: Api, store: Store) -> None:
    api.player("alice", real="10.00")
    body = {"mode": "real", "amount": "6.00"}
    assert api.post("/v1/players/alice/withdrawals", body, key="w1").status_code == 201
    moved = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=91)
    store.app.clock = lambda: moved
    # Run again today the withdrawal is refused ($4 left); the receipt looked up then,
    # past its retention, is the answer: what the look raised is the command's.
    answer = api.post("/v1/players/alice/withdrawals", body, key="w1")
    assert (answer.status_code, answer.json()["code"]) == (422, "idempotency_key_expired")
    assert api.wallet("alice")["balance"] == "4.00"


def test_a_repeated_request_goes_on_from_its_failed_save_to_its_first_answer(
    api: Api,
) -> None:
    api.player("alice", real="10.00")
    first = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "1.00"}, key="k1")
    again = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "1.00"}, key="k1")
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert api.wallet("alice")["balance"] == "11.00"


def test_a_snapshot_a_save_makes_due_is_written(
    api: Api, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(store.app.snapshotting_intervals, Wallet, 2)
    api.player("alice", real="10.00")
    for _ in range(3):
        api.deposit("alice", "1.00")
    assert store.app.snapshots is not None
    wallet_id = wallet_uuid("alice", "real")
    taken = list(store.app.snapshots.get(wallet_id, desc=True, limit=1))
    # Versions 1 (opened), 2 (10.00), 3, 4, 5 (a dollar each): the last due is 4.
    assert [(t.originator_version, t.state["balance_cents"]) for t in taken] == [(4, 1200)]


def test_a_round_snapshot_never_holds_its_seed_in_clear(
    api: Api, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(store.app.snapshotting_intervals, Coup, 1)
    api.player("alice", real="10.00")
    round_id = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"}).json()[
        "round_id"
    ]
    bet = api.post(f"/v1/rounds/{round_id}/bets", {"spot": "player", "amount": "1.00"})
    assert bet.status_code == 201  # the command opened the seed in memory: it may deal
    before_deal = [s.state for s in store.app.snapshots.recorder.select_events(UUID(round_id))]
    assert before_deal
    dealt = api.post(f"/v1/rounds/{round_id}/deal").json()
    seed = dealt["seed"]
    assert isinstance(seed, str) and seed
    assert not any(seed.encode() in state for state in before_deal)


def test_a_command_route_answers_with_its_status_body_and_position(api: Api) -> None:
    api.player("alice")
    answer = api.client.post(
        "/v1/players/alice/deposits",
        json={"mode": "real", "amount": "2.50"},
        headers={**SERVICE, "Idempotency-Key": "k"},
    )
    assert answer.status_code == 201
    assert answer.json()["wallet"]["balance"] == "2.50"
    assert int(answer.headers["Casino-Position"]) > 0


def test_a_command_whose_caller_goes_away_while_it_saves_lands_once_and_stops_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller that disconnects (or a server that cancels its requests on shutdown)
    cancels the route's coroutine while it awaits the save. The save is the committer's
    by then: it lands or not as a whole, the same request again is answered once, and
    every other command goes on."""
    committer = store.group_commit
    assert committer is not None
    insert, entered, released = committer._insert, threading.Event(), threading.Event()
    released.set()

    def held(stored: Any, receipts: Any) -> Any:
        entered.set()
        assert released.wait(SECONDS)
        return insert(stored, receipts)

    monkeypatch.setattr(committer, "_insert", held)
    app = create_app(store, load_settings(database_url=store.url), background=False)
    deposit = {"mode": "real", "amount": "1.00"}

    async def post(client: httpx.AsyncClient, path: str, body: Any, key: str) -> httpx.Response:
        headers = {**SERVICE, "Idempotency-Key": key}
        return await asyncio.wait_for(client.post(path, json=body, headers=headers), SECONDS)

    async def scenario() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://casino") as client:
            await post(client, "/v1/players", {"player_id": "alice", "display_name": "A"}, "p")
            released.clear()
            entered.clear()
            gone = asyncio.create_task(post(client, "/v1/players/alice/deposits", deposit, "k"))
            assert await asyncio.to_thread(entered.wait, SECONDS)  # in the committer's hands
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
            released.set()
            again = await post(client, "/v1/players/alice/deposits", deposit, "k")
            other = await post(client, "/v1/players/alice/deposits", deposit, "k2")
            wallet = await asyncio.wait_for(
                client.get("/v1/players/alice/wallets/real", headers=SERVICE), SECONDS
            )
            return again, other, wallet

    again, other, wallet = asyncio.run(scenario())  # which waits for the loop's threads
    assert (again.status_code, again.headers["Idempotent-Replayed"]) == (201, "true")
    assert other.status_code == 201
    assert wallet.json()["balance"] == "2.00"  # "k" once, "k2" once
    # The one that went away was seen to its end, and counted as applied, once.
    samples = scrape(Api(TestClient(app)))
    assert sample(samples, "casino_commands_total", command="deposit", outcome="applied") == 2
    assert sample(samples, "casino_commands_total", command="deposit", outcome="replayed") == 1


def test_a_command_whose_caller_goes_away_while_its_snapshot_is_written_is_counted_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its save has landed: cancelled while the snapshot it made due is written, it is
    still told to the metrics as applied, once."""
    monkeypatch.setitem(store.app.snapshotting_intervals, Wallet, 1)  # every save is due
    assert store.app.snapshots is not None
    put, entered, released = store.app.snapshots.put, threading.Event(), threading.Event()
    released.set()

    def held(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        assert released.wait(SECONDS)
        return put(*args, **kwargs)

    monkeypatch.setattr(store.app.snapshots, "put", held)
    app = create_app(store, load_settings(database_url=store.url), background=False)

    async def scenario() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://casino") as client:
            body = {"player_id": "alice", "display_name": "A"}
            await client.post("/v1/players", json=body, headers={**SERVICE, "Idempotency-Key": "p"})
            released.clear()
            entered.clear()
            deposit = {"mode": "real", "amount": "1.00"}
            headers = {**SERVICE, "Idempotency-Key": "k"}
            gone = asyncio.create_task(
                client.post("/v1/players/alice/deposits", json=deposit, headers=headers)
            )
            assert await asyncio.to_thread(entered.wait, SECONDS)  # writing its snapshot
            gone.cancel()
            released.set()
            with contextlib.suppress(asyncio.CancelledError):
                await gone

    asyncio.run(scenario())
    samples = scrape(Api(TestClient(app)))
    assert sample(samples, "casino_commands_total", command="deposit", outcome="applied") == 1


def test_one_request_sent_many_times_at_once_is_applied_once_with_one_answer(
    store: Store,
) -> None:
    """Copies of one request on the loop at once land in one batch or in several: the
    later saves fail on the key, go on in worker threads, and answer as the first."""
    app = create_app(store, load_settings(database_url=store.url), background=False)
    headers = {**SERVICE, "Idempotency-Key": "k"}

    async def scenario() -> tuple[list[httpx.Response], httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://casino") as client:
            body = {"player_id": "alice", "display_name": "A"}
            await client.post("/v1/players", json=body, headers={**SERVICE, "Idempotency-Key": "p"})
            deposit = {"mode": "real", "amount": "1.00"}
            copies = await asyncio.gather(
                *(
                    client.post("/v1/players/alice/deposits", json=deposit, headers=headers)
                    for _ in range(8)
                )
            )
            wallet = await client.get("/v1/players/alice/wallets/real", headers=SERVICE)
            return list(copies), wallet

    copies, wallet = asyncio.run(scenario())
    assert {answer.status_code for answer in copies} == {201}
    assert len({answer.text for answer in copies}) == 1
    assert [a.headers.get("Idempotent-Replayed") for a in copies].count(None) == 1
    assert wallet.json()["balance"] == "1.00"
