"""`casino audit acknowledge`: the operator's recorded way back from a log changed
behind the service's back (rules.md 5, "Fail closed, and only when there is a reason").

The service saves nothing on top of a tail it did not write (infra/audit/tail.py
names the three shapes), so every command is refused until someone decides. This is
that decision, recorded. Under the lock every save takes (the events table's
EXCLUSIVE lock on PostgreSQL, SQLite's write lock) it reads the tail as found and,
unless it is sound, writes in that one transaction:

- a `log_acknowledged` significant event at the position past everything found
  (events, links, seals), whose details hold the reason, who ran it, and what was
  found;
- its link in the event chain (PostgreSQL's trigger writes it; on SQLite, this, as
  the recorder would);
- one seal of the acknowledgment's form (infra/store/seal.py), signed by the
  service's key, over the events standing after the last seal the key signed, the
  new event included, following the seal found at the head, forged or not.

The service's next save then finds a head its key signed and nothing after it, and
goes on. `casino audit verify` names the acknowledgment for ever, and what it found
as acknowledged rather than as discrepancies (infra/audit/acknowledged.py).
"""

from __future__ import annotations

import datetime
import getpass
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from eventsourcing.persistence import StoredEvent

from domain.ids import new_id
from domain.significant import LOG_ACKNOWLEDGED, significant, stamp
from infra.audit.tail import Counted, Tail, event_lines, read_tail
from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.database import PostgresDatabase, SQLiteDatabase
from infra.store.schema import POSTGRES_EVENTS_TABLE, check_identifier, log_table
from infra.store.seal import Seal, Sealer, parse_public_key, public_key_text
from infra.store.store import Store
from projections.base import Cursor, Database

REASON_CHARACTERS_MAX = 500
ACTOR = "operator"  # significant events' actor: who they are goes in the details
LOCK_TIMEOUT_SECONDS = 5  # as long as a save waits for the lock (infra/store/store.py)


class BadReason(ValueError):
    pass


class Unchained(Exception):
    """The acknowledgment's event got no link: the store's own guards were switched
    off, a change beyond the tail that this does not take as found."""


@dataclass(frozen=True)
class Acknowledged:
    """What `acknowledge` found, and what it wrote (`seal` None: the log was sound)."""

    tail: Tail
    details: dict[str, Any] | None = None
    event_id: str | None = None
    seal: Seal | None = None


def check_reason(reason: str) -> str:
    text = reason.strip()
    if not 1 <= len(text) <= REASON_CHARACTERS_MAX:
        raise BadReason(f"--reason must be 1-{REASON_CHARACTERS_MAX} characters, not {len(text)}")
    return text


def writer(url: str, schema: str) -> Database:
    """A connection to acknowledge with: the owner's URL on PostgreSQL (or the
    service's), taking no lock of the read models' (`acknowledge` takes the log's)."""
    if url.startswith("sqlite:///"):
        return SQLiteDatabase(url.removeprefix("sqlite:///"))
    conninfo = url.replace("postgres://", "postgresql://", 1)
    return PostgresDatabase(conninfo, check_identifier(schema), 1, lock_key=None)


def _head_keys(store: Store, sealer: Sealer) -> tuple[Ed25519PublicKey, ...]:
    """The key, and right after a rotation to it the key it was handed over from
    (infra/store/key_chain.py): the service's last seals may still be that one's."""
    own = public_key_text(sealer.public_key)
    handed = [start for start, to in store.app.seal_key_rotations() if to == own]
    return (sealer.public_key, *(parse_public_key(start) for start in handed[-1:]))


def acknowledge(
    store: Store, database: Database, key: Ed25519PrivateKey, reason: str
) -> Acknowledged:
    """Seal the tail of `store`'s log as found, with `reason`, through `database`
    (a connection to the same store); nothing is written when the log is sound."""
    sealer = Sealer(key)
    reason = check_reason(reason)
    keys = _head_keys(store, sealer)
    with database.write() as cursor:  # SQLite: BEGIN IMMEDIATE, its write lock
        _lock(cursor, database)
        tail = read_tail(cursor, database.dialect, keys)
        if tail.sound:
            return Acknowledged(tail)
        details = _details(tail, reason, _operator(cursor, database))
        event_id = new_id()
        stored = _stored(store, event_id, details)
        _insert(cursor, database.dialect, tail.position, stored)
        seal = _seal(cursor, database.dialect, sealer, tail)
        cursor.execute(seals.insert_sql(), seal.row())
        if isinstance(database, PostgresDatabase):
            _move_on(cursor, database.schema, tail.position, store)
    return Acknowledged(tail, details, event_id, seal)


def _lock(cursor: Cursor, database: Database) -> None:
    """The lock every save takes on PostgreSQL, so that the tail read is the tail
    written on (SQLite's write transaction holds the write lock already)."""
    if isinstance(database, PostgresDatabase):
        cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT_SECONDS}s'")
        cursor.execute(f"LOCK TABLE {database.schema}.{POSTGRES_EVENTS_TABLE} IN EXCLUSIVE MODE")


def _operator(cursor: Cursor, database: Database) -> dict[str, str | None]:
    """Who acknowledges: the user of the operating system, and the database's role."""
    try:
        user: str | None = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        user = None
    role = None
    if isinstance(database, PostgresDatabase):
        cursor.execute("SELECT current_user")
        row = cursor.fetchone()
        role = str(row[0]) if row else None
    return {"os_user": user, "database_role": role}


