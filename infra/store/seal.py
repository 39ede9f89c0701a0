"""Seals: a signature over every save, with a key the database never holds (rules.md 5).

Each database transaction that inserts events also inserts one row in `event_seals`:

    events  = SHA-256 over, for each event in position order,
              "position|aggregate id|version|topic|SHA-256 hex of its stored bytes\\n"
    digest  = SHA-256 hex of "casino-seal/1|first|last|count|events|previous"
              or, when the transaction also wrote command receipts,
              "casino-seal/2|first|last|count|events|receipts|previous"
    signature = Ed25519(private key, digest)

where first..last are the positions the save took, count its number of events and
`previous` the digest of the seal before it (GENESIS for the first), and `receipts`
the digest of the transaction's receipts (infra/store/receipts.py). The chain of
digests orders the seals; the signature makes a seal impossible to forge without
the private key, which lives in CASINO_SEAL_KEY, never in the store. An auditor
needs only the public key (`casino audit verify --public-key`).

An acknowledgment's seal (`casino audit acknowledge`, infra/audit/acknowledge.py)
has a digest of its own form, so that no one without the key can pass an ordinary
seal off as one, or one as ordinary:

    digest  = SHA-256 hex of "casino-ack/1|first|last|count|events|previous"

It covers the events found after the last seal the key signed, as they stand, and
the `log_acknowledged` significant event at `last`, whose details hold the
operator's reason and what was found (so `events` binds the reason too); `previous`
is the digest of the seal found at the head, forged or not. It names no receipts.

Snapshots are signed one by one ("casino-snapshot/1|aggregate id|version|topic|
SHA-256 hex of the state"); the signature is appended to the stored state
(`SealedSnapshots`), so it is written in the snapshot's own transaction, and a
snapshot whose signature fails is ignored: the aggregate loads from its events.

Keys are written as base64 of their 32 raw bytes; a PEM (PKCS#8 private, or
SubjectPublicKeyInfo public) is accepted too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from eventsourcing.persistence import PersistenceError, StoredEvent

TABLE = "event_seals"
GENESIS = "0" * 64
SIGNATURE_BYTES = 64
SNAPSHOT_MARK = b"\x00casino-snapshot-seal/1:"
COLUMNS = (
    "last_position, first_position, event_count, events_digest, previous, digest, signature,"
    " receipts_digest"
)


def insert_sql(mark: str = "?") -> str:
    """The INSERT of one seal row, `mark` the store's parameter placeholder."""
    marks = ", ".join([mark] * len(COLUMNS.split(",")))
    return f"INSERT INTO {TABLE} ({COLUMNS}) VALUES ({marks})"


class LogTampered(PersistenceError):
    """The log was changed behind the service's back (a tail cut, events or a seal
    inserted): the service saves nothing on top of it until someone has looked."""


UNSEALED_SAVE_REFUSED = (
    "an unsealed save on a sealed log: refused (every writer of a sealed log seals)"
)


class SealKeyRetired(PersistenceError):
    """This server's seal key was handed over to the next by a rotation, and the next
    has sealed since: it must not sign any more (restart it with the next key). A
    configuration to finish, not tampering (infra/store/key_chain.py)."""


class UnsealedWrite(AssertionError):
    """Our own code tried to save events no seal covers on a log that is sealed, or
    to save anything through a store opened only to read. Every process of the
    service that writes seals (rules.md 5): such a save would leave the log looking
    tampered with, so it is refused before anything is written."""


class SealKeyError(ValueError):
    """A key that cannot be read; the message says what was expected."""


@dataclass(frozen=True)
class Seal:
    first_position: int
    last_position: int
    event_count: int
    events_digest: str
    previous: str
    digest: str
    signature: str  # hex
    receipts_digest: str | None = None  # None: the transaction wrote no receipt

    def row(self) -> tuple[Any, ...]:
        return (
            self.last_position,
            self.first_position,
            self.event_count,
            self.events_digest,
            self.previous,
            self.digest,
            self.signature,
            self.receipts_digest,
        )


def seal_of(row: Sequence[Any]) -> Seal:
    """A seal from a row of `event_seals`, columns in the order of COLUMNS."""
    last, first, count, events, previous, digest, signature, receipts = row
    return Seal(int(first), int(last), int(count), str(events), str(previous), str(digest),
                str(signature), None if receipts is None else str(receipts))  # fmt: skip


