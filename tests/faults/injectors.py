"""The faults: connections ended, the database restarted or stalled, the projector's
process killed. Each touches only the case's own database on the suite's own cluster,
and the server under test's own processes."""

from __future__ import annotations

import collections
import os
import signal
import time
from pathlib import Path

from tests.faults.cluster import Cluster
from tests.infra.test_serve import command_line, gone

# The service names its connections `casino-serve`, `casino-projections`...; until it
# does they carry no name. Either way only the case's own database is matched.
SERVICE_CONNECTIONS = """
    SELECT application_name, pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE datname = %s AND pid <> pg_backend_pid()
      AND (application_name LIKE 'casino%%' OR application_name = '')
"""
# The stall's lock waits for the saves in flight, never long: a wait longer than this
# means something holds the log, and the case fails rather than hang.
TAKE_THE_LOCK_WITHIN = "SET LOCAL lock_timeout = '2s'"


def end_connections(cluster: Cluster, database: str) -> collections.Counter[str]:
    """pg_terminate_backend on every connection of the service to `database`: how many
    it ended, by application_name."""
    with cluster.admin() as admin:
        rows = admin.execute(SERVICE_CONNECTIONS, (database,)).fetchall()
    return collections.Counter(str(name) or "(none)" for name, ended in rows if ended)


def stall_the_log(cluster: Cluster, database: str, seconds: float) -> None:
    """Hold ACCESS EXCLUSIVE on the log for `seconds`: every read and save of it waits."""
    with cluster.admin(database) as admin, admin.transaction():
        admin.execute(TAKE_THE_LOCK_WITHIN)
        admin.execute("LOCK TABLE casino_events IN ACCESS EXCLUSIVE MODE")
        time.sleep(seconds)


def children(pid: int) -> list[int]:
    """Every child of `pid`, whichever of its threads started it."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended meanwhile
            continue
    return found


def projectors(server_pid: int) -> list[int]:
    """The `casino projections run` processes `casino serve` runs beside itself."""
    running = []
    for pid in children(server_pid):
        try:
            if not gone(pid) and "projections run" in command_line(pid):
                running.append(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return running


def kill_the_projector(server_pid: int) -> int:
    """SIGKILL the server's projector: its pid."""
    running = projectors(server_pid)
    assert len(running) == 1, f"the server runs {len(running)} projectors, not one"
    os.kill(running[0], signal.SIGKILL)
    return running[0]


def seconds_until_a_projector_runs(
    server_pid: int, killed: int, seconds_max: float
) -> float | None:
    """Seconds until the server runs a projector again; None if not within `seconds_max`."""
    started = time.monotonic()
    while time.monotonic() - started < seconds_max:
        if [pid for pid in projectors(server_pid) if pid != killed]:
            return time.monotonic() - started
        time.sleep(0.1)
    return None
