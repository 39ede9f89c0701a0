"""The store's faults, told from everything else (rules.md 8).

A lost connection, a restarted or failed-over database, a full pool, a statement
or lock that waited too long: none of them is the caller's mistake, none is our
bug, and none is tampering. Each answers 503 `store_unavailable`: the command is
"not known to have taken effect", and a retry with the same Idempotency-Key settles
it (the first answer if its save landed, the effect exactly once if not).

A request has a deadline (CASINO_REQUEST_DEADLINE_SECONDS). Every way to a
connection checks it first (`check_deadline`): once it has passed, nothing more is
asked of the store for that request, so a thread working for a caller who has had
their 503 stops at its next look instead of trying again for a minute. The store's
own timeouts (`StoreTimeouts`) are set from the same deadline, so one statement
never outlives it by much either.
"""

from __future__ import annotations

import contextvars
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from eventsourcing.persistence import InterfaceError, OperationalError
from psycopg_pool import ConnectionPool, PoolTimeout

DEADLINE_SECONDS = 5.0  # CASINO_REQUEST_DEADLINE_SECONDS's default
DEADLINE_SECONDS_MIN = 1.0
DEADLINE_SECONDS_MAX = 60.0
STORE = "store"  # the cause the store's faults are logged under (infra/fault_log.py)
# How long a pool keeps trying, with its doubling waits, to replace a connection it
# lost before it gives up until the next request asks (psycopg_pool's reconnect
# timeout; its default of 5 minutes let the waits grow to a minute, and a database
# back after a 3-minute outage was used again only 43 s later).
RECONNECT_SECONDS = 5.0
NOT_KNOWN = (
    "not known to have taken effect: retry with the same Idempotency-Key until the "
    "answer is not 503 (it gives the first answer if it did, the effect once if not)"
)

# When the current request must be answered (time.monotonic()), or None outside one.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "casino_deadline", default=None
)


class StoreDeadline(Exception):
    """The request's deadline passed before the store was asked again. Not one of the
    library's OperationalErrors on purpose: its read retries must not try again."""


class StoreNotOpened(StoreDeadline):
    """A store the process could not open yet (a tenant's, at start-up): it is tried
    again in the background, and until then asked nothing (infra/http/tenants.py)."""


# The drivers' faults of the connection or the server. psycopg's OperationalError
# covers a terminated backend (57P01), a canceled statement (statement_timeout,
# 57014), a lock not available (lock_timeout, 55P03), too many connections, a server
# that cannot be reached, and a pool that gives no connection in time (PoolTimeout).
DRIVER_FAULTS: tuple[type[BaseException], ...] = (psycopg.OperationalError, psycopg.InterfaceError)
# The library's own classes, which it raises from the driver's (or alone).
LIBRARY_FAULTS: tuple[type[BaseException], ...] = (OperationalError, InterfaceError)
# What the handlers of the HTTP layer are registered for; `is_store_fault` decides.
FAULT_CLASSES = (*DRIVER_FAULTS, *LIBRARY_FAULTS, sqlite3.OperationalError, StoreDeadline)
# SQLite's OperationalError is also "no such table", a bug: only these are faults.
SQLITE_FAULT_WORDS = ("locked", "busy", "unable to open", "disk i/o")
CAUSES_MAX = 5


def is_store_fault(error: BaseException) -> bool:
    """Whether `error` is a fault of the store: the first driver error in its chain of
    causes decides; without one, the library's class (or ours) does."""
    current: BaseException | None = error
    for _ in range(CAUSES_MAX):
        if current is None:
            break
        if isinstance(current, StoreDeadline | PoolTimeout):
            return True
        if isinstance(current, psycopg.Error):
            return isinstance(current, DRIVER_FAULTS)
        if isinstance(current, sqlite3.Error):
            text = str(current).lower()
            return isinstance(current, sqlite3.OperationalError) and any(
                word in text for word in SQLITE_FAULT_WORDS
            )
        current = current.__cause__
    return isinstance(error, LIBRARY_FAULTS)


@contextmanager
def within(seconds: float) -> Iterator[float]:
    """Give the code inside (and the threads it hands work to, which copy the
    context) a deadline `seconds` from now; yield it."""
    deadline = time.monotonic() + seconds
    token = _deadline.set(deadline)
    try:
        yield deadline
    finally:
        _deadline.reset(token)


def remaining() -> float:
    """Seconds left before the current request's deadline; infinite outside one."""
    deadline = _deadline.get()
    return math.inf if deadline is None else deadline - time.monotonic()


def check_deadline() -> None:
    """Refuse to ask the store for more once the current request's deadline passed."""
    if remaining() <= 0:
        raise StoreDeadline("the request's deadline passed before the store answered")


@dataclass(frozen=True)
class StoreTimeouts:
    """How long the store may make a server process wait, derived from the deadline:
    a connection, a lock and a statement each give up well before it, so a command
    that meets a stalled database fails in time to be answered 503, and the thread
    that ran it is free again soon after."""

    connect_seconds: int  # libpq's connect_timeout, and the wait for a pooled one
    lock_seconds: int  # the library takes whole seconds
    statement_seconds: float | None  # None: no limit (the audit commands' long reads)

    @classmethod
    def within(cls, deadline_seconds: float) -> StoreTimeouts:
        return cls(
            # libpq counts a connect_timeout under 2 s as 2 s.
            connect_seconds=max(2, math.floor(deadline_seconds / 2)),
            lock_seconds=max(1, round(deadline_seconds * 0.6)),
            statement_seconds=round(deadline_seconds * 0.8, 3),
        )

    @classmethod
    def unbounded_statements(cls) -> StoreTimeouts:
        """For the commands that read the whole log (verify, rebuild, the projector's
        catch-up): short waits for a connection or a lock, no limit on a statement."""
        return cls(connect_seconds=5, lock_seconds=5, statement_seconds=None)

    def options(self) -> str:
        """libpq `options` that set the lock and statement timeouts for a session."""
        text = f"-c lock_timeout={self.lock_seconds * 1000}"
        if self.statement_seconds is not None:
            text += f" -c statement_timeout={int(self.statement_seconds * 1000)}"
        return text


def guard(datastore: Any) -> None:
    """Make the event store's one way to a connection (the library's
    `get_connection`) check the current request's deadline first, and after a fault
    have the pool's idle connections checked (`check_soon`)."""
    opened: Callable[..., Any] = datastore.get_connection
    pool = getattr(datastore, "pool", None)

    @contextmanager
    def get_connection(*args: Any, **kwargs: Any) -> Iterator[Any]:
        check_deadline()
        try:
            with opened(*args, **kwargs) as connection:
                yield connection
        except LIBRARY_FAULTS:  # the library's, raised from the driver's
            check_soon(pool)
            raise

    datastore.get_connection = get_connection


_checking: set[int] = set()  # the pools being checked now, by id
_checking_lock = threading.Lock()


def check_soon(pool: object) -> None:
    """After a lost connection, test the pool's idle connections in a thread of their
    own and replace the broken ones (psycopg_pool's `check`): a terminated backend or
    a restarted server breaks every idle connection at once, and without the check
    each would fail one request before the pool dropped it. One check at a time per
    pool; SQLite's pool has none to check."""
    if not isinstance(pool, ConnectionPool):
        return
    with _checking_lock:
        if id(pool) in _checking:
            return
        _checking.add(id(pool))

    def check() -> None:
        try:
            pool.check()
        except Exception:  # the server still down: the next fault checks again
            pass
        finally:
            with _checking_lock:
                _checking.discard(id(pool))

    threading.Thread(target=check, name="pool-check", daemon=True).start()
