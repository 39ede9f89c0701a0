"""GET /v1/events: a downstream system follows the log, page after page, across
restarts, without missing or repeating an event, and never sees an open round's
secrets."""

from __future__ import annotations

import threading
import time
from typing import Any

from infra.commands.receipt import CommandReceipt
from infra.store.store import Store
from tests.conftest import AUDITOR, OPERATOR, SERVICE, Api, StoreFactory, every_store_event
from tests.infra.http.helpers import serving


def feed(api: Api, after: int = 0, limit: int = 1000, wait: float = 0) -> dict[str, Any]:
    answer = api.get(f"/v1/events?after={after}&limit={limit}&wait={wait}", headers=AUDITOR)
    assert answer.status_code == 200, answer.text
    page: dict[str, Any] = answer.json()
    return page


def follow(api: Api, after: int = 0, limit: int = 3) -> tuple[list[dict[str, Any]], int]:
    """Every event after `after`, a page at a time, as a consumer reads them."""
    seen: list[dict[str, Any]] = []
    while True:
        page = feed(api, after, limit)
        if not page["events"] and page["next_after"] == after:
            return seen, after
        seen += page["events"]
        after = page["next_after"]


def business_positions(store: Store) -> list[int]:
    """Every position of the log but the command receipts'."""
    notifications = store.app.recorder.select_notifications(start=1, limit=1_000_000)
    return [n.id for n in notifications if not n.topic.startswith("casino:CommandReceipt")]


def test_the_feed_is_for_operators_and_auditors(api: Api) -> None:
    assert api.get("/v1/events", headers=SERVICE).json()["code"] == "forbidden_role"
    assert api.get("/v1/events", headers=OPERATOR).status_code == 200
    assert api.get("/v1/events", headers=AUDITOR).json() == {"events": [], "next_after": 0}
    assert api.get("/v1/events?wait=31", headers=AUDITOR).status_code == 422


def test_the_feed_is_the_log_in_order_without_receipts(api: Api, store: Store) -> None:
    api.player("alice", real="25.00")
    # Receipts are kept beside the log now; stores older than that hold them as events
    store.app.save(CommandReceipt("an-older-store's", "fingerprint", {"id": "1"}))
    api.player("bob", real="5.00")
    page = feed(api)
    positions = [event["position"] for event in page["events"]]
    assert positions == business_positions(store) == sorted(positions)
    assert page["next_after"] == store.projector.head()  # past the last receipt too
    deposit = next(e for e in page["events"] if e["type"] == "Deposited")
    assert deposit["topic"] == "casino:Wallet.Deposited"
    assert deposit["data"]["amount_cents"] == 2500
    assert {"position", "at", "type", "topic", "aggregate_id", "version", "data"} == set(deposit)
    assert len(every_store_event(store)) > len(positions)  # the receipts were there


def test_small_pages_read_the_same_events_as_one_big_one(api: Api) -> None:
    api.player("alice", real="25.00")
    api.player("bob", real="5.00")
    paged, last = follow(api, limit=2)
    assert paged == feed(api)["events"]
    assert last == feed(api)["next_after"]


def round_data(events: list[dict[str, Any]], round_id: str) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["aggregate_id"] == round_id]


def test_an_open_rounds_secrets_are_withheld_as_in_its_audit_trail(api: Api) -> None:
    api.player("alice", real="100.00")
    opened = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"}).json()
    round_id = opened["round_id"]
    api.post(f"/v1/rounds/{round_id}/bets", {"spot": "banker", "amount": "10"})
    trail = api.get(f"/v1/rounds/{round_id}/audit").json()["events"]
    shown = round_data(feed(api)["events"], round_id)
    assert shown == [e["data"] for e in trail if e["aggregate_id"] == round_id]
    assert [data["seed"] for data in shown if "seed" in data] == [None]
    settled = api.post(f"/v1/rounds/{round_id}/deal").json()
    revealed = round_data(feed(api)["events"], round_id)
    assert settled["seed"] in [data.get("seed") for data in revealed]
    trail = api.get(f"/v1/rounds/{round_id}/audit").json()["events"]
    assert revealed == [e["data"] for e in trail if e["aggregate_id"] == round_id]


def test_a_consumer_waiting_is_answered_when_an_event_arrives(api: Api, store: Store) -> None:
    api.player("alice")
    caught_up = feed(api)["next_after"]
    started = time.monotonic()
    assert feed(api, caught_up, wait=0.5)["events"] == []
    assert time.monotonic() - started >= 0.5
    later = threading.Timer(0.3, lambda: store.app.deposit("alice", "real", 700))
    later.start()
    started = time.monotonic()
    page = feed(api, caught_up, wait=20)
    later.join()
    assert time.monotonic() - started < 10
    assert [e["type"] for e in page["events"]] == ["Deposited"]


def test_a_consumer_resuming_after_a_restart_misses_nothing_and_sees_nothing_twice(
    stores: StoreFactory, store: Store
) -> None:
    with serving(store) as api:
        api.player("alice", real="30.00")
        first, last = follow(api)
    store.close()
    stores.opened.remove(store)
    restarted = stores.open()
    restarted.app.deposit("alice", "real", 100)  # written while the consumer was away
    with serving(restarted) as api:
        api.player("bob", real="1.00")
        rest, _ = follow(api, after=last)
    positions = [event["position"] for event in first + rest]
    assert positions == business_positions(restarted)
    assert len(set(positions)) == len(positions)
