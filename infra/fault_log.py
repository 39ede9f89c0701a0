"""Faults in the log without a flood (rules.md 8).

A database that is down for three minutes fails every worker's pass and every
request for three minutes. Each cause of failure (a worker, the store seen from
requests, the witness) is logged once when it starts, with one traceback; then at
most once a minute, with how many failures came since; and once when it ends, with
how long it lasted and how many failures it made.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from infra.logs import get_logger

REPEAT_LOG_SECONDS = 60.0
CAUSE_LENGTH_MAX = 64
ERROR_LENGTH_MAX = 300

log = get_logger("casino.faults")


@dataclass
class _Fault:
    started: float
    logged: float
    failures: int = 1
    since_logged: int = 0


class FaultLog:
    """Per cause: whether it is failing now, and what was logged of it."""

    def __init__(
        self,
        repeat_seconds: float = REPEAT_LOG_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.repeat_seconds = repeat_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._faults: dict[str, _Fault] = {}

    def failed(self, cause: str, error: BaseException) -> None:
        """Note a failure of `cause`: logged with its traceback if it is the first."""
        cause = _of_tenant(cause)[:CAUSE_LENGTH_MAX]
        now = self._clock()
        with self._lock:
            fault = self._faults.get(cause)
            if fault is None:
                self._faults[cause] = _Fault(started=now, logged=now)
                first, repeat = True, None
            else:
                fault.failures += 1
                fault.since_logged += 1
                first, repeat = False, None
                if now - fault.logged >= self.repeat_seconds:
                    repeat = (fault.since_logged, now - fault.started)
                    fault.logged, fault.since_logged = now, 0
        error_text = repr(error)[:ERROR_LENGTH_MAX]
        if first:
            log.error("fault_started", cause=cause, error=error_text, exc_info=error)
        elif repeat is not None:
            count, seconds = repeat
            log.warning("fault_continues", cause=cause, error=error_text,
                        failures_since_last_line=count, seconds=round(seconds, 1))  # fmt: skip

    def succeeded(self, cause: str) -> None:
        """Note that `cause` works again: logged once if it was failing."""
        cause = _of_tenant(cause)[:CAUSE_LENGTH_MAX]
        if cause not in self._faults:  # the usual case, without the lock
            return
        with self._lock:
            fault = self._faults.pop(cause, None)
        if fault is not None:
            seconds = round(self._clock() - fault.started, 1)
            log.info("fault_ended", cause=cause, failures=fault.failures, seconds=seconds)

    def forget(self) -> None:
        """Forget every fault, logging nothing: as a new process starts (tests)."""
        with self._lock:
            self._faults.clear()

    def failing(self) -> dict[str, float]:
        """The causes failing now, and since when (the clock's seconds)."""
        with self._lock:
            return {cause: fault.started for cause, fault in self._faults.items()}


def _of_tenant(cause: str) -> str:
    """One tenant's cause is not another's (infra/http/tenants.py): a store down for
    one tenant is logged as it starts even while another's is down already."""
    tenant = structlog.contextvars.get_contextvars().get("tenant")
    return cause if tenant is None else f"{tenant}/{cause}"


# One for the process: every worker, request and thread tells it.
faults = FaultLog()
