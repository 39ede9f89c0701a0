"""The witness: the latest seal, written down outside the database (rules.md 5).

An insider who cuts whole saves from the log's tail takes their seals with them,
and what is left is a sealed log that merely ends earlier. So the server notes the
latest seal (its last position, digest, signature and the time) in an append-only
file (CASINO_WITNESS, one JSON object a line) at least every CASINO_WITNESS_SECONDS
while the log moves, whenever CASINO_WITNESS_EVENTS events have been sealed
since the last note, and once more when the server stops. `casino audit verify
--witness FILE` then proves the store still holds every seal noted there. Keep
the file where the database's users cannot write (another host, a write-once
volume, a log shipper).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from infra.logs import get_logger
from infra.store import seal as seals
from infra.store.store import Store
from infra.workers import PeriodicWorker

CHECK_SECONDS_MAX = 0.5
log = get_logger("casino.witness")


@dataclass(frozen=True)
class Checkpoint:
    position: int
    digest: str
    signature: str


def latest_seal(store: Store) -> Checkpoint | None:
    with store.database.read() as cursor:
        cursor.execute(
            f"SELECT last_position, digest, signature FROM {seals.TABLE}"
            " ORDER BY last_position DESC LIMIT 1"
        )
        row = cursor.fetchone()
    return Checkpoint(int(row[0]), str(row[1]), str(row[2])) if row else None


class UnsignedSeal(Exception):
    """The store's latest seal is not signed by the service's key: it was written
    behind the service's back, and noting it would blind the witness to later ones."""


def append_checkpoint(path: Path, checkpoint: Checkpoint, now: datetime.datetime) -> None:
    line = json.dumps(
        {
            "position": checkpoint.position,
            "digest": checkpoint.digest,
            "time": now.isoformat(),
            "signature": checkpoint.signature,
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as file:
        file.write(line + "\n")
        file.flush()
        os.fsync(file.fileno())  # On disk before the next note is due.


class WitnessWorker(PeriodicWorker):
    """Notes the latest seal when `seconds` have passed or `events` were sealed since
    the last note, whichever comes first (and once at start)."""

    name = "witness"

    def __init__(self, store: Store, path: Path, seconds: float, events: int) -> None:
        self.store = store
        self.path = path
        self.seconds = seconds
        self.events = events
        self.noted: Checkpoint | None = None
        self.noted_at = 0.0
        self.problem: str | None = None  # readiness names it (infra/http/routes/health.py)
        super().__init__(min(CHECK_SECONDS_MAX, seconds))

    def tick(self) -> None:
        try:
            self.note_if_due(time.monotonic())
        except OSError as error:
            self.problem = f"the witness cannot write {self.path}: {error.strerror or error}"
            raise
        except UnsignedSeal as error:
            self.problem = str(error)
            raise
        self.problem = None

    def note_last(self) -> None:
        """At a stop, once the server saves nothing more: note the latest seal, due
        or not. Else the last saves wait for the next start to be noted, and a tail
        cut while the server is down would go unseen."""
        try:
            self.note_if_due(math.inf)
        except (OSError, UnsignedSeal):
            log.exception("witness_last_note_failed")

    def note_if_due(self, now: float) -> Checkpoint | None:
        """Append the latest seal if a note is due; return it, or None."""
        latest = latest_seal(self.store)
        if latest is None or (self.noted is not None and latest.position <= self.noted.position):
            return None
        sealer = getattr(self.store.app.recorder, "sealer", None)
        if sealer is not None and not seals.signs(
            sealer.public_key, latest.signature, latest.digest.encode()
        ):
            raise UnsignedSeal(
                f"the store's latest seal, ending at position {latest.position}, is not "
                "signed by the service's key: written behind its back; not noted (run "
                "`casino audit verify`)"
            )
        if self.noted is not None:
            sealed_since = latest.position - self.noted.position
            if sealed_since < self.events and now - self.noted_at < self.seconds:
                return None
        append_checkpoint(self.path, latest, datetime.datetime.now(datetime.UTC))
        self.noted, self.noted_at = latest, now
        return latest
