"""Moving a tenant's schema to another PostgreSQL cluster (rules.md 11; docs/scaling.md).

`casino tenants move NAME --to URL --public-key KEY`, with CASINO_TENANTS a file:

1. copy, while the tenant goes on taking commands: by logical replication where
   the source runs wal_level=logical (`Replication`: the log's tables published,
   the target subscribed), else `pg_dump --schema | pg_restore` (`Dump`);
2. verify the copy (every seal against the pinned KEY, chain, books, rounds), which
   writes the state an incremental verify takes up from;
3. fence: the directory marks the tenant `fenced`; every server watching it
   refuses the tenant's commands, 503 `tenant_moving` with Retry-After
   (infra/http/tenants.py); the move then takes the log's EXCLUSIVE lock on the
   source, the lock every save takes, so no save of any process is in flight;
4. bring the target up to the locked source (the subscription caught up and
   dropped; or events, whose chain the target's trigger links again, seals and
   receipts copied, each a tail by position) and verify only that
   (`--since` the state of 2), the witness checked too: the fence lasts as long
   as the tail, not the log;
5. switch: the directory names the target, still fenced; each server refuses all
   of the tenant's requests (reads too) while it opens the tenant there; then the
   source schema is renamed `SCHEMA_moved_<time>` in the fence's own transaction
   (a writer still waiting for the lock then finds no table: nothing is ever saved
   on the old copy), and the directory's fence is lifted.

A failed check leaves the tenant where it was: the fence is lifted, the source
untouched, the copy left on the target for a look (and dropped before a retry).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from infra.config import Settings, load_settings
from infra.store import receipts
from infra.store import seal as seals
from infra.store.schema import POSTGRES_EVENTS_TABLE

FENCE_SETTLE_SECONDS = 0.3  # servers poll the directory every DIRECTORY_POLL_SECONDS
DIRECTORY_POLL_SECONDS = 0.1
LOCK_SECONDS = 5  # the fence's lock waits this long for saves in flight
COMMAND_SECONDS_MAX = 3600  # a dump of the largest schema this is meant for


class MoveRefused(Exception):
    """The move cannot start (a usage or configuration error); nothing was done."""


class CopyNotWhole(Exception):
    """Verify found the copy wrong: the tenant stays where it was."""


@dataclass
class MoveReport:
    tenant: str
    source: str
    target: str
    method: str  # "pg_dump | pg_restore", or "logical replication"
    copied_events: int  # by the dump, before the fence
    tail_events: int  # inside the fence
    fence_seconds: float  # from the directory's fence to its switch
    retired_schema: str


Verify = Callable[[Settings, Any], Any]  # (target settings, state) -> report


def move_tenant(
    directory: Path,
    name: str,
    target_url: str,
    verify: Verify,
    base: Settings | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> MoveReport:
    """Move the tenant `name` of the directory file to the database at `target_url`."""
    from infra.tenants import load_tenants

    base = base or load_settings()
    tenants = load_tenants(base.model_copy(update={"tenants": str(directory)}))
    if name not in tenants:
        raise MoveRefused(f"no tenant {name!r}; the tenants are {', '.join(tenants)}")
    source = tenants[name].settings
    if not (source.on_postgres and target_url.startswith(("postgresql://", "postgres://"))):
        raise MoveRefused("a move is from PostgreSQL to PostgreSQL")
    schema = source.postgres_schema
    owner = source.database_owner_url or source.database_url
    if _same_database(owner, target_url):
        raise MoveRefused(f"the tenant {name} is in that database already")
    if _schema_exists(target_url, schema):
        raise MoveRefused(f"the target has a schema {schema} already: drop it, or move elsewhere")
    target = source.model_copy(update={"database_url": target_url, "database_owner_url": ""})
    copier: Copier = (
        Replication(owner, target_url, schema)
        if _logical(owner)
        else Dump(owner, target_url, schema)
    )
    say(f"copying schema {schema} to the target ({copier.method})")
    try:
        copier.start()
        copied = _top(target_url, schema)
        say(f"verifying the copy: {copied} events")
        with copier.still():  # verified as it stands, not as it is being written
            first = verify(target.model_copy(update={"witness": _no_witness(directory)}), None)
        if first.problems or first.state is None:
            raise CopyNotWhole(f"the copy does not verify: {_first(first.problems)}")
        fenced_at = time.monotonic()
        _rewrite(directory, name, {"fenced": True})
        try:
            time.sleep(FENCE_SETTLE_SECONDS)  # every server has seen the fence
            tail, retired = _switch(
                directory, name, source, target, first.state, verify, copier, say
            )
        finally:
            _rewrite(directory, name, {"fenced": None})  # moved, or where it was: lifted
    finally:
        copier.close()
    fence = time.monotonic() - fenced_at
    return MoveReport(
        name, _shown(owner), _shown(target_url), copier.method, copied, tail, fence, retired
    )


def _switch(
    directory: Path,
    name: str,
    source: Settings,
    target: Settings,
    state: Any,
    verify: Verify,
    copier: Copier,
    say: Callable[[str], None],
) -> tuple[int, str]:
    schema = source.postgres_schema
    owner = source.database_owner_url or source.database_url
    retired = f"{schema[:40]}_moved_{time.strftime('%Y%m%d%H%M%S')}"
    with psycopg.connect(_conninfo(owner)) as held:
        held.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(f"{LOCK_SECONDS}s")))
        events = sql.Identifier(schema, POSTGRES_EVENTS_TABLE)
        held.execute(sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(events))
        tail = copier.finish(held)
        say(f"fenced: copied {tail} events saved since; verifying them")
        second = verify(target, state)
        if second.problems:
            raise CopyNotWhole(f"the tail does not verify: {_first(second.problems)}")
        # The servers open the tenant at the target, its commands still fenced...
        entry: dict[str, Any] = {"database_url": target.database_url, "fenced": True}
        if source.database_owner_url:
            entry["database_owner_url"] = None
        _rewrite(directory, name, entry)
        time.sleep(FENCE_SETTLE_SECONDS)
        # ...then the old copy is retired: nothing can be saved there any more.
        held.execute(
            sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                sql.Identifier(schema), sql.Identifier(retired)
            )
        )
        held.commit()
    return tail, retired


class Copier:
    """How the schema reaches the target: `start` copies it while the tenant takes
    commands; `finish`, inside the fence (the source's lock held on `held`), brings
    the target up to the source and says how many events that added; `close` drops
    what the copy set up on either side."""

    method = ""

    def __init__(self, source_url: str, target_url: str, schema: str) -> None:
        self.source_url, self.target_url, self.schema = source_url, target_url, schema

    def start(self) -> None:
        raise NotImplementedError

    def finish(self, held: psycopg.Connection[Any]) -> int:
        raise NotImplementedError

    def close(self) -> None:
        pass

    @contextlib.contextmanager
    def still(self) -> Iterator[None]:
        """The copy not written to meanwhile."""
        yield


class Dump(Copier):
    """pg_dump | pg_restore, then the tail by position inside the fence."""

    method = "pg_dump | pg_restore"

    def start(self) -> None:
        _dump_and_restore(self.source_url, self.target_url, self.schema)

    def finish(self, held: psycopg.Connection[Any]) -> int:
        return _copy_tail(held, self.target_url, self.schema)


# The log's tables: inserted into only (a receipt's prune aside, which a copy may
# miss: the target keeps the answer until its own pruner drops it).
LOG_TABLES = (POSTGRES_EVENTS_TABLE, "event_chain", seals.TABLE, receipts.TABLE, "casino_snapshots")
CATCH_UP_SECONDS = 30.0


class Replication(Copier):
    """Logical replication, where the source runs wal_level=logical: the read models
    dumped with the schema's structure, the log's tables published (inserts only:
    the read models are updated in place and have no replica identity) and
    subscribed to by the target, which copies them and then follows every insert;
    inside the fence the target catches up with the locked source and the
    subscription is dropped."""

    method = "logical replication"

    def __init__(self, source_url: str, target_url: str, schema: str) -> None:
        super().__init__(source_url, target_url, schema)
        self.name = f"casino_move_{schema}"[:63]

    def start(self) -> None:
        log_tables = [f"--exclude-table-data={self.schema}.{table}" for table in LOG_TABLES]
        _dump_and_restore(self.source_url, self.target_url, self.schema, log_tables)
        tables = sql.SQL(", ").join(sql.Identifier(self.schema, t) for t in LOG_TABLES)
        with psycopg.connect(_conninfo(self.source_url), autocommit=True) as source:
            source.execute(
                sql.SQL("CREATE PUBLICATION {} FOR TABLE {} WITH (publish = 'insert')").format(
                    sql.Identifier(self.name), tables
                )
            )
        with psycopg.connect(_conninfo(self.target_url), autocommit=True) as target:
            target.execute(
                sql.SQL("CREATE SUBSCRIPTION {} CONNECTION {} PUBLICATION {}").format(
                    sql.Identifier(self.name),
                    sql.Literal(_conninfo(self.source_url)),
                    sql.Identifier(self.name),
                )
            )
            deadline = time.monotonic() + COMMAND_SECONDS_MAX
            while _unsynchronized(target, self.name) and time.monotonic() < deadline:
                time.sleep(0.1)

    @contextlib.contextmanager
    def still(self) -> Iterator[None]:
        """The subscription paused (each table copied apart, and the apply of the
        source's transactions, may show the log's tables at different positions to
        a verify reading them one after another); the source keeps the WAL meanwhile."""
        name = sql.Identifier(self.name)
        with psycopg.connect(_conninfo(self.target_url), autocommit=True) as target:
            target.execute(sql.SQL("ALTER SUBSCRIPTION {} DISABLE").format(name))
            deadline = time.monotonic() + CATCH_UP_SECONDS
            while _applying(target, self.name) and time.monotonic() < deadline:
                time.sleep(0.05)
            try:
                yield
            finally:
                target.execute(sql.SQL("ALTER SUBSCRIPTION {} ENABLE").format(name))
            # Its worker starts again only after wal_retrieve_retry_interval (5 s): the
            # fence waits for none of that, the target is caught up before it.
            with psycopg.connect(_conninfo(self.source_url), autocommit=True) as source:
                wanted = _positions(source, self.schema)
            deadline = time.monotonic() + CATCH_UP_SECONDS
            while _positions(target, self.schema) < wanted and time.monotonic() < deadline:
                time.sleep(0.05)

    def finish(self, held: psycopg.Connection[Any]) -> int:
        """With the source locked: wait until the target has its every row, then
        end the subscription; the sequence set as the source's."""
        before = _top(self.target_url, self.schema)
        wanted = _positions(held, self.schema)
        deadline = time.monotonic() + CATCH_UP_SECONDS
        with psycopg.connect(_conninfo(self.target_url), autocommit=True) as target:
            while _positions(target, self.schema) != wanted:
                if time.monotonic() > deadline:
                    raise CopyNotWhole("the subscription did not catch up with the source")
                time.sleep(0.02)
            self._drop_subscription(target)
            target.execute(_setval(self.schema))
        held.execute(sql.SQL("DROP PUBLICATION IF EXISTS {}").format(sql.Identifier(self.name)))
        return _top(self.target_url, self.schema) - before

    def close(self) -> None:
        target_url, source_url = _conninfo(self.target_url), _conninfo(self.source_url)
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(target_url, autocommit=True) as target,
        ):
            self._drop_subscription(target)
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(source_url, autocommit=True) as source,
        ):
            source.execute(
                sql.SQL("DROP PUBLICATION IF EXISTS {}").format(sql.Identifier(self.name))
            )

    def _drop_subscription(self, target: psycopg.Connection[Any]) -> None:
        """The subscription and its slot on the source, gone (the slot would keep
        the source's WAL for ever)."""
        found = target.execute(
            "SELECT 1 FROM pg_subscription WHERE subname = %s", (self.name,)
        ).fetchone()
        if found is None:
            return
        target.execute(sql.SQL("DROP SUBSCRIPTION {}").format(sql.Identifier(self.name)))


