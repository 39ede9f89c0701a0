"""Waking the projector when new events commit.

PostgreSQL: the recorder sends NOTIFY on its channel in every save's transaction,
so a LISTENing connection hears of each commit at once. SQLite has no such
thing: the projector polls. Either way a missed wake-up only delays the next
catch-up by PROJECTOR_WAKE_SECONDS_MAX, since the worker looks again anyway.
"""

from __future__ import annotations

import time
from typing import Protocol

import psycopg
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql

from infra.fault_log import faults
from infra.store.database import PostgresDatabase
from infra.store.store import Store

CONNECT_TIMEOUT_SECONDS = 5
LISTEN = "listen"  # the cause its faults are logged under


class EventSignal(Protocol):
    wakes_on_commit: bool

    def listen(self) -> None:
        """Start hearing of commits (before catching up, so none falls in between)."""
        ...

    def wait(self, seconds: float) -> bool:
        """Return when events may have been saved (True), or after `seconds` (False)."""
        ...

    def drain(self) -> None:
        """Forget the wake-ups heard so far (what they announce is caught up next)."""
        ...

    def close(self) -> None: ...


class Polling:
    wakes_on_commit = False

    def listen(self) -> None:
        pass

    def wait(self, seconds: float) -> bool:
        return False  # The worker's own interval is the poll.

    def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


class PostgresListener:
    wakes_on_commit = True

    def __init__(self, conninfo: str, channel: str, application_name: str = "casino") -> None:
        self.conninfo = conninfo
        self.channel = channel
        self.application_name = application_name
        self.connection: psycopg.Connection[object] | None = None

    def listen(self) -> None:
        if self.connection is not None and not self.connection.closed:
            return
        try:
            self.connection = psycopg.connect(
                self.conninfo,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                application_name=self.application_name,
            )
            self.connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except psycopg.Error as error:
            self._lost(error)
        else:
            faults.succeeded(LISTEN)

    def wait(self, seconds: float) -> bool:
        if self.connection is None:
            time.sleep(seconds)  # Not listening: poll until the connection comes back.
            return False
        try:
            for _ in self.connection.notifies(timeout=seconds, stop_after=1):
                return True
        except psycopg.Error as error:
            self._lost(error)
        return False

    def drain(self) -> None:
        if self.connection is None:
            return
        try:
            for _ in self.connection.notifies(timeout=0):
                pass
        except psycopg.Error as error:
            self._lost(error)

    def _lost(self, error: psycopg.Error) -> None:
        faults.failed(LISTEN, error)  # once, then a minute apart (infra/fault_log.py)
        self.close()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def new_event_signal(store: Store) -> EventSignal:
    if store.database.dialect == "postgres":
        recorder = store.app.recorder
        assert isinstance(recorder, PostgresApplicationRecorder)
        assert isinstance(store.database, PostgresDatabase)
        name = store.database.connect_options.get("application_name", "casino")
        return PostgresListener(store.database.conninfo, recorder.channel_name, name)
    return Polling()
