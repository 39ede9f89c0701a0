"""Nothing besides events moves money (rules.md 5): the snapshots and the wallets'
read models, checked against a replay of the events (`casino audit verify`).

A snapshot is only a shortcut to loading an aggregate. Each aggregate's latest one
must equal a replay of its events up to its version, and be signed by the service's
key (`--public-key`); the service ignores one that is not (infra/store/recorders.py:
SealedSnapshots), but verify names it. Every wallet is replayed from its events and
its balance, holds and each ledger line's running balance compared with the read
models; none may ever be negative.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any
from uuid import UUID

from eventsourcing.application import Repository
from eventsourcing.persistence import StoredEvent

from domain.bonus import bonus_account
from infra.audit.chain_check import Problems
from infra.audit.decoding import EventDecoder
from infra.store import seal as seals
from infra.store.database import PostgresDatabase
from infra.store.schema import POSTGRES_SNAPSHOTS_TABLE, SQLITE_SNAPSHOTS_TABLE
from infra.store.store import Store

BATCH = 1000


def snapshot_problems(store: Store, public_key: seals.Keys | None) -> tuple[int, list[str]]:
    """Check each aggregate's latest snapshot; return how many, and what is wrong."""
    problems = Problems("the snapshots")
    replay = Repository(event_store=store.app.events)  # no snapshots: events only
    checked = 0
    for stored in _latest_snapshots(store):
        checked += 1
        problem = _snapshot_problem(store, replay, stored, public_key)
        if problem:
            problems.add(
                f"the snapshot of {stored.originator_id} at version "
                f"{stored.originator_version} {problem}; the service ignores it"
            )
    return checked, problems.all()


def _latest_snapshots(store: Store) -> Iterator[StoredEvent]:
    table = (
        POSTGRES_SNAPSHOTS_TABLE
        if isinstance(store.database, PostgresDatabase)
        else SQLITE_SNAPSHOTS_TABLE
    )
    after = ""
    while True:
        with store.database.read() as cursor:
            cursor.execute(
                f"SELECT s.originator_id, s.originator_version, s.topic, s.state FROM {table} s"
                f" JOIN (SELECT originator_id, MAX(originator_version) AS version FROM {table}"
                f" GROUP BY originator_id) latest ON latest.originator_id = s.originator_id"
                " AND latest.version = s.originator_version"
                " WHERE CAST(s.originator_id AS TEXT) > ? ORDER BY CAST(s.originator_id AS TEXT)"
                " LIMIT ?",
                (after, BATCH),
            )
            rows = cursor.fetchall()
        if not rows:
            return
        for row in rows:
            yield StoredEvent(UUID(str(row[0])), int(row[1]), str(row[2]), bytes(row[3]))
        after = str(rows[-1][0])


def _snapshot_problem(
    store: Store, replay: Repository[Any], stored: StoredEvent, public_key: seals.Keys | None
) -> str:
    state, signature = seals.split_snapshot(stored)
    plain = StoredEvent(stored.originator_id, stored.originator_version, stored.topic, state)
    try:
        snapshot: Any = store.app.mapper.to_domain_event(plain)
        aggregate: Any = replay.get(stored.originator_id, version=stored.originator_version)
    except Exception as error:
        return f"cannot be compared with its events ({error!r})"
    # Both through the mapper, so both hold the values as read back from the store.
    again: Any = store.app.mapper.to_domain_event(
        store.app.mapper.to_stored_event(type(snapshot).take(aggregate))
    )
    differing = sorted(
        key for key in snapshot.state if snapshot.state[key] != again.state.get(key, _MISSING)
    )
    if aggregate.version != stored.originator_version or differing:
        shown = ", ".join(_difference(key, snapshot.state, again.state) for key in differing)
        return f"does not equal a replay of its events ({shown or 'versions'}): it was forged"
    if public_key is None:
        return ""
    message = seals.snapshot_message(
        plain.originator_id, plain.originator_version, plain.topic, state
    )
    if signature is None or not seals.signs(public_key, signature.hex(), message):
        return "is not signed by the service's key: it was written outside the service"
    return ""


_MISSING = object()
MONEY_KEYS = frozenset(("balance_cents", "holds", "points", "bonus_cents", "bonus_rounds"))


def _difference(key: str, snapshot: Mapping[str, Any], replayed: Mapping[str, Any]) -> str:
    if key in MONEY_KEYS:
        return f"{key} {snapshot[key]!r}, replayed {replayed.get(key)!r}"
    return key


