"""The chain of seal keys (rules.md 5, "Keys"): each rotation hands the log over
from the key that signs now to the next, recorded in the log itself.

The service seals every save with its private key; an auditor pins the public key
the log began with. Keys rotate without a gap: `casino keys rotate` records, in a
save sealed by the current key, the current public key and the next one. From
that save on, a seal may be signed by either, until the first seal the next key
signs; after it, only by the next. Verify follows the chain from the pinned key
(infra/audit/seal_check.py); the service refuses to start with a key outside it
(infra/store/key_chain.py). Keys are held here as text (base64 of their 32 raw
bytes): the domain reads no key.
"""

from __future__ import annotations

import datetime
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.errors import InvalidKeyRotation
from domain.ids import NAMESPACE
from domain.significant import stamp

PUBLIC_KEY_TEXT_LENGTH = 44  # base64 of 32 bytes
ROTATIONS_MAX = 10_000  # one a day for 27 years


class SealKeys(FastCopy, Aggregate):
    TOPIC = "casino:SealKeys"

    class Created(Aggregate.Created):
        TOPIC = "casino:SealKeys.Created"

    @staticmethod
    def create_id() -> UUID:
        return seal_keys_uuid()

    @event(Created)
    def __init__(self) -> None:
        self.rotations: list[tuple[str, str]] = []  # (from, to), oldest first

    def rotate(self, from_key: str, to_key: str, now: datetime.datetime) -> None:
        """Hand the log over from `from_key` (the key that signs now) to `to_key`."""
        for key in (from_key, to_key):
            if len(key) != PUBLIC_KEY_TEXT_LENGTH:
                raise InvalidKeyRotation("a public key is base64 of 32 bytes: 44 characters")
        if from_key == to_key:
            raise InvalidKeyRotation("the next key is the key that signs now")
        if self.rotations and self.rotations[-1][1] != from_key:
            raise InvalidKeyRotation(
                "the key that signs now is not the one the last rotation handed over to"
            )
        if len(self.rotations) >= ROTATIONS_MAX:
            raise InvalidKeyRotation(f"at most {ROTATIONS_MAX} rotations")
        self._rotated(from_key, to_key, stamp(now))

    @event("Rotated", topic="casino:SealKeys.Rotated")
    def _rotated(self, from_public_key: str, to_public_key: str, at: str) -> None:
        self.rotations.append((from_public_key, to_public_key))

    def handed_to(self) -> str | None:
        """The key the last rotation handed over to, if any."""
        return self.rotations[-1][1] if self.rotations else None


def seal_keys_uuid() -> UUID:
    return uuid5(NAMESPACE, "seal-keys")
