"""Store wiring: one URL picks SQLite (a file, the default) or PostgreSQL.

Builds the schema first, then the application and the projector over it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eventsourcing.persistence import Notification

from domain.application import CasinoApplication
from domain.settings import GameSettings
from domain.unit import SecretBox
from infra.commands.save import insert_of
from infra.commands.seam import CommandSeam
from infra.secrets import KEY_BYTES, AesGcmBox
from infra.store import faults, key_chain
from infra.store.database import PostgresDatabase, SQLiteDatabase
from infra.store.factory import APPLICATION_NAME, SESSION_OPTIONS
from infra.store.faults import StoreTimeouts
from infra.store.group_commit import GroupCommit, GroupCommitSettings
from infra.store.money_out import MoneyOutCheck
from infra.store.recorders import ChainingSQLiteRecorder, SingleTripRecorder
from infra.store.schema import (
    SQLITE_EVENTS_TABLE,
    check_identifier,
    create_postgres_schema,
    create_sqlite_schema,
    grant_service_role,
)
from infra.store.seal import Sealer
from infra.store.sealed_reads import SealedReads
from infra.store.sealed_snapshots import SealedSnapshots
from projections.base import POSITION_MAX, Cursor, Database
from projections.runner import Projector

AGGREGATE_CACHE_SIZE = 10_000
# The key of stores opened without one (tests, benchmarks): good for this process only.
# A server passes the configured CASINO_SECRET_KEY (infra/config.py: Settings.secret_box).
PROCESS_SECRET_KEY = os.urandom(KEY_BYTES)
DEFAULT_GROUP_COMMIT = GroupCommitSettings()
# How long a connection may sit in an open transaction doing nothing.
POSTGRES_TIMEOUT_SECONDS = 5


@dataclass
class Store:
    app: CasinoApplication
    database: Database
    projector: Projector
    url: str
    postgres_schema: str = "public"
    # False when `casino projections run` keeps the read models in a process of its
    # own: readers and workers of this process then never write them.
    projector_inside: bool = True
    # With the projector in another process: whether every read waits until the read
    # models have the log's head as of the read (else only the `min_position` asked).
    reads_wait_for_head: bool = False
    # Gathers concurrent commands' saves into shared transactions; None when off.
    group_commit: GroupCommit | None = None

    @property
    def commands(self) -> CommandSeam:
        """The seam that runs the application's commands (`app.commands`)."""
        assert isinstance(self.app.commands, CommandSeam)
        return self.app.commands

    def close(self) -> None:
        self.app.close()
        self.database.close()


def open_store(
    url: str,
    *,
    postgres_schema: str = "public",
    pool_size: int = 5,
    games: GameSettings | None = None,
    group_commit: GroupCommitSettings | None = DEFAULT_GROUP_COMMIT,
    seal_key: Ed25519PrivateKey | None = None,
    owner_url: str | None = None,
    box: SecretBox | None = None,
    opened_elsewhere: bool = False,
    timeouts: StoreTimeouts | None = None,
    application_name: str = "casino",
    create: bool = True,
) -> Store:
    """The store at `url`, its schema made; concurrent commands' saves share
    transactions unless `group_commit` is None. With `seal_key`, every transaction
    that inserts events is sealed and snapshots are signed and trusted
    (infra/store/seal.py); without, nothing is sealed and no snapshot is used. With
    `owner_url` (PostgreSQL), that role builds the schema and grants `url`'s role
    only what the service needs (infra/store/schema.py). `box` seals round seeds
    (CASINO_SECRET_KEY); without, a key of this process only (tests, benchmarks).
    `opened_elsewhere`: the store another process opened already (its schema made,
    by whichever role made it, and its read models started), opened again only to
    read: nothing is created or changed (verify's rebuild aside process).
    `timeouts`: a server's, from its request deadline (infra/store/faults.py); by
    default a statement may take as long as it needs. `application_name` names the
    process's PostgreSQL connections. `create=False`: no statement that makes or
    grants anything is sent to PostgreSQL (the commands that only read, whatever
    role they run as)."""
    database: Database
    timeouts = timeouts or StoreTimeouts.unbounded_statements()
    if url.startswith("sqlite:///"):
        database, env = _sqlite(url.removeprefix("sqlite:///"), make=not opened_elsewhere)
    else:
        schema = check_identifier(postgres_schema)
        where = Postgres(url, schema, pool_size, timeouts, application_name)
        database, env = _postgres(where, owner_url, make=create and not opened_elsewhere)
    env.update(
        CREATE_TABLE="false",
        AGGREGATE_CACHE_MAXSIZE=str(AGGREGATE_CACHE_SIZE),
        # Commands trust the cache and let the optimistic-concurrency check catch an
        # aggregate that another process moved on (the seam then reloads it).
        AGGREGATE_CACHE_FASTFORWARD="false",
    )
    app = CasinoApplication(env=env, games=games)
    seam = CommandSeam(app, box=box or AesGcmBox(PROCESS_SECRET_KEY))
    _seal(seam, seal_key, database)
    if seam.sealed is not None and not opened_elsewhere:
        # The chain of seal keys from the log; a key outside it stops the start here.
        try:
            key_chain.wire(app, seam.sealed, database)  # type: ignore[arg-type]
        except key_chain.SealKeyOutsideChain:
            app.close()
            database.close()
            raise
    app.recorder.read_only = opened_elsewhere  # type: ignore[attr-defined]
    faults.guard(app.recorder.datastore)  # type: ignore[attr-defined]
    committer = None
    if group_commit is not None:
        committer = GroupCommit(insert_of(app.recorder), group_commit)
        seam.commit_through(committer)
    # On SQLite the events share the read models' file: the projector reads them in its
    # own transaction. Through the recorder's pool it could wait for a connection held
    # by a command that waits for the write lock the projector holds.
    reader = sqlite_notifications if isinstance(database, SQLiteDatabase) else None
    projector = Projector(
        database, app.recorder, app.mapper.to_domain_event, read_notifications=reader
    )
    if not opened_elsewhere:
        projector.start()
    return Store(app, database, projector, url, postgres_schema, group_commit=committer)