def wallet_problems(
    store: Store,
    wallets: Mapping[Any, tuple[str, str]],
    last_versions: Mapping[Any, int],
    start: Mapping[Any, Any] | None = None,
    compare: bool = True,
) -> tuple[list[str], dict[Any, Any]]:
    """Every wallet replayed from its events up to its version in `last_versions`,
    event by event, never below zero, and (with `compare`) against the read models:
    its balance and holds, each ledger line's running balance; and the wallets
    replayed. A wallet in `start` (as an earlier verify replayed it) is replayed on
    from there, and only its later ledger lines are compared."""
    problems = Problems("the wallets")
    decode = EventDecoder(store.app.mapper).decode
    replayed = {}
    for wallet_id, (player_id, mode) in wallets.items():
        name = f"{player_id}'s {mode} wallet"
        begun = (start or {}).get(wallet_id)
        try:
            last = last_versions.get(wallet_id, 0)
            wallet, balances_after = _replayed(store, wallet_id, decode, begun, last)
        except Exception as error:  # A tampered wallet may not replay: named above too.
            problems.add(f"{name} does not replay from its events: {error!r}")
            continue
        replayed[wallet_id] = wallet
        if min(balances_after.values(), default=0) < 0 or wallet.available_cents < 0:
            problems.add(f"{name} replays to a negative balance or available amount")
        if not compare:
            continue  # The read models stand elsewhere: the rebuild compare covers them.
        after = begun.version if begun is not None else 0
        with store.database.read() as cursor:
            projected = _projected(cursor, player_id, mode)
            lines = _ledger_lines(cursor, player_id, mode, after)
            bonus = _account(cursor, mode, bonus_account(player_id))
        if bonus != wallet.bonus_cents:  # bonus money replayed like cash (rules.md 9)
            problems.add(
                f"{name} replays to a bonus of {wallet.bonus_cents} cents, the trial balance "
                f"says {bonus}"
            )
        if projected != (wallet.balance_cents, wallet.held_cents):
            problems.add(
                f"{name} replays to balance {wallet.balance_cents} and holds "
                f"{wallet.held_cents} cents, the read model says {projected[0]} and "
                f"{projected[1]}"
            )
        for entry, balance in lines:
            if balances_after.get(entry) != balance:
                problems.add(
                    f"{name}: ledger line {entry} says balance after {balance} cents, a replay "
                    f"of its events {balances_after.get(entry)}"
                )
                break  # The first is enough: the rest follow from it.
    return problems.all(), replayed


def _replayed(
    store: Store, wallet_id: Any, decode: Callable[..., Any], wallet: Any, last: int
) -> tuple[Any, dict[int, int]]:
    """The wallet as its events up to version `last` make it (from `wallet`, or from
    its first event), and its balance after each version replayed: its events as
    the store's event store reads them (`select_events`), decoded faster
    (infra/audit/decoding.py; the mapper's decoding was half of this check)."""
    balances_after: dict[int, int] = {}
    after = wallet.version if wallet is not None else None
    for stored in store.app.recorder.select_events(wallet_id, gt=after, lte=last):
        event = decode(0, stored.originator_id, stored.originator_version, stored.topic,
                       stored.state)  # fmt: skip
        wallet = event.mutate(wallet)
        balances_after[wallet.version] = wallet.balance_cents
    return wallet, balances_after


def _projected(cursor: Any, player_id: str, mode: str) -> tuple[int, int]:
    cursor.execute(
        "SELECT balance_cents, held_cents FROM wallet_balances WHERE player_id = ? AND mode = ?",
        (player_id, mode),
    )
    row = cursor.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _account(cursor: Any, mode: str, account: str) -> int:
    cursor.execute(
        "SELECT balance_cents FROM account_balances WHERE mode = ? AND account = ?",
        (mode, account),
    )
    row = cursor.fetchone()
    return int(row[0]) if row else 0


def _ledger_lines(cursor: Any, player_id: str, mode: str, after: int) -> list[tuple[int, int]]:
    cursor.execute(
        "SELECT entry_id, balance_after_cents FROM ledger_entries"
        " WHERE player_id = ? AND mode = ? AND entry_id > ? ORDER BY entry_id",
        (player_id, mode, after),
    )
    return [(int(row[0]), int(row[1])) for row in cursor.fetchall()]
