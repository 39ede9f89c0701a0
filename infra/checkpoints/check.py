"""What `casino audit verify --witness` checks in a witness, file or stream alike.

Read in the order the witness keeps them, the checkpoints must count 1, 2, 3, ...,
each name the one before it (its digest; GENESIS for the first), hash to its
digest, be signed by the pinned key and note a later seal than the one before.
So a checkpoint removed shows as a gap in the counter, one moved as a counter out
of order, one replaced or rebuilt as a chain that breaks or a signature that
fails. And the store must still hold every seal a checkpoint notes, the same: a
seal the witness saw that the store no longer holds is a cut tail, another seal
at its position a rewritten log.

Only the highest counter seen so far and the ranges of counters skipped are held,
never the whole witness: a checkpoint is checked against the one before it in the
witness's order, and a counter that comes late is taken off the missing ones.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from infra.audit.chain_check import Problems
from infra.checkpoints import format as checkpoints
from infra.checkpoints.format import GENESIS, Checkpoint, Legacy, NotACheckpoint
from infra.checkpoints.witnesses import (
    Entry,
    Witness,
    WitnessFailure,
    WitnessGone,
    open_witness,
)
from infra.nats_target import is_nats
from infra.store import seal as seals
from infra.store.store import Store

CHECKPOINTS_MAX = 50_000_000  # about 15 years of one every 10 s; beyond: named, not read
MISSING_RANGES_MAX = 100_000  # gaps tracked for a late counter; beyond, named at once
STORE_BATCH = 500  # checkpoints whose seals are looked up in one statement


@dataclass
class WitnessReport:
    checkpoints: int = 0
    legacy: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_witness(store: Store, witness: Witness, key: seals.Keys | None) -> WitnessReport:
    """Every checkpoint of `witness`, in order, chained, signed with `key` (unless
    None), and still a seal of the store."""
    chain, held = ChainCheck(key), HeldCheck(store)
    read = _read(witness, chain, held)
    held.finish()
    report = WitnessReport(chain.counted, chain.legacy, chain.finish() + held.problems.all())
    report.notes = _notes(witness.where, chain, key)
    if read and chain.counted + chain.legacy == 0 and _sealed(store):
        report.problems.append(
            f"the witness {witness.where} holds no checkpoint, while the store is sealed: "
            "it was emptied or replaced, or the server never ran with it"
        )
    return report


def _read(witness: Witness, chain: ChainCheck, held: HeldCheck) -> bool:
    """Check each record as it is read; whether the witness was read to its end."""
    place = ""
    try:
        for entry in witness.entries():
            if chain.read == CHECKPOINTS_MAX:
                chain.problems.add(f"more than {CHECKPOINTS_MAX} records: the rest not checked")
                return True
            noted, place = chain.add(entry), entry.place
            if noted is not None:
                held.add(entry.place, noted)
    except WitnessFailure as error:
        past = f" past {place}" if place else ""
        chain.problems.add(f"the witness could not be read{past}: {error}")
        return False
    return True


def _notes(where: str, chain: ChainCheck, key: seals.Keys | None) -> list[str]:
    notes = []
    if chain.head is not None:
        notes.append(f"the witness {where}: checkpoints 1..{chain.head.counter} read")
    if chain.legacy:
        notes.append(
            f"{chain.legacy} of the witness's checkpoints are legacy lines, written before "
            "checkpoints were chained: one removed or reordered among them would not show"
        )
    if key is None:
        notes.append("the witness's signatures not checked: no public key given")
    return notes


def _sealed(store: Store) -> bool:
    with store.database.read() as cursor:
        cursor.execute(f"SELECT 1 FROM {seals.TABLE} LIMIT 1")
        return cursor.fetchone() is not None


class ChainCheck:
    """The checkpoints in the witness's order: counted, chained, signed."""

    def __init__(self, key: seals.Keys | None) -> None:
        self.key = key
        self.problems = Problems("the witness")
        self.head: Checkpoint | None = None  # the highest counter so far
        self.position = 0  # the seal the last checkpoint in order noted
        self.missing: list[tuple[int, int, str]] = []  # counters skipped, where noticed
        self.read = self.counted = self.legacy = 0

    def add(self, entry: Entry) -> Checkpoint | Legacy | None:
        """Check one record; return what it notes (for the store to hold), if anything."""
        self.read += 1
        record, place = entry.record, f"witness {entry.place}"
        if isinstance(record, NotACheckpoint):
            self.problems.add(f"{place}: not a checkpoint ({record})")
            return None
        if isinstance(record, Legacy):
            self._legacy(place, record)
        else:
            self._chained(place, record)
        return record

    def _legacy(self, place: str, record: Legacy) -> None:
        self.legacy += 1
        self._signed(place, record)
        if self.head is not None:
            self.problems.add(
                f"{place}: an unchained (legacy) checkpoint after the chain began: the "
                "service has not written one since, so something else did (rebuilt from "
                "the database's seals?)"
            )
        self._in_order(place, record)

    def _chained(self, place: str, record: Checkpoint) -> None:
        self.counted += 1
        if not checkpoints.hashes(record):
            self.problems.add(f"{place}: {_named(record)} does not hash to its digest: altered")
        else:
            self._signed(place, record)
        expected = self.head.counter + 1 if self.head is not None else 1
        if record.counter < expected:
            self._late(place, record)
            return
        if record.counter > expected:
            self._skipped(expected, record.counter - 1, place)
        elif record.previous != (self.head.digest if self.head is not None else GENESIS):
            self.problems.add(
                f"{place}: {_named(record)} does not follow checkpoint {expected - 1} (it "
                "names another as the one before it): replaced or rebuilt"
            )
        self._in_order(place, record)
        self.head = record

    def _signed(self, place: str, record: Checkpoint | Legacy) -> None:
        if self.key is not None and not checkpoints.signed(self.key, record):
            self.problems.add(f"{place}: {_named(record)} is not signed by the pinned key: forged")

    def _in_order(self, place: str, record: Checkpoint | Legacy) -> None:
        if record.position <= self.position:
            self.problems.add(
                f"{place}: {_named(record)} notes position {record.position}, not after "
                f"{self.position}, noted before it: reordered or rebuilt"
            )
        self.position = max(self.position, record.position)

    def _skipped(self, first: int, last: int, place: str) -> None:
        if len(self.missing) < MISSING_RANGES_MAX:
            self.missing.append((first, last, place))
        else:
            self.problems.add(f"{_counters(first, last)} missing before {place}: removed")

    def _late(self, place: str, record: Checkpoint) -> None:
        """A counter at or below the highest seen: moved here, or there twice."""
        assert self.head is not None
        at = bisect.bisect_right(self.missing, (record.counter, 2**64, "")) - 1
        if at < 0 or not self.missing[at][0] <= record.counter <= self.missing[at][1]:
            self.problems.add(
                f"{place}: checkpoint {record.counter} again, after checkpoint "
                f"{self.head.counter}: replayed or rebuilt"
            )
            return
        first, last, noticed = self.missing[at]
        below = [(first, record.counter - 1, noticed)] if first < record.counter else []
        above = [(record.counter + 1, last, noticed)] if record.counter < last else []
        self.missing[at : at + 1] = below + above
        self.problems.add(
            f"{place}: checkpoint {record.counter} comes after checkpoint "
            f"{self.head.counter}: the witness's order was changed"
        )

    def finish(self) -> list[str]:
        for first, last, place in self.missing:
            where = "at the witness's start" if first == 1 else f"before {place}"
            self.problems.add(f"{_counters(first, last)} missing {where}: removed")
        return self.problems.all()


