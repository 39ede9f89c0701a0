"""Which errors are faults of the store (503 store_unavailable, retried by clients)
and which are not (our bugs, tampering, a caller's mistake), and the timeouts a
server's deadline sets."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, OperationalError, ProgrammingError
from psycopg_pool import PoolTimeout

from infra.store.faults import StoreDeadline, StoreTimeouts, check_deadline, is_store_fault, within
from infra.store.seal import LogTampered


def raised_from(outer: Exception, inner: Exception) -> Exception:
    try:
        raise outer from inner
    except Exception as error:
        return error


@pytest.mark.parametrize(
    "error",
    [
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
        psycopg.errors.QueryCanceled("canceling statement due to statement timeout"),
        psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"),
        PoolTimeout("couldn't get a connection after 2.00 sec"),
        psycopg.InterfaceError("the connection is closed"),
        raised_from(OperationalError("lost"), psycopg.OperationalError("server closed")),
        OperationalError("consuming input failed"),
        raised_from(OperationalError("locked"), sqlite3.OperationalError("database is locked")),
        StoreDeadline("the request's deadline passed"),
    ],
    ids=repr,
)
def test_a_lost_connection_a_timeout_or_a_busy_store_is_a_fault(error: Exception) -> None:
    assert is_store_fault(error)


@pytest.mark.parametrize(
    "error",
    [
        LogTampered("the events after position 8 are in no seal"),
        IntegrityError("duplicate key"),
        raised_from(OperationalError("no table"), sqlite3.OperationalError("no such table: x")),
        raised_from(ProgrammingError("syntax"), psycopg.errors.SyntaxError("syntax error")),
        ZeroDivisionError("our bug"),
    ],
    ids=repr,
)
def test_tampering_a_conflict_or_our_own_bug_is_no_fault(error: Exception) -> None:
    assert not is_store_fault(error)


def test_past_the_deadline_the_store_is_not_asked_again() -> None:
    check_deadline()  # outside a request: no deadline
    with within(-1), pytest.raises(StoreDeadline):
        check_deadline()
    with within(60):
        check_deadline()


def test_the_store_gives_up_well_within_the_deadline() -> None:
    timeouts = StoreTimeouts.within(5)
    assert (timeouts.connect_seconds, timeouts.lock_seconds) == (2, 3)
    assert timeouts.statement_seconds == 4
    assert timeouts.options() == "-c lock_timeout=3000 -c statement_timeout=4000"
    assert StoreTimeouts.unbounded_statements().options() == "-c lock_timeout=5000"
