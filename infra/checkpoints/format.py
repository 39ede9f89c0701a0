"""A checkpoint: the service's signed statement that its log was sealed up to here.

Each checkpoint names the latest seal (infra/store/seal.py) when it was made, the
checkpoint before it, and counts up without gaps:

    body      = "casino-checkpoint/1|counter|position|seal|previous|time"
    digest    = SHA-256 hex of the body (UTF-8)
    signature = Ed25519(the seal key, the digest's 64 ASCII hex characters), hex

- `counter`: 1 for a witness's first checkpoint, then 2, 3, ... without gaps;
- `position`: the last position of the seal noted (`event_seals.last_position`);
- `seal`: that seal's digest (`event_seals.digest`), 64 lowercase hex;
- `previous`: the digest of checkpoint `counter - 1`; GENESIS ("0" * 64) for 1;
- `time`: when the service made it, ISO 8601 in UTC, signed as the exact string
  written (for example `2026-12-07T02:26:09.537787+00:00`);
- integers in decimal without leading zeros.

A checkpoint is written as one JSON object (a line of the file witness, the payload
of a message on the stream), keys in this order:

    {"format": "casino-checkpoint/1", "counter": 7, "position": 1042,
     "seal": "<64 hex>", "previous": "<64 hex>", "time": "...",
     "digest": "<64 hex>", "signature": "<128 hex>"}

The key that signs is the service's seal key (CASINO_SEAL_KEY): a checkpoint is the
service's statement about its own log, and what makes it unremovable is not the key
but where it is kept (the witness operator's append-only stream). An auditor checks
it with the public key pinned for the seals (CASINO_WITNESS_PUBLIC_KEY, when set,
else the one given for the seals).

Witness files written before checkpoints were chained hold *legacy* lines: the seal
itself, `{"position", "digest" (the seal's), "time", "signature" (the seal's)}`,
with no counter and no chain. They are still read (`Legacy`); verify says how many
there were, and that one removed or reordered among them would not show.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from infra.store import seal as seals

FORMAT = "casino-checkpoint/1"
GENESIS = "0" * 64
RECORD_BYTES_MAX = 4096  # a checkpoint is about 400 bytes; anything longer is not one
TIME_CHARS_MAX = 64
COUNTER_MAX = 2**63 - 1  # what JetStream's own sequences can count to
HEX = re.compile(r"[0-9a-f]*")
DIGEST_CHARS = 64  # SHA-256, hex
SIGNATURE_CHARS = 128  # Ed25519, hex


class NotACheckpoint(ValueError):
    """A record that is neither a checkpoint nor a legacy one; the message says why."""


@dataclass(frozen=True)
class Checkpoint:
    counter: int
    position: int
    seal: str
    previous: str
    time: str
    digest: str
    signature: str

    def record(self) -> bytes:
        """The JSON the witness keeps (no newline)."""
        fields = {
            "format": FORMAT,
            "counter": self.counter,
            "position": self.position,
            "seal": self.seal,
            "previous": self.previous,
            "time": self.time,
            "digest": self.digest,
            "signature": self.signature,
        }
        return json.dumps(fields, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Legacy:
    """A line of a witness file from before the chain: a copy of a seal."""

    position: int
    seal: str
    time: str
    signature: str


def digest_of(counter: int, position: int, seal: str, previous: str, time: str) -> str:
    body = f"{FORMAT}|{counter}|{position}|{seal}|{previous}|{time}"
    return hashlib.sha256(body.encode()).hexdigest()


def following(
    head: Checkpoint | None,
    position: int,
    seal: str,
    now: datetime.datetime,
    key: Ed25519PrivateKey,
) -> Checkpoint:
    """The checkpoint after `head` (the first, without one) noting the seal `seal`
    ending at `position`, made at `now`."""
    assert now.tzinfo is not None, "a checkpoint's time is in UTC"
    counter = head.counter + 1 if head is not None else 1
    previous = head.digest if head is not None else GENESIS
    assert head is None or position > head.position, "a checkpoint notes a later seal"
    time = now.astimezone(datetime.UTC).isoformat(timespec="microseconds")
    digest = digest_of(counter, position, seal, previous, time)
    signature = key.sign(digest.encode()).hex()
    return Checkpoint(counter, position, seal, previous, time, digest, signature)


def hashes(checkpoint: Checkpoint) -> bool:
    """Whether the checkpoint's fields hash to its digest."""
    found = digest_of(
        checkpoint.counter,
        checkpoint.position,
        checkpoint.seal,
        checkpoint.previous,
        checkpoint.time,
    )
    return found == checkpoint.digest


def signed(key: seals.Keys, checkpoint: Checkpoint | Legacy) -> bool:
    """Whether `key` (or one of the keys of a chain) signed it (a legacy line: the
    seal it copies)."""
    if isinstance(checkpoint, Legacy):
        return seals.signs(key, checkpoint.signature, checkpoint.seal.encode())
    return hashes(checkpoint) and seals.signs(key, checkpoint.signature, checkpoint.digest.encode())


def parse(data: bytes | str) -> Checkpoint | Legacy:
    """The checkpoint a record holds; NotACheckpoint names what is wrong."""
    if len(data) > RECORD_BYTES_MAX:
        raise NotACheckpoint(f"{len(data)} bytes long: no checkpoint is")
    try:
        fields = json.loads(data)
    except ValueError:
        raise NotACheckpoint("not JSON") from None
    if not isinstance(fields, dict):
        raise NotACheckpoint("not a JSON object")
    if "format" not in fields:
        return _legacy(fields)
    if fields["format"] != FORMAT:
        raise NotACheckpoint(f"format {str(fields['format'])[:40]!r}, not {FORMAT}")
    return Checkpoint(
        counter=_whole(fields, "counter"),
        position=_whole(fields, "position"),
        seal=_hex(fields, "seal", DIGEST_CHARS),
        previous=_hex(fields, "previous", DIGEST_CHARS),
        time=_time(fields),
        digest=_hex(fields, "digest", DIGEST_CHARS),
        signature=_hex(fields, "signature", SIGNATURE_CHARS),
    )


def _legacy(fields: dict[str, Any]) -> Legacy:
    if not {"position", "digest", "signature"} <= fields.keys():
        raise NotACheckpoint("neither a checkpoint nor a legacy one (position, digest, signature)")
    return Legacy(
        position=_whole(fields, "position"),
        seal=_hex(fields, "digest", DIGEST_CHARS),
        time=str(fields.get("time", "?"))[:TIME_CHARS_MAX],
        signature=_hex(fields, "signature", SIGNATURE_CHARS),
    )


def _whole(fields: dict[str, Any], name: str) -> int:
    value = fields.get(name)
    if type(value) is not int or not 1 <= value <= COUNTER_MAX:
        raise NotACheckpoint(f"{name} is not a whole number from 1 to {COUNTER_MAX}")
    return value


def _hex(fields: dict[str, Any], name: str, chars: int) -> str:
    value = fields.get(name)
    if not isinstance(value, str) or len(value) != chars or not HEX.fullmatch(value):
        raise NotACheckpoint(f"{name} is not {chars} lowercase hexadecimal characters")
    return value


def _time(fields: dict[str, Any]) -> str:
    value = fields.get("time")
    if not isinstance(value, str) or not 0 < len(value) <= TIME_CHARS_MAX:
        raise NotACheckpoint("time is not an instant")
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise NotACheckpoint("time is not an instant") from None
    if parsed.tzinfo is None:
        raise NotACheckpoint("time has no time zone")
    return value