class HeldCheck:
    """Each seal a checkpoint notes must still be in the store, the same; looked up
    a batch at a time."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.problems = Problems("the witness")
        self.pending: list[tuple[str, Checkpoint | Legacy]] = []

    def add(self, place: str, record: Checkpoint | Legacy) -> None:
        self.pending.append((f"witness {place}", record))
        if len(self.pending) == STORE_BATCH:
            self.finish()

    def finish(self) -> None:
        if not self.pending:
            return
        held = self._digests([record.position for _, record in self.pending])
        for place, record in self.pending:
            digest = held.get(record.position)
            if digest is None:
                self.problems.add(
                    f"{place}: the store holds no seal ending at position {record.position}, "
                    f"which the witness saw at {record.time}: the log was cut or rewritten there"
                )
            elif digest != record.seal:
                self.problems.add(
                    f"{place}: the seal ending at position {record.position} is not the one "
                    f"the witness saw at {record.time}: the log was rewritten up to there"
                )
        self.pending = []

    def _digests(self, positions: Sequence[int]) -> dict[int, str]:
        marks = ", ".join("?" for _ in positions)
        with self.store.database.read() as cursor:
            cursor.execute(
                f"SELECT last_position, digest FROM {seals.TABLE} WHERE last_position IN ({marks})",
                tuple(positions),
            )
            return {int(row[0]): str(row[1]) for row in cursor.fetchall()}


def _named(record: Checkpoint | Legacy) -> str:
    if isinstance(record, Legacy):
        return "the legacy checkpoint"
    return f"checkpoint {record.counter}"


def _counters(first: int, last: int) -> str:
    return f"checkpoint {first} is" if first == last else f"checkpoints {first}..{last} are"


class WitnessNotReadable(ValueError):
    """The witness to check cannot be had: a usage or configuration error (exit 2)."""


def witness_to_verify(given: str | None, configured: str) -> tuple[Witness | None, str | None]:
    """The witness verify checks (`--witness`, else CASINO_WITNESS), reached once
    already, or None and a note saying why none is: a configured file that is not
    there (development: the server may never have run). A stream that cannot be
    reached, or a file given that is not there, is a WitnessNotReadable."""
    label = "--witness" if given else "CASINO_WITNESS"
    text = given or configured
    if not is_nats(text) and not Path(text).is_file():
        if given:
            raise WitnessNotReadable(f"--witness: {text} is no file")
        return None, f"no witness checked: CASINO_WITNESS names {text}, which is not there"
    try:
        witness = open_witness(text)
    except ValueError as error:  # a URL that names no stream
        raise WitnessNotReadable(f"{label}: {error}") from None
    try:
        witness.last()
    except WitnessGone:
        pass  # reached, and what it should hold is gone: for verify to name
    except WitnessFailure as error:
        witness.close()
        raise WitnessNotReadable(f"{label}: {error}") from None
    return witness, None
