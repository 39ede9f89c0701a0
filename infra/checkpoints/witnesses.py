"""What a witness is, whichever keeps it: CASINO_WITNESS names a file or a stream.

    CASINO_WITNESS=var/witness.jsonl                      a file (development)
    CASINO_WITNESS=nats://user:password@host:4222/STREAM  a NATS JetStream stream

(`tls://` in place of `nats://` connects with TLS.) The service publishes to the
subject `casino.witness.STREAM` of that stream (docs/witness.md: how the witness
operator sets it up). A witness notes a checkpoint only after the one the caller
last read from it (`last`): when something else has written to it since (another
server process of the same store), `note` raises WitnessMoved and the caller reads
the last one again. So two writers never fork the chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from infra import nats_target
from infra.checkpoints.format import Checkpoint, Legacy, NotACheckpoint, parse
from infra.nats_target import NatsTarget, is_nats

SUBJECT_PREFIX = "casino.witness."
WITNESS_EXAMPLE = "a file path, or nats://user:password@host:4222/STREAM"


class WitnessFailure(Exception):
    """The witness noted nothing; the message says why, in a sentence."""


class WitnessUnavailable(WitnessFailure):
    """The witness cannot be reached or read now, or did not acknowledge in time:
    what was sent is not known to be kept."""


class WitnessMoved(WitnessFailure):
    """The witness's last checkpoint is not the one read last: something else wrote
    to it since. Read the last one again before noting."""


class WitnessGone(WitnessFailure):
    """The witness is reachable but what should hold the checkpoints is not there
    (a stream deleted): for verify, a discrepancy, not an outage."""


@dataclass(frozen=True)
class Entry:
    """One record of a witness, where it stands (a line, a stream sequence), and its
    bytes as kept (an export copies them)."""

    place: str
    record: Checkpoint | Legacy | NotACheckpoint
    data: bytes = b""


def entry_of(place: str, data: bytes) -> Entry:
    """The entry a record makes, a checkpoint or the reason it is none."""
    try:
        return Entry(place, parse(data), data)
    except NotACheckpoint as error:
        return Entry(place, error, data)


class Witness(Protocol):
    where: str  # for messages: the file, or the stream's URL without its password

    def last(self) -> Entry | None:
        """The witness's last record (None: it holds none), from which `note` goes on."""
        ...

    def note(self, checkpoint: Checkpoint) -> str:
        """Keep `checkpoint`, the one after the last read, and return where it stands
        (the file, a stream sequence) once the witness has acknowledged it: it is
        kept. Raises a WitnessFailure otherwise (then it may or may not be kept:
        read the last one again)."""
        ...

    def entries(self) -> Iterator[Entry]:
        """Every record, in the order the witness keeps them."""
        ...

    def close(self) -> None: ...


def parse_nats(text: str) -> NatsTarget:
    """The witness's stream a URL names; ValueError says what is wrong."""
    return nats_target.parse_nats(text, SUBJECT_PREFIX)


def check_witness_setting(text: str) -> None:
    """What config validation asks of CASINO_WITNESS; ValueError says what is wrong."""
    if "://" in text:
        parse_nats(text)
    elif not text.strip():
        raise ValueError(f"is empty: {WITNESS_EXAMPLE}")


def shown(text: str) -> str:
    """CASINO_WITNESS as messages show it."""
    return parse_nats(text).shown if is_nats(text) else text


def open_witness(text: str | Path) -> Witness:
    """The witness CASINO_WITNESS (or `--witness`) names; nothing is read or
    connected to until it is used."""
    if isinstance(text, str) and is_nats(text):
        from infra.checkpoints.jetstream import JetStreamWitness

        return JetStreamWitness(parse_nats(text))
    from infra.checkpoints.file import FileWitness

    return FileWitness(Path(text))
