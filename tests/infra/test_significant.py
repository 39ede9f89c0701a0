"""Significant events the server itself sees (GLI-19 s2.8.8): the configuration at
each start-up, with secrets masked, start-up and shutdown, and floods counted once
an interval."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi.testclient import TestClient

from infra.config import load_settings
from infra.http.app import create_app
from infra.significant import Throttle, masked_configuration
from infra.store.store import Store
from infra.workers import PeriodicWorker
from tests.conftest import every_store_event


def recorded(store: Store) -> list[Any]:
    return [
        e for e in every_store_event(store) if type(e).__qualname__ == "SignificantEvent.Created"
    ]


def serve_once(store: Store, **settings: Any) -> None:
    configured = load_settings(database_url=store.url, **settings)
    with TestClient(create_app(store, configured)):
        pass


def test_each_start_up_records_what_changed_in_the_configuration_since_the_last(
    store: Store,
) -> None:
    serve_once(store, api_keys="service=s3cret-key")
    serve_once(store, api_keys="service=s3cret-key")
    serve_once(store, api_keys="service=an0ther-key", decision_seconds=45)
    kinds = [event.kind for event in recorded(store)]
    assert kinds == [
        "configuration_changed", "started", "stopped",
        "started", "stopped",
        "configuration_changed", "started", "stopped",
    ]  # fmt: skip
    changed = recorded(store)[5].details["changed"]
    assert sorted(changed) == ["api_keys", "decision_seconds"]
    assert changed["decision_seconds"] == {"old": "30", "new": "45"}
    assert "key" not in str(changed["api_keys"])  # only digests: the keys never show
    assert changed["api_keys"]["old"] != changed["api_keys"]["new"]


def test_a_database_password_is_masked() -> None:
    settings = load_settings(database_url="postgresql://casino:hunter2@db:5432/casino")
    assert (
        masked_configuration(settings)["database_url"] == "postgresql://casino:***@db:5432/casino"
    )


def test_a_flood_is_recorded_once_an_interval_with_its_count() -> None:
    written: list[tuple[str, dict[str, Any]]] = []
    now = [0.0]
    throttle = Throttle(lambda kind, details: written.append((kind, details)), 60, lambda: now[0])
    for second in range(0, 150):
        now[0] = float(second)
        throttle.note("authentication_refused", {"reason": "unknown key"})
    throttle.flush(only_due=True)  # the last interval is not over yet
    assert [details["count"] for _, details in written] == [1, 60, 60]
    throttle.flush()  # at shutdown, what is left
    assert [details["count"] for _, details in written] == [1, 60, 60, 29]


class Failing(PeriodicWorker):
    name = "idle_rounds"

    def tick(self) -> None:
        raise RuntimeError("the store went away")


def test_a_failing_worker_is_a_significant_event_counted_per_interval() -> None:
    written: list[tuple[str, dict[str, Any]]] = []
    worker = Failing(60)
    worker.failures = Throttle(lambda kind, details: written.append((kind, details)))
    for _ in range(3):
        worker._tick_safely()
    worker.failures.flush()
    assert [(kind, d["worker"], d["count"]) for kind, d in written] == [
        ("worker_failed", "idle_rounds", 1),
        ("worker_failed", "idle_rounds", 2),
    ]
    assert "the store went away" in written[0][1]["error"]


def test_a_record_handed_off_does_not_hold_up_the_caller_and_is_written() -> None:
    started, release = threading.Event(), threading.Event()
    written: list[str] = []

    def record(kind: str, details: dict[str, Any]) -> None:
        started.set()
        release.wait(5)  # a store slow to answer
        written.append(kind)

    writer = ThreadPoolExecutor(max_workers=1)
    throttle = Throttle(record, hand_off=writer.submit)
    throttle.note("authentication_refused", {"reason": "unknown key"})
    assert started.wait(5)
    assert written == []  # noted, and the caller went on while the record waits
    release.set()
    writer.shutdown(wait=True)
    assert written == ["authentication_refused"]


def test_a_record_the_store_could_not_take_is_carried_by_the_next_one() -> None:
    # Given the store down for the first record of a flood
    written: list[tuple[str, int]] = []
    now = [0.0]

    def record(kind: str, details: dict[str, Any]) -> None:
        if now[0] < 30:
            raise ConnectionError("the store went away")
        written.append((kind, details["count"]))

    throttle = Throttle(record, 60, lambda: now[0])
    for second in range(0, 90):
        now[0] = float(second)
        throttle.note("worker_failed", {"worker": "idle_rounds"})
    throttle.flush()
    # Then no failure goes unrecorded: the lost record's count came with the next
    assert written == [("worker_failed", 61), ("worker_failed", 29)]
