"""The checkpoint format (infra/checkpoints/format.py): what is signed, what is read."""

from __future__ import annotations

import datetime
import hashlib
import json

import pytest

from infra.checkpoints.format import (
    FORMAT,
    GENESIS,
    RECORD_BYTES_MAX,
    Checkpoint,
    Legacy,
    NotACheckpoint,
    following,
    parse,
    signed,
)
from tests.conftest import SEAL_KEY

NOW = datetime.datetime(2026, 12, 7, 2, 26, 9, 537787, tzinfo=datetime.UTC)
SEAL = "5e" * 32


def test_the_first_checkpoint_counts_one_and_follows_genesis() -> None:
    first = following(None, 42, SEAL, NOW, SEAL_KEY)
    assert (first.counter, first.position, first.previous) == (1, 42, GENESIS)
    assert first.time == "2026-12-07T02:26:09.537787+00:00"


def test_the_digest_and_signature_are_over_the_body_as_documented() -> None:
    first = following(None, 42, SEAL, NOW, SEAL_KEY)
    body = f"casino-checkpoint/1|1|42|{SEAL}|{GENESIS}|2026-12-07T02:26:09.537787+00:00"
    assert first.digest == hashlib.sha256(body.encode()).hexdigest()
    SEAL_KEY.public_key().verify(bytes.fromhex(first.signature), first.digest.encode())


def test_each_checkpoint_counts_on_and_names_the_one_before() -> None:
    first = following(None, 42, SEAL, NOW, SEAL_KEY)
    second = following(first, 50, "ab" * 32, NOW, SEAL_KEY)
    assert (second.counter, second.previous) == (2, first.digest)


def test_a_record_reads_back_as_the_checkpoint_it_holds() -> None:
    first = following(None, 42, SEAL, NOW, SEAL_KEY)
    assert json.loads(first.record())["format"] == FORMAT
    assert parse(first.record()) == first
    assert signed(SEAL_KEY.public_key(), first)


def test_a_line_of_an_earlier_witness_file_reads_as_a_legacy_checkpoint() -> None:
    signature = SEAL_KEY.sign(SEAL.encode()).hex()
    line = {
        "position": 7,
        "digest": SEAL,
        "time": "2025-01-01T00:00:00+00:00",
        "signature": signature,
    }
    legacy = parse(json.dumps(line))
    assert legacy == Legacy(7, SEAL, "2025-01-01T00:00:00+00:00", signature)
    assert signed(SEAL_KEY.public_key(), legacy)


def good() -> dict[str, object]:
    fields: dict[str, object] = json.loads(following(None, 42, SEAL, NOW, SEAL_KEY).record())
    return fields


@pytest.mark.parametrize(
    ("change", "told"),
    [
        ({"format": "casino-checkpoint/9"}, "format"),
        ({"counter": 0}, "counter"),
        ({"counter": "1"}, "counter"),
        ({"counter": True}, "counter"),
        ({"position": -5}, "position"),
        ({"seal": "AB" * 32}, "seal"),
        ({"previous": "ab"}, "previous"),
        ({"signature": "zz" * 64}, "signature"),
        ({"time": "yesterday"}, "time"),
        ({"time": "2026-12-07T02:26:09"}, "time zone"),
    ],
)
def test_a_malformed_record_is_no_checkpoint_and_says_why(
    change: dict[str, object], told: str
) -> None:
    with pytest.raises(NotACheckpoint, match=told):
        parse(json.dumps({**good(), **change}))


@pytest.mark.parametrize(
    "record", [b"", b"[]", b"not json", b'{"a": 1}', b"x" * (RECORD_BYTES_MAX + 1)]
)
def test_what_is_no_record_at_all_is_no_checkpoint(record: bytes) -> None:
    with pytest.raises(NotACheckpoint):
        parse(record)


def test_a_checkpoint_signed_by_another_key_or_altered_does_not_verify() -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    first = following(None, 42, SEAL, NOW, SEAL_KEY)
    other = following(None, 42, SEAL, NOW, Ed25519PrivateKey.generate())
    assert not signed(SEAL_KEY.public_key(), other)
    altered = Checkpoint(**{**first.__dict__, "position": 43})
    assert not signed(SEAL_KEY.public_key(), altered)
