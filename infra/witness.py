"""The witness worker: checkpoints of the latest seal, kept outside the database (rules.md 5).

An insider who cuts whole saves from the log's tail takes their seals with them,
and what is left is a sealed log that merely ends earlier. So the server notes the
latest seal in a checkpoint (infra/checkpoints/format.py: counted, chained to the
one before, signed with the seal key) on the witness CASINO_WITNESS names: in
production a NATS JetStream stream that denies deleting and purging, run by
someone else (docs/witness.md); in development a file. It notes one at least every
CASINO_WITNESS_SECONDS while the log moves, whenever CASINO_WITNESS_EVENTS events
have been sealed since the last, and once more when the server stops. `casino audit
verify --witness` then proves the store still holds every seal noted there, and
that no checkpoint was removed, moved or replaced.

At its first pass (and after any failure) the worker reads the witness's last
checkpoint and goes on from it: the next counter, chained to it. It goes on only
from a checkpoint the store holds, signed by the service's key: a last checkpoint
noting a seal the store does not hold (a cut tail, another store's witness) is not
chained on. The worker then notes nothing, readiness names why, and it is for
verify to name the cut and for an operator to decide.

A witness that fails (unreachable, slow to acknowledge, refusing) sets `problem`,
which readiness shows; the server goes on. It is logged when it starts failing,
at most once a minute while it goes on, and once when it recovers.
"""

from __future__ import annotations

import datetime
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from infra.checkpoints import format as checkpoints
from infra.checkpoints.format import Checkpoint, Legacy, NotACheckpoint
from infra.checkpoints.witnesses import Entry, Witness, WitnessFailure, open_witness
from infra.fault_log import faults
from infra.logs import get_logger
from infra.store import seal as seals
from infra.store.store import Store
from infra.workers import PeriodicWorker

CHECK_SECONDS_MAX = 0.5
log = get_logger("casino.witness")


@dataclass(frozen=True)
class LatestSeal:
    position: int
    digest: str
    signature: str


def latest_seal(store: Store) -> LatestSeal | None:
    with store.database.read() as cursor:
        cursor.execute(
            f"SELECT last_position, digest, signature FROM {seals.TABLE}"
            " ORDER BY last_position DESC LIMIT 1"
        )
        row = cursor.fetchone()
    return LatestSeal(int(row[0]), str(row[1]), str(row[2])) if row else None


def seal_digest_at(store: Store, position: int) -> str | None:
    """The digest of the store's seal ending at `position`, if it holds one."""
    with store.database.read() as cursor:
        cursor.execute(f"SELECT digest FROM {seals.TABLE} WHERE last_position = ?", (position,))
        row = cursor.fetchone()
    return str(row[0]) if row else None


class UnsignedSeal(WitnessFailure):
    """The store's latest seal is not signed by the service's key: it was written
    behind the service's back, and noting it would blind the witness to later ones."""


class CannotChain(WitnessFailure):
    """The witness's last checkpoint is not one to go on from; the message says why."""


