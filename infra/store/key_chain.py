"""The chain of seal keys as the service holds it (rules.md 5, "Keys";
domain/seal_keys.py records each rotation in the log).

The service signs with one private key, CASINO_SEAL_KEY. It trusts, as the head of
the log it saves on, a seal signed by that key, or, right after a rotation handed
the log over to it, by the key it was handed over from (the log's last seals are
still that key's until the new key signs its first); and, when it checks what it
acts on (a receipt, a wallet before money leaves), a seal signed by any key of the
chain. A service configured with a key outside the chain of a log that has seals
refuses to start: a configuration fault (the wrong key deployed), not tampering.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.seal_keys import seal_keys_uuid
from infra.store import seal as seals
from infra.store.seal import Seal, parse_public_key, public_key_text
from infra.store.sealed_reads import BEFORE_SEALING, SealedReads
from projections.base import Database


def fingerprint(key: Ed25519PublicKey) -> str:
    """A short name for a public key: SHA-256 of its raw bytes, the first 16 hex."""
    raw = base64.b64decode(public_key_text(key))
    return "sha256:" + hashlib.sha256(raw).hexdigest()[:16]


@dataclass(frozen=True)
class KeyChain:
    own: Ed25519PublicKey
    rotations: tuple[tuple[str, str], ...] = ()  # (from, to) public keys, oldest first

    @property
    def head_keys(self) -> tuple[Ed25519PublicKey, ...]:
        """The keys whose seal the service saves on: its own, and the one the log was
        last handed over from to it (until its own first seal)."""
        own = public_key_text(self.own)
        keys = [self.own]
        if self.rotations and self.rotations[-1][1] == own:
            keys.append(parse_public_key(self.rotations[-1][0]))
        return tuple(keys)

    @property
    def successors(self) -> tuple[Ed25519PublicKey, ...]:
        """The keys a rotation handed the log over to from the service's own: once one
        of them has sealed, the service's key is retired."""
        own = public_key_text(self.own)
        return tuple(parse_public_key(to) for start, to in self.rotations if start == own)

    @property
    def all_keys(self) -> tuple[Ed25519PublicKey, ...]:
        """Every key of the chain: the service's own and every rotation's two."""
        texts = {public_key_text(self.own)}
        for start, to in self.rotations:
            texts |= {start, to}
        return tuple(parse_public_key(text) for text in sorted(texts))

    def in_chain(self, first_seal: Seal | None) -> bool:
        """Whether the service's key belongs to the chain of a log whose first seal is
        `first_seal`: it signed it, or a rotation handed the log over to it."""
        if first_seal is None:
            return True  # a log with no seal yet: the service's key starts the chain
        own = public_key_text(self.own)
        return seals.signed(self.own, first_seal) or any(to == own for _, to in self.rotations)


def signed_by_any(keys: Iterable[Ed25519PublicKey], seal: Seal) -> bool:
    return any(seals.signed(key, seal) for key in keys)


def outside_message(key: Ed25519PublicKey, rotations: Sequence[tuple[str, str]]) -> str:
    return (
        f"CASINO_SEAL_KEY: the key {fingerprint(key)} is outside the chain of keys of this "
        f"log's seals: it signed none of them and no rotation ({len(rotations)} recorded) "
        "handed the log over to it. Configure the key that seals this log (or rotate to "
        "this one with `casino keys rotate` run with the current key)"
    )


class SealKeyOutsideChain(Exception):
    """The configured seal key is outside the chain of the log's seals: the message
    names its fingerprint (a configuration fault, not tampering)."""


def load_chain(app: Any, reads: SealedReads, database: Database) -> KeyChain:
    """The chain as the log holds it, for the service's key (`reads.sealer`): each
    rotation counts only when its event is in a seal signed by the key it hands the
    log over from, which covers exactly the events standing there; the first that
    is not ends the chain (an insider cannot hand the log to a key of theirs).
    Raises SealKeyOutsideChain when the service's key belongs to none of it."""
    sealer = reads.sealer
    kept: list[tuple[str, str]] = []
    for version, (start, to) in enumerate(app.seal_key_rotations(), start=2):
        seal = reads.seal_covering(seal_keys_uuid(), version)
        if seal is None or seal is BEFORE_SEALING:
            break
        if not (seals.signed(parse_public_key(start), seal) and reads.covers(seal)):
            break
        kept.append((start, to))
    chain = KeyChain(sealer.public_key, tuple(kept))
    if not chain.in_chain(_first_seal(database)):
        raise SealKeyOutsideChain(outside_message(sealer.public_key, kept))
    return chain


def _first_seal(database: Database) -> Seal | None:
    with database.read() as cursor:
        cursor.execute(f"SELECT {seals.COLUMNS} FROM {seals.TABLE} ORDER BY last_position LIMIT 1")
        row = cursor.fetchone()
    if row is None:
        return None
    try:
        return seals.seal_of(row)
    except (TypeError, ValueError, OverflowError):
        return None


def wire(app: Any, reads: SealedReads, database: Database) -> None:
    """Give the sealer the chain's keys now (SealKeyOutsideChain if its own key is
    outside it), and a way to read them again after a rotation."""
    sealer = reads.sealer
    _give(sealer, load_chain(app, reads, database))

    def refresh() -> None:
        try:
            found = load_chain(app, reads, database)
        except SealKeyOutsideChain:
            return  # a rotation to us gone from the log: the head it sealed is refused
        _give(sealer, found)

    sealer.refresh = refresh


def _give(sealer: Any, chain: KeyChain) -> None:
    sealer.head_keys, sealer.chain_keys = chain.head_keys, chain.all_keys
    sealer.successors = chain.successors