def _unsynchronized(target: psycopg.Connection[Any], name: str) -> bool:
    """Whether a table of the subscription is still being copied (not yet `r`eady)."""
    found = target.execute(
        "SELECT count(*) FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid"
        " WHERE s.subname = %s AND r.srsubstate <> 'r'",
        (name,),
    ).fetchone()
    return bool(found and found[0])


def _applying(target: psycopg.Connection[Any], name: str) -> bool:
    """Whether a worker of the subscription still runs."""
    found = target.execute(
        "SELECT count(*) FROM pg_stat_subscription WHERE subname = %s AND pid IS NOT NULL",
        (name,),
    ).fetchone()
    return bool(found and found[0])


def _positions(connection: psycopg.Connection[Any], schema: str) -> tuple[int, ...]:
    """Where the log's tables reach: events, chain, seals, receipts."""
    return (
        _max(connection, schema, POSTGRES_EVENTS_TABLE, "notification_id"),
        _max(connection, schema, "event_chain", "position"),
        _max(connection, schema, seals.TABLE, "last_position"),
        _count(connection, schema, receipts.TABLE),
    )


def _setval(schema: str) -> sql.Composed:
    return sql.SQL(
        "SELECT setval(pg_get_serial_sequence({}, 'notification_id'), {}.log_top())"
    ).format(sql.Literal(f"{schema}.{POSTGRES_EVENTS_TABLE}"), sql.Identifier(schema))


