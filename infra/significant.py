"""Significant events the server itself sees (GLI-19 s2.8.8): the configuration at
start-up, start-up and shutdown, refused authentication, failing workers.

Refusals and failures can come in floods, so each kind is counted per interval and
recorded at most once an interval with its count (`Throttle`): however many come,
the log grows by one event an interval.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from domain.application import CasinoApplication
from infra.config import Settings
from infra.fault_log import faults
from infra.store.reach import first_line

THROTTLE_SECONDS = 60.0
# The causes their faults are logged under (infra/fault_log.py).
START = "start_event"
RECORD = "significant_event_record"
# A setting whose name holds one of these is a secret: only a digest of it is kept,
# enough to show that it changed.
SECRET_WORDS = ("key", "secret", "password", "token", "seal", "witness")
_URL_PASSWORD = re.compile(r"(?<=://)([^:/@]+):([^@]+)@")


def masked_configuration(settings: Settings) -> dict[str, str]:
    """Every setting as text, secrets masked."""
    values = settings.model_dump()
    return {name: _masked(name, str(value)) for name, value in sorted(values.items())}


def _masked(name: str, value: str) -> str:
    if any(word in name for word in SECRET_WORDS):
        digest = hashlib.sha256(value.encode()).hexdigest()[:12]
        return f"masked sha256:{digest}" if value else ""
    return _URL_PASSWORD.sub(r"\1:***@", value)


def record_start(app: CasinoApplication, settings: Settings) -> None:
    changed = app.see_configuration(masked_configuration(settings)).result or {}
    app.record_significant("started", {"configuration_changed": sorted(changed)})


class StartRecord:
    """Whether the server's start-up (and configuration) is saved as significant
    events. Until it is, the server is not ready (rules.md 8): a store down at
    start-up is tried again every second by the store watch (infra/workers.py)."""

    def __init__(self, app: CasinoApplication, settings: Settings) -> None:
        self._app = app
        self._settings = settings
        self.saved = False
        self.detail = "its start-up event is not saved yet"

    def record(self) -> bool:
        """Save the start-up, once; whether it is saved."""
        if self.saved:
            return True
        try:
            record_start(self._app, self._settings)
        except Exception as error:
            faults.failed(START, error)
            self.detail = f"its start-up event is not saved yet: {first_line(error)}"
            return False
        faults.succeeded(START)
        self.saved, self.detail = True, "its start-up event is saved"
        return True


class Throttle:
    """Counts occurrences per kind; records the first at once, then at most one event
    an interval per kind, carrying how many came since the last one.

    `hand_off` (an executor's `submit`, say) writes a due record elsewhere, so the
    caller noting it does not wait on the store: a refused authentication is noted on
    the event loop, which a blocking save would stall for every request."""

    def __init__(
        self,
        record: Callable[[str, dict[str, Any]], object],
        interval_seconds: float = THROTTLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        hand_off: Callable[[Callable[[], None]], object] | None = None,
    ) -> None:
        self._record = record
        self._hand_off = hand_off
        self.interval_seconds = interval_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._details: dict[str, dict[str, Any]] = {}
        self._last: dict[str, float] = {}

    def note(self, kind: str, details: dict[str, Any]) -> None:
        with self._lock:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self._details[kind] = details  # the latest one's, as an example
            last = self._last.get(kind)
            due = last is None or self._clock() - last >= self.interval_seconds
            taken = self._take(kind) if due else None
        if taken is None:
            return
        if self._hand_off is None:
            self._write(kind, taken)
        else:
            self._hand_off(lambda: self._write(kind, taken))

    def flush(self, only_due: bool = False) -> None:
        """Record the counts not recorded yet: those whose interval is over, or (at
        shutdown) every one."""
        with self._lock:
            now = self._clock()
            taken = {
                kind: self._take(kind)
                for kind in list(self._counts)
                if not only_due or now - self._last.get(kind, now) >= self.interval_seconds
            }
        for kind, details in taken.items():
            self._write(kind, details)

    def _take(self, kind: str) -> dict[str, Any]:
        self._last[kind] = self._clock()
        count = self._counts.pop(kind)
        interval = self.interval_seconds
        return {**self._details.pop(kind), "count": count, "interval_seconds": interval}

    def _write(self, kind: str, details: dict[str, Any]) -> None:
        try:
            self._record(kind, details)
        except Exception as error:  # never let the record of a failure fail its caller
            faults.failed(RECORD, error)
            self._put_back(kind, details)
        else:
            faults.succeeded(RECORD)

    def _put_back(self, kind: str, details: dict[str, Any]) -> None:
        """A record that could not be saved (the store down) is counted again, so the
        next one due carries it: an outage delays the record of its failures, and
        loses none of them."""
        count = int(details.get("count", 1))
        with self._lock:
            self._counts[kind] = self._counts.get(kind, 0) + count
            self._details.setdefault(kind, {k: v for k, v in details.items() if k != "count"})
