"""The library's PostgreSQL factory, with a pool waited for before its first use.

The library opens its pool in the background and gives the first statement (its own,
while the application is built) only the connect timeout to get a connection. A
database slow to let a new process in (CI once took more than 5 s) then failed the
start: here the factory waits up to POSTGRES_OPEN_SECONDS for the pool's first
connections, before anything uses it, and every later wait keeps the short timeout
(tests/infra/store/test_slow_start.py).
"""

from __future__ import annotations

from eventsourcing.postgres import PostgresFactory
from eventsourcing.utils import Environment, EnvType

from infra.store.database import open_waiting
from infra.store.faults import RECONNECT_SECONDS

# Ours, beside the library's POSTGRES_* settings (infra/store/store.py sets them).
APPLICATION_NAME = "POSTGRES_APPLICATION_NAME"
SESSION_OPTIONS = "POSTGRES_SESSION_OPTIONS"


class SlowStartPostgresFactory(PostgresFactory):
    def __init__(self, env: Environment | EnvType | None) -> None:
        super().__init__(env)
        # The process's name for its connections, and the statement timeout of a
        # server (infra/store/faults.py: StoreTimeouts), on every new connection.
        extra = {"application_name": self.env.get(APPLICATION_NAME) or "casino"}
        if options := self.env.get(SESSION_OPTIONS):
            extra["options"] = options
        pool = self.datastore.pool
        assert isinstance(pool.kwargs, dict)
        pool.kwargs.update(extra)
        # The library builds its pool with psycopg_pool's default reconnect timeout of
        # five minutes: set as infra/store/faults.py says, before the pool opens.
        pool.reconnect_timeout = RECONNECT_SECONDS
        # Opened once, here. Not through the library's `pool_open_timeout`: with it the
        # library calls `open(wait=True)` on every connection it takes, which waits
        # until every connection is back in the pool, and asserts if two threads wait.
        open_waiting(self.datastore.pool)