def _logical(url: str) -> bool:
    with psycopg.connect(_conninfo(url), connect_timeout=5) as connection:
        found = connection.execute("SHOW wal_level").fetchone()
    return bool(found and found[0] == "logical")


def _copy_tail(source: psycopg.Connection[Any], target_url: str, schema: str) -> int:
    """What the source holds past the target's copy, by position: events, seals,
    receipts. The target's trigger chains the events as the source's did."""
    with psycopg.connect(_conninfo(target_url)) as target:
        top = _max(target, schema, POSTGRES_EVENTS_TABLE, "notification_id")
        sealed = _max(target, schema, seals.TABLE, "last_position")
        event_columns = ("notification_id", "originator_id", "originator_version", "topic", "state")
        tail = _copy_rows(source, target, schema, POSTGRES_EVENTS_TABLE, event_columns,
                          f"notification_id > {top} ORDER BY notification_id")  # fmt: skip
        for table, position in ((seals.TABLE, "last_position"), (receipts.TABLE, "position")):
            columns = _columns(source, schema, table)
            _copy_rows(source, target, schema, table, columns, f"{position} > {sealed}")
        target.execute(_setval(schema))
        target.commit()
    return tail


def _copy_rows(
    source: psycopg.Connection[Any],
    target: psycopg.Connection[Any],
    schema: str,
    table: str,
    columns: tuple[str, ...],
    where: str,  # made here of integers read from the target, never of input
) -> int:
    listed = sql.SQL(", ").join(map(sql.Identifier, columns))
    name = sql.Identifier(schema, table)
    out = sql.SQL("COPY (SELECT {} FROM {} WHERE {}) TO STDOUT (FORMAT BINARY)").format(
        listed, name, sql.SQL(where)
    )
    into = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(name, listed)
    before = _count(target, schema, table)
    with source.cursor().copy(out) as reading, target.cursor().copy(into) as writing:
        for chunk in reading:
            writing.write(chunk)
    return _count(target, schema, table) - before


