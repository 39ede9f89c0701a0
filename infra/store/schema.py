"""The project's own schema: the event store tables, the event chain, the triggers
that make stored events and their chain immutable, and the read models' tables, on
SQLite and PostgreSQL.

The eventsourcing library is told not to create tables (CREATE_TABLE=false), so
this is the one place the schema is defined. Every statement is idempotent.
"""

from __future__ import annotations

import re

from infra.store import chain as event_chain
from infra.store import receipts
from infra.store import seal as seals
from infra.store.database import PostgresDatabase, SQLiteDatabase
from projections.runner import all_schemas

SQLITE_EVENTS_TABLE = "stored_events"
SQLITE_SNAPSHOTS_TABLE = "stored_snapshots"
POSTGRES_EVENTS_TABLE = "casino_events"
POSTGRES_SNAPSHOTS_TABLE = "casino_snapshots"
SCHEMA_LOCK_KEY = 72_010_000

# What the service may only insert into and read (rules.md 5).
LOG_TABLES = (POSTGRES_EVENTS_TABLE, POSTGRES_SNAPSHOTS_TABLE, event_chain.TABLE, seals.TABLE)
IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def log_table(dialect: str) -> tuple[str, str]:
    """The events' table and the column that holds their positions, in a store of
    this dialect ("sqlite" or "postgres")."""
    if dialect == "postgres":
        return POSTGRES_EVENTS_TABLE, "notification_id"
    return SQLITE_EVENTS_TABLE, "rowid"


_SQLITE_STORE = f"""
CREATE TABLE IF NOT EXISTS {SQLITE_EVENTS_TABLE} (
    originator_id TEXT, originator_version INTEGER, topic TEXT, state BLOB,
    PRIMARY KEY (originator_id, originator_version));
CREATE TABLE IF NOT EXISTS {SQLITE_SNAPSHOTS_TABLE} (
    originator_id TEXT, originator_version INTEGER, topic TEXT, state BLOB,
    PRIMARY KEY (originator_id, originator_version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {event_chain.TABLE} (
    position INTEGER PRIMARY KEY, originator_id TEXT NOT NULL,
    originator_version INTEGER NOT NULL, link TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {seals.TABLE} (
    last_position INTEGER PRIMARY KEY, first_position INTEGER NOT NULL,
    event_count INTEGER NOT NULL, events_digest TEXT NOT NULL, previous TEXT NOT NULL,
    digest TEXT NOT NULL, signature TEXT NOT NULL, receipts_digest TEXT);
"""

_SQLITE_IMMUTABLE = """
CREATE TRIGGER IF NOT EXISTS {table}_refuse_update BEFORE UPDATE ON {table}
BEGIN SELECT RAISE(ABORT, 'stored events are immutable: UPDATE refused'); END;
CREATE TRIGGER IF NOT EXISTS {table}_refuse_delete BEFORE DELETE ON {table}
BEGIN SELECT RAISE(ABORT, 'stored events are immutable: DELETE refused'); END;
"""