class WitnessWorker(PeriodicWorker):
    """Notes the latest seal when `seconds` have passed or `events` were sealed since
    the last note, whichever comes first (and once at start)."""

    name = "witness"

    def __init__(self, store: Store, witness: Witness | Path, seconds: float, events: int) -> None:
        self.store = store
        self.witness = open_witness(witness) if isinstance(witness, Path) else witness
        self.seconds = seconds
        self.events = events
        self.head: Checkpoint | None = None  # the witness's last checkpoint, as read or noted
        self.head_position = 0  # the seal it notes (a legacy line's too)
        self.resumed = False  # whether `head` is what the witness holds now
        self.noted_at: float | None = None
        self.problem: str | None = None  # readiness names it (infra/http/routes/health.py)
        # One note at a time: the worker's own, and those a cash-out waits for.
        self._noting = threading.Lock()
        super().__init__(min(CHECK_SECONDS_MAX, seconds))

    def tick(self) -> None:
        try:
            with self._noting:
                noted = self.note_if_due(time.monotonic())
        except WitnessFailure as error:
            self._failed(error)
            return
        self._passed()
        if noted is not None:
            self.observer.acted(self.name, "checkpoint_noted")

    def _passed(self) -> None:
        self.problem = None
        faults.succeeded(self.name)

    def _failed(self, error: WitnessFailure) -> None:
        """Not raised: the worker's own log line would come every pass."""
        problem = self.problem = str(error)
        faults.failed(self.name, error)  # once, a minute apart, at its end (fault_log.py)
        self.observer.acted(self.name, "note_failed")
        if self.failures is not None:  # a significant event, throttled
            self.failures.note("worker_failed", {"worker": self.name, "error": problem[:500]})

    def cover(self, position: int) -> None:
        """Return once a checkpoint noting a seal at or past `position` has been
        acknowledged by the witness, noting the latest seal now if none has yet:
        money that leaves waits for this (rules.md 5). WitnessFailure when the
        witness cannot acknowledge one. Cash-outs that wait at once share a note: the
        first notes the latest seal, which covers the others' saves too."""
        with self._noting:
            if self.resumed and self.head_position >= position:
                return
            try:
                self.note_if_due(time.monotonic(), due=True)
            except WitnessFailure as error:
                self._failed(error)
                raise
            if self.head_position < position:
                raise WitnessFailure(f"no checkpoint reaches position {position} yet")
        self._passed()

    def note_last(self) -> None:
        """At a stop, once the server saves nothing more: note the latest seal, due
        or not, then let the witness go. Else the last saves wait for the next start
        to be noted, and a tail cut while the server is down would go unseen."""
        try:
            with self._noting:
                self.note_if_due(time.monotonic(), due=True)
        except WitnessFailure as error:
            log.error("witness_last_note_failed", problem=str(error)[:500])
        finally:
            self.witness.close()

    def note_if_due(self, now: float, due: bool = False) -> Checkpoint | None:
        """Note the latest seal if a note is due (or `due` says it is, whatever the
        time: a cash-out waits for it, the server stops); return the checkpoint, or
        None. `now` is when it is noted (time.monotonic())."""
        latest = latest_seal(self.store)
        if latest is None:
            return None
        key = self._key()
        sealer = self.store.app.recorder.sealer  # type: ignore[attr-defined]
        _check_signed(latest, sealer.head_keys)
        if not self.resumed:
            self._resume(sealer.chain_keys)
        if latest.position <= self.head_position or not (due or self._due(latest.position, now)):
            return None
        now_utc = datetime.datetime.now(datetime.UTC)
        checkpoint = checkpoints.following(self.head, latest.position, latest.digest, now_utc, key)
        try:
            self.witness.note(checkpoint)
        except WitnessFailure:
            self.resumed = False  # kept or not, the witness says at the next pass
            raise
        self.head, self.head_position, self.noted_at = checkpoint, checkpoint.position, now
        return checkpoint

    def _due(self, position: int, now: float) -> bool:
        if self.noted_at is None:
            return True  # this server's first note: at once
        sealed_since = position - self.head_position
        return sealed_since >= self.events or now - self.noted_at >= self.seconds

    def _key(self) -> Ed25519PrivateKey:
        sealer = getattr(self.store.app.recorder, "sealer", None)
        if sealer is None:
            raise CannotChain("the store has no seal key: checkpoints cannot be signed")
        key: Ed25519PrivateKey = sealer.private_key
        return key

    def _resume(self, public_key: seals.Keys) -> None:
        """Go on from the witness's last checkpoint, if the store holds its seal."""
        last = self.witness.last()
        record = last.record if last is not None else None
        if last is not None:
            _check_resumable(self.store, self.witness.where, last, public_key)
        self.head = record if isinstance(record, Checkpoint) else None
        self.head_position = record.position if isinstance(record, Checkpoint | Legacy) else 0
        self.resumed = True


def _check_signed(latest: LatestSeal, public_key: seals.Keys) -> None:
    if not seals.signs(public_key, latest.signature, latest.digest.encode()):
        raise UnsignedSeal(
            f"the store's latest seal, ending at position {latest.position}, is not "
            "signed by the service's key: written behind its back; not noted (run "
            "`casino audit verify`)"
        )


def _check_resumable(store: Store, where: str, last: Entry, public_key: seals.Keys) -> None:
    record = last.record
    told = f"the last record of the witness {where} ({last.place})"
    if isinstance(record, NotACheckpoint):
        raise CannotChain(f"{told} is not a checkpoint ({record}): nothing is chained on it")
    if not checkpoints.signed(public_key, record):
        raise CannotChain(f"{told} is not signed by the service's key: nothing is chained on it")
    held = seal_digest_at(store, record.position)
    if held == record.seal:
        return
    found = "holds no seal there" if held is None else "holds another seal there"
    raise CannotChain(
        f"{told} notes the seal ending at position {record.position}, and the store "
        f"{found}: the log was cut or rewritten behind the service's back, or the "
        "witness is another store's. Nothing is noted on top of it: run `casino audit "
        "verify`"
    )