def _columns(connection: psycopg.Connection[Any], schema: str, table: str) -> tuple[str, ...]:
    rows = connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
        " AND table_name = %s ORDER BY ordinal_position",
        (schema, table),
    ).fetchall()
    return tuple(str(row[0]) for row in rows)


def _max(connection: psycopg.Connection[Any], schema: str, table: str, column: str) -> int:
    query = sql.SQL("SELECT COALESCE(MAX({}), 0) FROM {}").format(
        sql.Identifier(column), sql.Identifier(schema, table)
    )
    found = connection.execute(query).fetchone()
    return int(found[0]) if found else 0


def _count(connection: psycopg.Connection[Any], schema: str, table: str) -> int:
    found = connection.execute(
        sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(schema, table))
    ).fetchone()
    return int(found[0]) if found else 0


def _top(url: str, schema: str) -> int:
    with psycopg.connect(_conninfo(url)) as connection:
        return _max(connection, schema, POSTGRES_EVENTS_TABLE, "notification_id")


def _schema_exists(url: str, schema: str) -> bool:
    with psycopg.connect(_conninfo(url), connect_timeout=5) as connection:
        found = connection.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
        ).fetchone()
    return found is not None


def _same_database(one: str, other: str) -> bool:
    def where(url: str) -> tuple[Any, ...]:
        info = psycopg.conninfo.conninfo_to_dict(_conninfo(url))
        return (info.get("host"), str(info.get("port") or 5432), info.get("dbname"))

    return where(one) == where(other)


def _dump_and_restore(
    source_url: str, target_url: str, schema: str, options: list[str] | None = None
) -> None:
    dump = ["pg_dump", f"--dbname={_conninfo(source_url)}", f"--schema={schema}",
            "--format=custom", "--no-owner", "--no-acl", *(options or [])]  # fmt: skip
    restore = ["pg_restore", f"--dbname={_conninfo(target_url)}", "--no-owner", "--no-acl",
               "--exit-on-error", "--single-transaction"]  # fmt: skip
    dumping = subprocess.Popen(dump, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    restoring = subprocess.run(
        restore, stdin=dumping.stdout, capture_output=True, timeout=COMMAND_SECONDS_MAX, check=False
    )
    assert dumping.stdout is not None
    dumping.stdout.close()
    dumped = dumping.wait(timeout=COMMAND_SECONDS_MAX)
    errors = (dumping.stderr.read() if dumping.stderr else b"").decode()[:500]
    if dumped != 0 or restoring.returncode != 0:
        raise MoveRefused(f"the copy failed: {errors or restoring.stderr.decode()[:500]}")


def _rewrite(directory: Path, name: str, changes: dict[str, Any]) -> None:
    """The directory file with the tenant's entry changed (None removes a field),
    replaced whole, so a server never reads half of it."""
    raw = json.loads(directory.read_text())
    entry = raw["tenants"][name]
    for field, value in changes.items():
        if value is None:
            entry.pop(field, None)
        else:
            entry[field] = value
    written = directory.with_name(f".{directory.name}.{os.getpid()}.tmp")
    written.write_text(json.dumps(raw, indent=2))
    os.replace(written, directory)


def _no_witness(directory: Path) -> str:
    """Before the fence the witness may be ahead of the copy: checked inside it."""
    return str(directory.with_name(f".{directory.name}.no-witness.jsonl"))


def _first(problems: list[Any]) -> str:
    return "; ".join(map(str, problems[:3]))


def _conninfo(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


def _shown(url: str) -> str:
    from infra.store.reach import shown_url

    return shown_url(url)