def _seal(seam: CommandSeam, key: Ed25519PrivateKey | None, database: Database) -> None:
    sealer = Sealer(key) if key is not None else None
    app = seam.app
    assert isinstance(app, CasinoApplication)
    recorder = app.recorder
    assert isinstance(recorder, ChainingSQLiteRecorder | SingleTripRecorder)
    recorder.sealer = sealer
    # A receipt no seal covers is never answered from (infra/store/sealed_reads.py).
    reads = SealedReads(database, recorder, sealer) if sealer else None
    seam.sealed = reads
    recorder.receipts_sealed = reads.receipts_sealed if reads else None
    assert app.snapshots is not None
    signed = SealedSnapshots(app.snapshots.recorder, sealer)
    app.snapshots.recorder = signed  # type: ignore[assignment]
    # A withdrawal first checks the wallet's events against the seals (money_out.py).
    app.before_money_leaves = MoneyOutCheck(reads, signed) if reads else None
    # A seed in clear is an old round's, or tampering (domain/rounds.py: unseal).
    if reads is not None and isinstance(seam.box, AesGcmBox):
        seam.box.predates_seals = reads.predates_seals


def _sqlite(path: str, make: bool = True) -> tuple[SQLiteDatabase, dict[str, str]]:
    database = SQLiteDatabase(path)
    if make:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        create_sqlite_schema(database)
    env = {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        # Chains each event in the transaction that stores it (infra/event_chain.py).
        "APPLICATION_RECORDER_TOPIC": "infra.store.recorders:ChainingSQLiteRecorder",
        "SQLITE_DBNAME": path,
        "SQLITE_LOCK_TIMEOUT": "10",
    }
    return database, env


@dataclass(frozen=True)
class Postgres:
    """Where a store's PostgreSQL is, and how its connections behave."""

    url: str
    schema: str
    pool_size: int
    timeouts: StoreTimeouts
    application_name: str


def _postgres(
    where: Postgres, owner_url: str | None, make: bool = True
) -> tuple[PostgresDatabase, dict[str, str]]:
    parts = urlparse(where.url)
    conninfo = where.url.replace("postgres://", "postgresql://", 1)
    schema, pool_size, timeouts = where.schema, where.pool_size, where.timeouts
    database = PostgresDatabase(
        conninfo, schema, pool_size, timeouts=timeouts, application_name=where.application_name
    )
    if make and owner_url:
        owner = PostgresDatabase(owner_url.replace("postgres://", "postgresql://", 1), schema, 1)
        try:
            create_postgres_schema(owner)
            grant_service_role(owner, unquote(parts.username or "postgres"))
        finally:
            owner.close()
    elif make:
        create_postgres_schema(database)
    env = {
        # The library's, its pool waited for at start (infra/store/factory.py).
        "PERSISTENCE_MODULE": "infra.store.factory:SlowStartPostgresFactory",
        "APPLICATION_RECORDER_TOPIC": "infra.store.recorders:SingleTripRecorder",
        "POSTGRES_DBNAME": unquote(parts.path.lstrip("/")) or "postgres",
        "POSTGRES_HOST": parts.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(parts.port or 5432),
        "POSTGRES_USER": unquote(parts.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parts.password or ""),
        "POSTGRES_SCHEMA": schema,
        "POSTGRES_CONNECT_TIMEOUT": str(timeouts.connect_seconds),
        "POSTGRES_LOCK_TIMEOUT": str(timeouts.lock_seconds),
        "POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT": str(POSTGRES_TIMEOUT_SECONDS),
        "POSTGRES_POOL_SIZE": str(pool_size),
        "POSTGRES_MAX_OVERFLOW": str(pool_size),
        APPLICATION_NAME: where.application_name,
        SESSION_OPTIONS: timeouts.options(),
    }
    return database, env


def sqlite_notifications(cursor: Cursor, start: int, limit: int, stop: int | None) -> list[Any]:
    """The events after `start` (up to `stop`), read as the library's recorder reads them."""
    cursor.execute(
        "SELECT rowid, originator_id, originator_version, topic, state"
        f" FROM {SQLITE_EVENTS_TABLE} WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ?",
        (start, POSITION_MAX if stop is None else stop, limit),
    )
    return [
        Notification(
            id=row[0],
            originator_id=_uuid(row[1]),
            originator_version=row[2],
            topic=row[3],
            state=row[4],
        )
        for row in cursor.fetchall()
    ]


UUIDS_KEPT_MAX = 100_000
_uuids: dict[str, UUID] = {}


def _uuid(text: str) -> UUID:
    """An aggregate's events repeat its id, and UUID() on each was a tenth of reading
    the log (measured with benchmarks/bench_audit.py): each id is made once, up to
    a bound. The same text always makes an equal UUID, so the cache changes nothing."""
    found = _uuids.get(text)
    if found is None:
        if len(_uuids) >= UUIDS_KEPT_MAX:
            _uuids.clear()
        found = _uuids[text] = UUID(text)
    return found