_POSTGRES_STORE = """
SELECT pg_advisory_xact_lock({lock});
CREATE SCHEMA IF NOT EXISTS {schema};
DO $$ BEGIN
    CREATE TYPE {schema}.stored_event_uuid AS (
        originator_id uuid, originator_version bigint, topic text, state bytea);
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
CREATE TABLE IF NOT EXISTS {schema}.{events} (
    originator_id uuid NOT NULL, originator_version bigint NOT NULL,
    topic text, state bytea, notification_id bigserial,
    PRIMARY KEY (originator_id, originator_version));
CREATE UNIQUE INDEX IF NOT EXISTS {events}_notification_id_idx
    ON {schema}.{events} (notification_id ASC);
CREATE TABLE IF NOT EXISTS {schema}.{snapshots} (
    originator_id uuid NOT NULL, originator_version bigint NOT NULL,
    topic text, state bytea,
    PRIMARY KEY (originator_id, originator_version));
CREATE OR REPLACE FUNCTION {schema}.refuse_event_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'stored events are immutable: % refused on %', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TABLE IF NOT EXISTS {schema}.{chain} (
    position bigint PRIMARY KEY, originator_id text NOT NULL,
    originator_version bigint NOT NULL, link text NOT NULL);
-- Each event's link in `event_chain`, in position order, in the transaction that
-- inserts it: the hash of the link before it and the event (infra/store/chain.py:
-- link_of). The events table's EXCLUSIVE lock (infra/store/recorders.py) makes the
-- head read here the head. One run per INSERT statement, not one per row: a save's
-- dozens of events cost one look at the chain's head and one INSERT of their links.
-- (Stores made with the row trigger, chain_event, get this one instead at start-up.)
CREATE OR REPLACE FUNCTION {schema}.chain_events() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    head record;
    previous text := '{genesis}';
    reach bigint := 0;
    event record;
    positions bigint[] := '{{}}';
    ids text[] := '{{}}';
    versions bigint[] := '{{}}';
    links text[] := '{{}}';
BEGIN
    SELECT position, link INTO head FROM {schema}.{chain} ORDER BY position DESC LIMIT 1;
    IF FOUND THEN
        previous := head.link;
        reach := head.position;
    END IF;
    FOR event IN SELECT notification_id, originator_id, originator_version, topic, state
        FROM inserted ORDER BY notification_id
    LOOP
        IF reach >= event.notification_id THEN
            RAISE EXCEPTION 'the event chain already reaches position %, past the new event at %',
                reach, event.notification_id USING ERRCODE = 'data_exception';
        END IF;
        previous := encode(sha256(convert_to(previous || '|' || event.originator_id::text
            || '|' || event.originator_version::text || '|' || event.topic || '|'
            || encode(sha256(event.state), 'hex'), 'UTF8')), 'hex');
        reach := event.notification_id;
        positions := positions || event.notification_id;
        ids := ids || event.originator_id::text;
        versions := versions || event.originator_version;
        links := links || previous;
    END LOOP;
    INSERT INTO {schema}.{chain} (position, originator_id, originator_version, link)
        SELECT * FROM unnest(positions, ids, versions, links);
    RETURN NULL;
END $$;
CREATE TABLE IF NOT EXISTS {schema}.{seals} (
    last_position bigint PRIMARY KEY, first_position bigint NOT NULL,
    event_count bigint NOT NULL, events_digest text NOT NULL, previous text NOT NULL,
    digest text NOT NULL, signature text NOT NULL);
-- Seals made before receipts left the log have none (infra/store/receipts.py).
ALTER TABLE {schema}.{seals} ADD COLUMN IF NOT EXISTS receipts_digest text;
-- The sealed recorder (infra/store/recorders.py) makes a save's seal before its one
-- trip, over the positions after the head it last saw; under the events' lock the
-- trip first checks that head, and fails with serialization_failure if another
-- writer moved it (the recorder then looks again and seals anew).
CREATE OR REPLACE FUNCTION {schema}.log_top() RETURNS bigint
LANGUAGE sql STABLE AS $$ SELECT COALESCE(MAX(notification_id), 0) FROM {schema}.{events} $$;
CREATE OR REPLACE FUNCTION {schema}.seal_head_digest() RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT COALESCE((SELECT digest FROM {schema}.{seals} ORDER BY last_position DESC LIMIT 1),
        '{seal_genesis}') $$;
CREATE OR REPLACE FUNCTION {schema}.expect_log_top(expected_digest text, expected_top bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    top bigint := {schema}.log_top();
    reach bigint := GREATEST(
        (SELECT COALESCE(MAX(position), 0) FROM {schema}.{chain}),
        (SELECT COALESCE(MAX(last_position), 0) FROM {schema}.{seals}));
BEGIN
    IF reach > top THEN
        RAISE EXCEPTION 'the event chain already reaches position %, past the last event at '
            '%: events were removed from the end of the store (run `casino audit verify`); '
            'nothing was saved', reach, top USING ERRCODE = 'data_exception';
    END IF;
    -- Events past the last seal were inserted behind the service's back: a save on
    -- top of them would act on them (a forged deposit paying a real withdrawal).
    IF (SELECT MAX(last_position) FROM {schema}.{seals}) < top THEN
        RAISE EXCEPTION 'the events after position % are in no seal: they were inserted '
            'behind the service''s back (run `casino audit verify`); nothing was saved',
            (SELECT MAX(last_position) FROM {schema}.{seals}) USING ERRCODE = 'data_exception';
    END IF;
    IF top <> expected_top OR {schema}.seal_head_digest() <> expected_digest THEN
        RAISE EXCEPTION 'the log moved on since this save was sealed'
            USING ERRCODE = 'serialization_failure';
    END IF;
END $$;
-- A store that seals nothing (tests, benchmarks) never adds to a sealed log: such an
-- event would look inserted behind the service's back (infra/store/recorders.py).
CREATE OR REPLACE FUNCTION {schema}.refuse_unsealed_save() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM {schema}.{seals}) THEN
        RAISE EXCEPTION '{unsealed_refused}' USING ERRCODE = 'assert_failure';
    END IF;
END $$;
-- One sealed save, as one statement of fixed text: the recorder binds its rows as
-- arrays, server-side, in binary (infra/store/recorders.py: SingleTripRecorder).
CREATE OR REPLACE FUNCTION {schema}.save_sealed(
    lock_timeout text, channel text, expected_digest text, expected_top bigint,
    positions bigint[], ids uuid[], versions bigint[], topics text[], states bytea[],
    key_ids uuid[], scoped_keys text[], fingerprints text[], answers bytea[],
    answer_hashes text[], recorded bigint[],
    seal_last bigint, seal_first bigint, seal_count bigint, seal_events text,
    seal_previous text, seal_digest text, seal_signature text, seal_receipts text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('lock_timeout', lock_timeout, true);
    LOCK TABLE {schema}.{events} IN EXCLUSIVE MODE;
    PERFORM {schema}.expect_log_top(expected_digest, expected_top);
    PERFORM pg_notify(channel, '');
    INSERT INTO {schema}.{events}
        (notification_id, originator_id, originator_version, topic, state)
        SELECT * FROM unnest(positions, ids, versions, topics, states);
    INSERT INTO {schema}.{receipts} ({receipt_columns})
        SELECT k, s, f, a, h, r, seal_last
        FROM unnest(key_ids, scoped_keys, fingerprints, answers, answer_hashes, recorded)
            AS receipt(k, s, f, a, h, r);
    INSERT INTO {schema}.{seals} ({seal_columns}) VALUES (seal_last, seal_first,
        seal_count, seal_events, seal_previous, seal_digest, seal_signature, seal_receipts);
    -- Positions are given, not drawn: the sequence follows, for any other writer.
    PERFORM setval(pg_get_serial_sequence('{schema}.{events}', 'notification_id'),
        {schema}.log_top());
END $$;
-- Stores made before chain_events chain with chain_event per row: replaced here.
CREATE OR REPLACE TRIGGER {events}_chain AFTER INSERT ON {schema}.{events}
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.chain_events();
"""