def _details(tail: Tail, reason: str, operator: dict[str, str | None]) -> dict[str, Any]:
    """The record of what was found: infra/audit/acknowledged.py reads it back."""
    head = tail.head
    return {
        "reason": reason,
        **operator,
        "position": tail.position,
        "sealed_from": tail.sealed_from,
        "log_top": tail.top,
        "chain_reach": tail.chain_reach,
        "trusted_head": _seal_record(tail.trusted),
        "head": None if head is None else {**_seal_fields(head), "signed": head == tail.trusted},
        "forged_seals": tail.forged_count,
        "forged_seals_listed": [_seal_record(seal) for seal in tail.forged],
        "unsealed": None if tail.unsealed is None else tail.unsealed.record(),
        "removed": None if tail.removed is None else tail.removed.record(),
        "cut_seal": None if tail.cut is None else tail.cut.record(),
    }


def _seal_record(seal: Seal | None) -> dict[str, Any] | None:
    if seal is None:
        return None
    return _seal_fields(seal)


def _seal_fields(seal: Seal) -> dict[str, Any]:
    return {"first": seal.first_position, "last": seal.last_position, "digest": seal.digest}


def _stored(store: Store, event_id: str, details: dict[str, Any]) -> StoredEvent:
    """The significant event, stored as the service would store it."""
    now = store.app.clock().astimezone(datetime.UTC)
    recorded = significant(event_id, LOG_ACKNOWLEDGED, stamp(now), ACTOR, details)
    (created,) = recorded.collect_events()
    return store.app.mapper.to_stored_event(created)


def _insert(cursor: Cursor, dialect: str, position: int, stored: StoredEvent) -> None:
    """The event at `position`, and (SQLite) its link, made as ChainingSQLiteRecorder
    makes one: onto the chain's head as found, so verify reads the two in step."""
    events, column = log_table(dialect)
    aggregate = UUID(str(stored.originator_id))
    originator_id = aggregate if dialect == "postgres" else aggregate.hex  # as each stores it
    cursor.execute(
        f"INSERT INTO {events} ({column}, originator_id, originator_version, topic, state)"
        " VALUES (?, ?, ?, ?, ?)",
        (position, originator_id, stored.originator_version, stored.topic, stored.state),
    )
    if dialect == "postgres":  # The events table's trigger links it (schema.py: chain_events).
        cursor.execute(f"SELECT 1 FROM {event_chain.TABLE} WHERE position = ?", (position,))
        if cursor.fetchone() is None:
            raise Unchained(
                f"the event chain's trigger on {events} is switched off (no link was made "
                "for the acknowledgment): switch it on (ALTER TABLE ... ENABLE TRIGGER USER) "
                "and acknowledge again"
            )
        return
    cursor.execute(f"SELECT link FROM {event_chain.TABLE} ORDER BY position DESC LIMIT 1")
    head = cursor.fetchone()
    link = event_chain.link_of(
        str(head[0]) if head else event_chain.GENESIS,
        str(aggregate),
        stored.originator_version,
        stored.topic,
        stored.state,
    )
    cursor.execute(
        f"INSERT INTO {event_chain.TABLE} (position, originator_id, originator_version, link)"
        " VALUES (?, ?, ?, ?)",
        (position, str(aggregate), stored.originator_version, link),
    )


def _seal(cursor: Cursor, dialect: str, sealer: Sealer, tail: Tail) -> Seal:
    """The acknowledgment's seal: the events standing from the trusted head on, as
    found, the new one last; after the seal found at the head."""
    first, last = tail.sealed_from, tail.position
    counted = Counted(event_lines(cursor, dialect, first, last))
    events = seals.events_digest(counted)
    previous = tail.head.digest if tail.head is not None else seals.GENESIS
    return sealer.acknowledgment(first, last, counted.count, events, previous)


def _move_on(cursor: Cursor, schema: str, position: int, store: Store) -> None:
    """As save_sealed does: the sequence past the position given, for any writer that
    draws from it; and a word to whoever follows the log (infra/store/follower.py)."""
    table = f"{schema}.{POSTGRES_EVENTS_TABLE}"
    cursor.execute(
        "SELECT setval(pg_get_serial_sequence(?, 'notification_id'), ?)", (table, position)
    )
    channel = getattr(store.app.recorder, "channel_name", None)
    if channel:
        cursor.execute("SELECT pg_notify(?, '')", (channel,))


def found_lines(found: dict[str, Any]) -> list[str]:
    """What an acknowledgment found, in sentences (its details, or verify's record)."""
    lines = []
    if unsealed := found.get("unsealed"):
        lines.append(
            f"the events at positions {unsealed['first']}..{unsealed['last']} "
            f"({unsealed['count']}) are in no seal of the service's key"
        )
    head = found.get("head")
    if head and not head.get("signed"):
        lines.append(
            f"the seal at the head, of positions {head['first']}..{head['last']} (digest "
            f"{head['digest']}), is not signed by the service's key (seal rows after the "
            f"last it signed: {found.get('forged_seals')})"
        )
    if removed := found.get("removed"):
        lines.append(
            f"positions {removed['first']}..{removed['last']} lie past the last event (at "
            f"{found.get('log_top')}), where the event chain ({removed['count']} links) or "
            "the seals still reach: events were removed from the end"
        )
    if cut := found.get("cut_seal"):
        lines.append(
            f"the cut fell inside the save of positions {cut['first']}..{cut['last']}: its "
            f"{cut['remaining']} events left are held to their digest from now on"
        )
    return lines


def next_steps(details: dict[str, Any]) -> list[str]:
    """What the operator does next (docs/operations.md, "The log was changed: what to do")."""
    steps = [
        "what the events found did stands, as they are (a forged deposit is money in a "
        "wallet): correct it with compensating commands, as any mistake; run `casino audit "
        "verify` to see the acknowledgment named"
    ]
    if details.get("removed"):
        steps.insert(
            0,
            "events were removed: the read models and every server running since still hold "
            "what they did; run `casino projections rebuild`, then restart every server",
        )
    return steps
