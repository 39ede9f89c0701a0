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

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from infra.store import seal as seals
from infra.store.seal import Seal, parse_public_key, public_key_text


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
        # A server still on the key the log was handed over from: the next key's
        # seals are the service's too (several servers restart one after another).
        keys += [parse_public_key(to) for start, to in self.rotations if start == own]
        return tuple(keys)

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