_POSTGRES_IMMUTABLE = """
CREATE OR REPLACE TRIGGER {table}_refuse_change BEFORE UPDATE OR DELETE ON {schema}.{table}
    FOR EACH ROW EXECUTE FUNCTION {schema}.refuse_event_change();
CREATE OR REPLACE TRIGGER {table}_refuse_truncate BEFORE TRUNCATE ON {schema}.{table}
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.refuse_event_change();
"""


def create_sqlite_schema(database: SQLiteDatabase) -> None:
    immutable = "".join(
        _SQLITE_IMMUTABLE.format(table=table)
        for table in (SQLITE_EVENTS_TABLE, SQLITE_SNAPSHOTS_TABLE, event_chain.TABLE, seals.TABLE)
    )
    database.script(_SQLITE_STORE + immutable)
    _add_sqlite_column(database, seals.TABLE, "receipts_digest", "TEXT")
    database.script(receipts.SQLITE_SCHEMA + all_schemas())


def _add_sqlite_column(database: SQLiteDatabase, table: str, column: str, kind: str) -> None:
    """A column added to a table of a store made before it (SQLite has no IF NOT
    EXISTS for columns); once the schema's version has it, a no-op."""
    with database.read() as cursor:
        cursor.execute(f"PRAGMA table_info({table})")
        columns = {row[1] for row in cursor.fetchall()}
    if column not in columns:
        database.script(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


def create_postgres_schema(database: PostgresDatabase) -> None:
    schema = check_identifier(database.schema)
    store = _POSTGRES_STORE.format(
        lock=SCHEMA_LOCK_KEY,
        schema=schema,
        events=POSTGRES_EVENTS_TABLE,
        snapshots=POSTGRES_SNAPSHOTS_TABLE,
        chain=event_chain.TABLE,
        seals=seals.TABLE,
        seal_genesis=seals.GENESIS,
        genesis=event_chain.GENESIS,
        seal_columns=seals.COLUMNS,
        unsealed_refused=seals.UNSEALED_SAVE_REFUSED,
        receipts=receipts.TABLE,
        receipt_columns=receipts.INSERT_COLUMNS,
    )
    immutable = "".join(
        _POSTGRES_IMMUTABLE.format(schema=schema, table=table) for table in LOG_TABLES
    )
    receipts_table = receipts.POSTGRES_SCHEMA.format(
        schema=schema,
        table=receipts.TABLE,
        events=POSTGRES_EVENTS_TABLE,
        receipt_topic=receipts.RECEIPT_EVENT_TOPIC,
    )
    database.script(store + immutable + receipts_table + all_schemas())


def check_identifier(name: str) -> str:
    if not IDENTIFIER.fullmatch(name):
        raise ValueError(f"{name!r} is not a plain lower-case SQL identifier")
    return name


_POSTGRES_GRANTS = """
SELECT pg_advisory_xact_lock({lock});
REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role};
GRANT USAGE ON SCHEMA {schema} TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role};
REVOKE UPDATE, DELETE ON {log_tables} FROM {role};
-- The recorder's LOCK TABLE ... IN EXCLUSIVE MODE (infra/store/recorders.py) asks for
-- UPDATE, DELETE or TRUNCATE on the table; TRUNCATE is the one a trigger refuses
-- outright, and only the owner could disable that trigger.
GRANT TRUNCATE ON {schema}.{events} TO {role};
-- Receipts: inserted and read, and pruned (their answer set to NULL), nothing more;
-- a trigger refuses any other change (infra/store/receipts.py).
REVOKE UPDATE, DELETE ON {schema}.{receipts} FROM {role};
GRANT UPDATE (answer, pruned_ms) ON {schema}.{receipts} TO {role};
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {schema} TO {role};
-- The save (save_sealed) and the checks it calls, granted outright rather than left to
-- PostgreSQL's default EXECUTE for PUBLIC, which a hardened database revokes. Each runs
-- with its caller's rights (none is SECURITY DEFINER): calling one grants no more.
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {schema} TO {role};
"""


def grant_service_role(owner: PostgresDatabase, role: str) -> None:
    """Let `role` (the service's) insert into and read the log's tables (events,
    snapshots, chain, seals), and write the read models; nothing more. It owns no
    table, so it can neither alter one, nor truncate one, nor disable a trigger."""
    schema = check_identifier(owner.schema)
    role = check_identifier(role)
    with owner.read() as cursor:
        cursor.execute("SELECT current_user::text")
        row = cursor.fetchone()
    if row is not None and row[0] == role:
        # The service runs as the owner (which production refuses: privileges.py):
        # revoking "the service's" rights would take the owner's own.
        return
    log_tables = ", ".join(f"{schema}.{table}" for table in LOG_TABLES)
    owner.script(
        _POSTGRES_GRANTS.format(
            lock=SCHEMA_LOCK_KEY,
            schema=schema,
            role=role,
            log_tables=log_tables,
            events=POSTGRES_EVENTS_TABLE,
            receipts=receipts.TABLE,
        )
    )