def read_seal(row: Sequence[Any]) -> Seal:
    """The seal a row holds; one whose values are not a seal's (SQLite stores any
    value in any column) is read as a seal that fails every check, its stored digest
    kept, so that it is named and a seal after it can still name it as `previous`."""
    try:
        return seal_of(row)
    except (TypeError, ValueError, OverflowError):
        position = int(row[0])  # SQLite's rowid: always an integer
        return Seal(position, position, 0, "", "", str(row[5]), "")


def event_line(position: int, originator_id: Any, version: int, topic: str, state: bytes) -> bytes:
    aggregate = str(originator_id if isinstance(originator_id, UUID) else UUID(str(originator_id)))
    state_hash = hashlib.sha256(state).hexdigest()
    return f"{position}|{aggregate}|{version}|{topic}|{state_hash}\n".encode()


def events_digest(lines: Iterable[bytes]) -> str:
    hasher = hashlib.sha256()
    for line in lines:
        hasher.update(line)
    return hasher.hexdigest()


def seal_digest(
    first: int, last: int, count: int, events: str, previous: str, receipts: str | None = None
) -> str:
    if receipts is None:  # as every seal was before receipts left the log
        body = f"casino-seal/1|{first}|{last}|{count}|{events}|{previous}"
    else:
        body = f"casino-seal/2|{first}|{last}|{count}|{events}|{receipts}|{previous}"
    return hashlib.sha256(body.encode()).hexdigest()


def acknowledgment_digest(first: int, last: int, count: int, events: str, previous: str) -> str:
    body = f"casino-ack/1|{first}|{last}|{count}|{events}|{previous}"
    return hashlib.sha256(body.encode()).hexdigest()


def digest_of(seal: Seal) -> str:
    """The digest `seal`'s own fields hash to (its stored `digest` must be this): an
    ordinary seal's, or an acknowledgment's when that is the form its digest has."""
    ordinary = seal_digest(
        seal.first_position,
        seal.last_position,
        seal.event_count,
        seal.events_digest,
        seal.previous,
        seal.receipts_digest,
    )
    if ordinary != seal.digest and acknowledges(seal):
        return seal.digest
    return ordinary


def acknowledges(seal: Seal) -> bool:
    """Whether `seal` is an acknowledgment's: its digest is of that form (whether it
    is signed is `signed`'s to say)."""
    if seal.receipts_digest is not None:
        return False
    fields = (seal.first_position, seal.last_position, seal.event_count, seal.events_digest)
    return seal.digest == acknowledgment_digest(*fields, seal.previous)


# One public key, or several: those of a chain of keys (infra/store/key_chain.py),
# any of which may have signed.
Keys = Ed25519PublicKey | tuple[Ed25519PublicKey, ...]


def signed(keys: Keys, seal: Seal) -> bool:
    """Whether `seal` hashes to its digest and the digest is signed by one of `keys`."""
    digest = digest_of(seal)
    return digest == seal.digest and signs(keys, seal.signature, digest.encode())


def signs(keys: Keys, signature_hex: str, message: bytes) -> bool:
    try:
        signature = bytes.fromhex(signature_hex)
    except ValueError:
        return False
    for key in keys if isinstance(keys, tuple) else (keys,):
        try:
            key.verify(signature, message)
        except (InvalidSignature, ValueError):
            continue
        return True
    return False


def snapshot_message(originator_id: Any, version: int, topic: str, state: bytes) -> bytes:
    aggregate = str(originator_id if isinstance(originator_id, UUID) else UUID(str(originator_id)))
    body = f"casino-snapshot/1|{aggregate}|{version}|{topic}|{hashlib.sha256(state).hexdigest()}"
    return body.encode()


def split_snapshot(stored: StoredEvent) -> tuple[bytes, bytes | None]:
    """A stored snapshot's own state and its signature (None when it carries none)."""
    state = bytes(stored.state)
    cut = len(state) - SIGNATURE_BYTES - len(SNAPSHOT_MARK)
    if cut < 0 or state[cut : cut + len(SNAPSHOT_MARK)] != SNAPSHOT_MARK:
        return state, None
    return state[:cut], state[cut + len(SNAPSHOT_MARK) :]


