"""A fault is logged once when it starts, at most once a minute while it lasts, and
once when it ends (rules.md 8): a database down for minutes is a few lines, not a
traceback a second from every worker."""

from __future__ import annotations

from typing import Any

import pytest
import structlog

from infra.fault_log import FaultLog


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def lines() -> Any:
    with structlog.testing.capture_logs() as captured:
        yield captured


def test_a_fault_is_logged_when_it_starts_each_minute_and_when_it_ends(lines: Any) -> None:
    clock = Clock()
    faults = FaultLog(clock=clock)
    # Given the store failing every second for three minutes
    for _ in range(180):
        faults.failed("store", ConnectionError("refused"))
        clock.now += 1
    faults.succeeded("store")
    # Then one line started it (with its traceback), one a minute went on, one ended it
    events = [(line["event"], line.get("failures_since_last_line")) for line in lines]
    assert events == [
        ("fault_started", None),
        ("fault_continues", 60),
        ("fault_continues", 60),
        ("fault_ended", None),
    ]
    assert lines[0]["cause"] == "store" and "exc_info" in lines[0]
    assert (lines[-1]["failures"], lines[-1]["seconds"]) == (180, 180.0)


def test_causes_are_counted_apart_and_success_alone_logs_nothing(lines: Any) -> None:
    faults = FaultLog(clock=Clock())
    faults.succeeded("store")  # never failed: nothing to say
    faults.failed("store", ConnectionError("refused"))
    faults.failed("listen", ConnectionError("reset"))
    faults.failed("store", ConnectionError("refused"))
    assert [(line["event"], line["cause"]) for line in lines] == [
        ("fault_started", "store"),
        ("fault_started", "listen"),
    ]
    assert set(faults.failing()) == {"store", "listen"}
    faults.succeeded("listen")
    assert set(faults.failing()) == {"store"}
