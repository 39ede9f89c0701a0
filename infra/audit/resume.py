"""The state an incremental `casino audit verify --since STATE` resumes from.

A verify that found everything holding (the whole store, not one round) can write
what it carries across the log (`--state-out FILE`, the auditor's own file): the
last position it checked and the chain's link there, the last seal's digest, the
keys the seals had come to, every aggregate's next version, the wallets (their
owners, and each wallet as its events replay to it), the books, the banks, and the
positions of the events of the rounds still open. The next verify checks that this
anchor still holds - the event at the position still hashes to the same link on the
chain's link before it, the last seal still verifies and still covers the events it
sealed - then reads only what was added since (docs/operations.md, "Incremental verify").

The file is JSON, versioned (`format`, `version`); one malformed, of another
version, or of another log (the chain's first link differs) is refused
(`StateRefused`), never half-used.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import StoredEvent
from pydantic import BaseModel, ConfigDict, ValidationError

from infra.audit.pages import events_at
from infra.audit.seal_check import KeyFollower
from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.chain import ChainRow
from infra.store.seal import Seal
from infra.store.store import Store

FORMAT = "casino-verify-state"
VERSION = 1
# What an incremental verify does not see (RULES.md 5): its output says so.
UNSEEN = (
    "an event at or before the anchor altered with the chain after it left as it was "
    "(only a full verify recomputes the whole chain)",
    "the read models compared with a rebuild from the events (a full verify rebuilds "
    "them; this one compares the books and the wallets with events since)",
    "the snapshots (a full verify replays each against its events)",
)


class StateRefused(Exception):
    """A state file an incremental verify cannot resume from, and why."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SealMark(_Strict):
    first_position: int
    last_position: int
    digest: str


class KeysMark(_Strict):
    current: str
    next: str | None
    seen: list[str]


class WalletMark(_Strict):
    player_id: str
    mode: str
    version: int  # the wallet as replayed to this version: a snapshot of it
    topic: str
    state: str


class VerifyState(_Strict):
    format: str
    version: int
    first_link: str  # the chain's link at its first position: which log this is
    position: int  # the last position checked
    link: str  # the chain's link there
    seal: SealMark | None  # the last seal (None: nothing sealed up to `position`)
    keys: KeysMark | None  # the keys the seals had come to (None: signatures unchecked)
    versions: dict[str, int]  # aggregate id -> its next version
    wallets: dict[str, WalletMark]  # by wallet id
    books: dict[str, dict[str, int]]  # mode -> account -> cents
    bank_owners: dict[str, str]  # wallet id -> player id (banks.py's view of owners)
    banks: dict[str, tuple[str | None, int]]  # table id -> (banker, bank cents)
    held: list[tuple[str, str, int]]  # (table id, player id, cents held for its bank)
    open_positions: list[int]  # the events of the rounds still open, and their entries


def read_state(text: str) -> VerifyState:
    """The state a file holds; StateRefused if it is not one this verify reads."""
    try:
        found = json.loads(text)
    except ValueError as error:
        raise StateRefused(f"not JSON: {error}") from None
    if not isinstance(found, dict) or found.get("format") != FORMAT:
        raise StateRefused(f'not a verify state (no "format": "{FORMAT}")')
    if found.get("version") != VERSION:
        raise StateRefused(
            f"a verify state of version {found.get('version')!r}; this verify reads {VERSION}"
        )
    try:
        return VerifyState.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise StateRefused(f"malformed at {where or 'the top'}: {first['msg']}") from None


def state_text(state: VerifyState) -> str:
    return state.model_dump_json(indent=1) + "\n"


def wallet_mark(store: Store, owner: tuple[str, str], wallet: Any) -> WalletMark:
    """A wallet as the state keeps it: a snapshot, as the library's mapper writes one."""
    # Stamped with the wallet's last change, not the time of writing: the same wallet
    # makes the same state, whichever verify writes it.
    snapshot = dataclasses.replace(Snapshot.take(wallet), timestamp=wallet.modified_on)
    stored = store.app.mapper.to_stored_event(snapshot)
    return WalletMark(
        player_id=owner[0],
        mode=owner[1],
        version=stored.originator_version,
        topic=stored.topic,
        state=stored.state.decode(),
    )


def wallets_of(store: Store, state: VerifyState) -> dict[Any, Any]:
    """The state's wallets, each as its snapshot makes it (by wallet id, a UUID)."""
    made = {}
    for wallet_id, mark in state.wallets.items():
        stored = StoredEvent(UUID(wallet_id), mark.version, mark.topic, mark.state.encode())
        try:
            snapshot: Any = store.app.mapper.to_domain_event(stored)
            made[UUID(wallet_id)] = snapshot.mutate(None)
        except Exception as error:
            raise StateRefused(f"the wallet {wallet_id} cannot be read: {error!r}") from None
    return made