def snapshot_signed(public_key: Keys, stored: StoredEvent) -> StoredEvent | None:
    """The snapshot as the mapper reads it, or None when its signature fails."""
    state, signature = split_snapshot(stored)
    if signature is None:
        return None
    message = snapshot_message(stored.originator_id, stored.originator_version, stored.topic, state)
    if not signs(public_key, signature.hex(), message):
        return None
    return StoredEvent(stored.originator_id, stored.originator_version, stored.topic, state)


class Sealer:
    """Signs seals and snapshots with the private key."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self.private_key = private_key
        self.public_key = private_key.public_key()
        # The keys whose seal the service saves on, and those whose seals it trusts
        # anywhere in the log: its own, and after a rotation the chain's (set by the
        # store from the log: infra/store/key_chain.py). `refresh` reads the chain
        # again (a rotation recorded by another process).
        self.head_keys: tuple[Ed25519PublicKey, ...] = (self.public_key,)
        self.chain_keys: tuple[Ed25519PublicKey, ...] = (self.public_key,)
        # The keys a rotation handed the log over to from this one: a head they
        # signed means this key is retired.
        self.successors: tuple[Ed25519PublicKey, ...] = ()
        self.refresh: Callable[[], None] | None = None

    def seal(
        self,
        positions: Sequence[int],
        stored: Sequence[StoredEvent],
        previous: str,
        receipts: str | None = None,
    ) -> Seal:
        """The seal of a transaction's events, and `receipts`, the digest of its
        receipts (infra/store/receipts.py: receipts_digest) when it wrote any."""
        lines = (
            event_line(p, s.originator_id, s.originator_version, s.topic, s.state)
            for p, s in zip(positions, stored, strict=True)
        )
        first, last, count = positions[0], positions[-1], len(positions)
        events = events_digest(lines)
        digest = seal_digest(first, last, count, events, previous, receipts)
        signature = self.private_key.sign(digest.encode()).hex()
        return Seal(first, last, count, events, previous, digest, signature, receipts)

    def acknowledgment(self, first: int, last: int, count: int, events: str, previous: str) -> Seal:
        """The seal of an acknowledgment over first..last, where `count` events stand
        whose lines (`event_line`) hash to `events`."""
        digest = acknowledgment_digest(first, last, count, events, previous)
        signature = self.private_key.sign(digest.encode()).hex()
        return Seal(first, last, count, events, previous, digest, signature)

    def sign_snapshot(self, stored: StoredEvent) -> StoredEvent:
        state = bytes(stored.state)
        message = snapshot_message(
            stored.originator_id, stored.originator_version, stored.topic, state
        )
        signature = self.private_key.sign(message)
        return StoredEvent(stored.originator_id, stored.originator_version, stored.topic,
                           state + SNAPSHOT_MARK + signature)  # fmt: skip


def new_private_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def private_key_text(key: Ed25519PrivateKey) -> str:
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return base64.b64encode(raw).decode()


def public_key_text(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def parse_private_key(text: str) -> Ed25519PrivateKey:
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_private_key(text.encode(), password=None)
            if not isinstance(key, Ed25519PrivateKey):
                raise SealKeyError("the PEM holds no Ed25519 private key")
            return key
        return Ed25519PrivateKey.from_private_bytes(_raw_32(text))
    except (ValueError, TypeError) as error:
        raise SealKeyError(
            f"not an Ed25519 private key (base64 of 32 bytes, or PEM): {error}"
        ) from None


def parse_public_key(text: str) -> Ed25519PublicKey:
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(text.encode())
            if not isinstance(key, Ed25519PublicKey):
                raise SealKeyError("the PEM holds no Ed25519 public key")
            return key
        return Ed25519PublicKey.from_public_bytes(_raw_32(text))
    except (ValueError, TypeError) as error:
        raise SealKeyError(
            f"not an Ed25519 public key (base64 of 32 bytes, or PEM): {error}"
        ) from None


def _raw_32(text: str) -> bytes:
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error:
        raise ValueError("not base64") from None
    if len(raw) != 32:
        raise ValueError(f"{len(raw)} bytes, not 32")
    return raw
