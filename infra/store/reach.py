"""Before a command opens the store: is its database there to be reached, and does it
hold a store already? Each answer is one line that names the setting to fix, so a
typo is not met with a traceback, nor with a new, empty store (api.md, Command line).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from urllib.parse import urlparse

from infra.store.schema import POSTGRES_EVENTS_TABLE, SQLITE_EVENTS_TABLE

CONNECT_TIMEOUT_SECONDS = 5


def shown_url(url: str) -> str:
    """The database URL without its password, fit for a message."""
    parts = urlparse(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":***@", 1)


def first_line(error: BaseException) -> str:
    """A driver's message, which may run to several lines, as one."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def unreachable(url: str) -> str | None:
    """Why the database of CASINO_DATABASE_URL cannot be reached, or None. It creates
    nothing: a SQLite file is only opened if it is there, PostgreSQL is only asked."""
    if url.startswith("sqlite:///"):
        return _sqlite_unreachable(Path(url.removeprefix("sqlite:///")))
    error = _postgres_error(url)
    return None if error is None else _cannot_reach(url, error)


def down(url: str) -> str | None:
    """Why no database server answers at CASINO_DATABASE_URL (none listens, the host
    does not answer, it is starting or shutting down), or None. A server that answers
    and refuses (a wrong password, no such database) is not down: that is a setting to
    fix. A SQLite file is never down."""
    if url.startswith("sqlite:///"):
        return None
    error = _postgres_error(url)
    if error is None or _answered_and_refused(str(error)):
        return None
    return _cannot_reach(url, error)


def _postgres_error(url: str) -> Exception | None:
    """What a connection to the PostgreSQL database and a `SELECT 1` raise, if anything."""
    import psycopg

    try:
        conninfo = url.replace("postgres://", "postgresql://", 1)
        with psycopg.connect(conninfo, connect_timeout=CONNECT_TIMEOUT_SECONDS) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        return error
    return None


def _cannot_reach(url: str, error: Exception) -> str:
    return f"CASINO_DATABASE_URL: cannot reach {shown_url(url)}: {first_line(error)}"


# What a server says while it cannot take a connection yet, or for now (SQLSTATE 57P03,
# 57P01, 53300): down, as far as a start is concerned.
NOT_YET = ("starting up", "shutting down", "in recovery mode", "too many clients")


def _answered_and_refused(message: str) -> bool:
    """Whether a failed connection's message is a server's refusal: libpq prefixes what
    the server sent with its severity ("FATAL:  password authentication failed", "FATAL:
    database ... does not exist"); a refused or timed-out connection has none. psycopg
    gives no SQLSTATE for a connection that failed, so the message is what there is."""
    return "FATAL:" in message and not any(words in message for words in NOT_YET)


def _sqlite_unreachable(path: Path) -> str | None:
    if not path.exists():
        return None  # Whether a missing file may be created is the command's to say.
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as error:
        return f"CASINO_DATABASE_URL: cannot read {path}: {first_line(error)}"
    return None


def missing(url: str, postgres_schema: str) -> str | None:
    """What is missing of the store, named with its setting, or None if it is there."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        if not path.is_file():
            return f"CASINO_DATABASE_URL: {path} does not exist"
        return _sqlite_missing(path)
    import psycopg

    table = f"{postgres_schema}.{POSTGRES_EVENTS_TABLE}"
    conninfo = url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(conninfo, connect_timeout=CONNECT_TIMEOUT_SECONDS) as connection:
        found = connection.execute("SELECT to_regclass(%s)", (table,)).fetchone()
    if found and found[0]:
        return None
    return f"CASINO_POSTGRES_SCHEMA: {shown_url(url)} has no store in schema {postgres_schema}"


def _sqlite_missing(path: Path) -> str | None:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        found = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
            (SQLITE_EVENTS_TABLE,),
        ).fetchone()
    return None if found else f"CASINO_DATABASE_URL: {path} holds no store"