def keys_of(mark: KeysMark | None, pinned: Ed25519PublicKey | None) -> KeyFollower | None:
    """The keys the seals had come to, as the state holds them; only with a pinned key
    (the state's keys are followed from it, never trusted instead of it)."""
    if pinned is None:
        return None
    follower = KeyFollower(pinned)
    if mark is None:
        return follower
    try:
        follower.current = seals.parse_public_key(mark.current)
        follower.next = seals.parse_public_key(mark.next) if mark.next else None
        follower.seen = [seals.parse_public_key(text) for text in mark.seen]
    except seals.SealKeyError as error:
        raise StateRefused(f"its keys cannot be read: {error}") from None
    if seals.public_key_text(pinned) not in mark.seen:
        raise StateRefused("its keys do not start from the pinned key: written with another")
    return follower


def keys_mark(keys: KeyFollower | None) -> KeysMark | None:
    if keys is None:
        return None
    return KeysMark(
        current=seals.public_key_text(keys.current),
        next=seals.public_key_text(keys.next) if keys.next is not None else None,
        seen=[seals.public_key_text(key) for key in keys.seen],
    )


def first_link(store: Store) -> str:
    with store.database.read() as cursor:
        rows = event_chain.stored_links(cursor, 0, 1)
    return rows[0].link if rows else event_chain.GENESIS


def anchor(store: Store, state: VerifyState) -> tuple[ChainRow | None, list[str]]:
    """The chain's row at the state's position, and what no longer holds there: the
    event must still hash to the link the state holds, on the stored link before it.
    StateRefused if the log is another one (its first link is not the state's)."""
    if first_link(store) != state.first_link:
        raise StateRefused(
            "it is not a state of this log: the chain's first link differs (another "
            "store or tenant, or a log rewritten from its start: a full verify says which)"
        )
    position = state.position
    with store.database.read() as cursor:
        cursor.execute(
            f"SELECT position, originator_id, originator_version, link FROM {event_chain.TABLE}"
            " WHERE position <= ? ORDER BY position DESC LIMIT 2",
            (position,),
        )
        rows = [ChainRow(int(r[0]), str(r[1]), int(r[2]), str(r[3])) for r in cursor.fetchall()]
    found = events_at(store, [position])
    row = rows[0] if rows and rows[0].position == position else None
    before = rows[-1].link if len(rows) == 2 and row is not None else event_chain.GENESIS
    if not found or row is None:
        return None, [
            f"the anchor does not hold: no event (or no link) at position {position}, where "
            "the last verify stopped: events up to it were removed"
        ]
    event = found[0]
    link = event_chain.link_of(
        before, event.aggregate, event.originator_version, event.topic, event.state
    )
    if row.link != state.link or link != state.link:
        return None, [
            f"the anchor does not hold: the chain's link at position {position} is not the "
            "one the last verify noted there: events up to it were changed, removed or "
            "inserted (a full verify names them)"
        ]
    return row, []


def last_seal(store: Store, state: VerifyState) -> tuple[Seal | None, list[str]]:
    """The state's last seal as the store holds it, and what no longer holds: it must
    still hash to the digest noted, and still cover the events it sealed."""
    with store.database.read() as cursor:
        if state.seal is None:
            cursor.execute(
                f"SELECT COUNT(*) FROM {seals.TABLE} WHERE last_position <= ?", (state.position,)
            )
            count = cursor.fetchone()
            if count and int(count[0]):
                return None, [
                    f"the anchor does not hold: seals now stand at or before position "
                    f"{state.position}, where the last verify found none"
                ]
            return None, []
        cursor.execute(
            f"SELECT {seals.COLUMNS} FROM {seals.TABLE} WHERE last_position = ?",
            (state.seal.last_position,),
        )
        row = cursor.fetchone()
    seal = seals.read_seal(row) if row else None
    where = f"the seal of positions {state.seal.first_position}..{state.seal.last_position}"
    if seal is None or seal.digest != state.seal.digest or seals.digest_of(seal) != seal.digest:
        return None, [f"the anchor does not hold: {where} is gone or changed"]
    events = events_at(store, range(seal.first_position, seal.last_position + 1))
    lines = [
        seals.event_line(e.id, e.originator_id, e.originator_version, e.topic, e.state)
        for e in events
    ]
    if len(events) != seal.event_count or seals.events_digest(lines) != seal.events_digest:
        return None, [
            f"the anchor does not hold: the events of {where} are not those sealed: an "
            "event there was altered, inserted, removed or moved"
        ]
    return seal, []


def seal_mark(seal: Seal | None) -> SealMark | None:
    if seal is None:
        return None
    return SealMark(
        first_position=seal.first_position, last_position=seal.last_position, digest=seal.digest
    )


def tuples(pairs: Mapping[tuple[str, str], int]) -> list[tuple[str, str, int]]:
    return [(table, player, cents) for (table, player), cents in sorted(pairs.items())]


def read_state_file(path: Path) -> VerifyState:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise StateRefused(f"cannot be read: {error}") from None
    return read_state(text)


def write_state_file(path: Path, state: VerifyState) -> None:
    """The state written whole or not at all: a crash leaves the last one as it was."""
    written = path.with_name(path.name + ".writing")
    written.write_text(state_text(state), encoding="utf-8")
    written.replace(path)
