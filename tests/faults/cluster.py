"""A PostgreSQL cluster of the fault suite's own: made with `initdb`, served by `pg_ctl`
on a free port, restarted at will, removed afterwards.

The suite restarts its database and ends its connections; doing that to the shared
cluster on 5432 would break every other test running beside it, so it never does.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
from psycopg import sql

from tests.infra.store.test_crash_recovery import free_port

COMMAND_SECONDS_MAX = 60
# Durability is not what this suite tests; without it a cluster starts in a second.
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
}
# The injector's own connections: never matched by the `casino%` the service's carry.
INJECTOR = "fault-injector"
PREFIX = "casino-faults-pg-"
OWNER = "owner.pid"  # the pid of the test run that made the cluster


def postgres_binaries() -> Path | None:
    """The directory of the newest `initdb` installed, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's: alive
        return True
    return True


def _version(path: str) -> int:
    number = Path(path).parts[-3]
    return int(number) if number.isdigit() else 0


class Cluster:
    """A throw-away cluster: trust authentication, 127.0.0.1 only, its own socket dir."""

    def __init__(self, binaries: Path, root: Path | None = None) -> None:
        self.binaries = binaries
        # Under /tmp itself, not pytest's tmp dir: that one is private to root, and the
        # cluster's files belong to the postgres user when we run as root.
        self.root = root or Path(tempfile.mkdtemp(prefix=PREFIX))
        self.data = self.root / "data"
        self.log_path = self.root / "postgres.log"
        self.port = free_port()
        self.databases = 0

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create(self) -> None:
        # Whose cluster this is: a run killed before `remove` leaves one behind.
        (self.root / OWNER).write_text(str(os.getpid()))
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {self.port}\nunix_socket_directories = '{self.root}'\n")
            conf.writelines(f"{name} = {value}\n" for name, value in SETTINGS.items())
        self.pg_ctl("start")

    def pg_ctl(self, action: str, *options: str) -> None:
        self._run("pg_ctl", action, "-D", str(self.data), "-l", str(self.log_path), "-w", *options)

    def restart(self) -> None:
        """A fast restart: every connection is ended, nothing is served for a moment."""
        self.pg_ctl("restart", "-m", "fast")

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    @classmethod
    def remove_orphans(cls, binaries: Path) -> None:
        """Stop and remove the clusters of earlier runs that were killed before they
        could: a postmaster started by pg_ctl outlives the run that started it."""
        for root in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
            owner = root / OWNER
            if owner.exists() and not _alive(int(owner.read_text() or 0)):
                orphan = cls(binaries, root)
                with contextlib.suppress(AssertionError):
                    orphan.remove()

    def new_database(self, prefix: str) -> str:
        self.databases += 1
        name = f"{prefix}_{self.databases}"
        with self.admin() as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return name

    def admin(self, database: str = "postgres") -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(
            self.url(database), autocommit=True, connect_timeout=5, application_name=INJECTOR
        )

    def wait_until_up(self, seconds: float = COMMAND_SECONDS_MAX) -> None:
        deadline = time.monotonic() + seconds
        while True:
            try:
                with self.admin():
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _run(self, program: str, *arguments: str) -> None:
        command = [str(self.binaries / program), *arguments]
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root.
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=COMMAND_SECONDS_MAX, check=False
        )
        assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout}{result.stderr}"
