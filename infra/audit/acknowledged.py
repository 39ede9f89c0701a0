"""The log's acknowledgments, as `casino audit verify` reads them (infra/audit/acknowledge.py
writes them).

An acknowledgment is an operator's decision, signed with the service's key, to go on
from a tail found changed behind the service's back. Verify names every one for
ever, and what it found there is reported as acknowledged, not as a discrepancy:

- in the range its seal covers (after the last seal the key had signed, up to the
  acknowledgment's own event): seals the key did not sign, and anything the event
  chain says of the events there. Its own seal covers those events as they were
  found, so any later change to one is still named, by that seal;
- in the range it found removed (positions past the last event that a link or a
  signed seal still claimed): links whose event is gone, and seals whose events are
  gone. A seal the cut fell inside must still hold the events it held then (their
  digest is in the record): those before the cut are covered by that alone.

Nothing else is: the acknowledgment's own seal, an event altered elsewhere, an
unsealed tail after it, the books, the rounds and the read models are checked as
ever. An acknowledgment is trusted only under the auditor's public key: without one
it is listed and excuses nothing; one whose seal that key did not sign is a forged
seal, named as such.

Verify finds them before it reads the log, so that each check can tell as it goes:
the significant-events read model lists where they are (it is caught up first), and
each is then checked against the log itself: the seal ending there must be of the
acknowledgment's form (signed, under a key), and the event there the
`log_acknowledged` one that seal names. A listing removed or altered can only hide
one, and what it found then shows as the discrepancies it was.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from domain.significant import LOG_ACKNOWLEDGED, SignificantEvent
from infra.store import seal as seals
from infra.store.seal import Seal
from infra.store.store import Store

FINDINGS_LISTED_MAX = 100  # per acknowledgment; the rest are counted


@dataclass
class Acknowledgment:
    position: int  # its event's, and its seal's last
    sealed_from: int  # its seal's first position
    event_id: str
    at: str
    details: dict[str, Any]
    trusted: bool  # its seal is signed by the auditor's public key
    findings: list[str] = field(default_factory=list)
    findings_unlisted: int = 0

    @property
    def removed(self) -> tuple[int, int] | None:
        span = self.details.get("removed")
        return None if not span else (int(span["first"]), int(span["last"]))

    def note(self, finding: str) -> None:
        if len(self.findings) < FINDINGS_LISTED_MAX:
            self.findings.append(finding)
        else:
            self.findings_unlisted += 1

    def holds_cut(self, seal: Seal, lines: list[bytes]) -> bool:
        """Whether `lines`, the events standing in `seal`'s range, are all it should
        hold since this removal: none, where the cut took the whole save; else those
        the cut left, as recorded."""
        removed = self.removed
        if removed is None or not removed[0] <= seal.last_position <= removed[1]:
            return False
        if not lines:
            return True
        cut = self.details.get("cut_seal") or {}
        return (
            (cut.get("first"), cut.get("last")) == (seal.first_position, seal.last_position)
            and cut.get("remaining") == len(lines)
            and cut.get("events_digest") == seals.events_digest(lines)
        )

    def record(self) -> dict[str, Any]:
        """As verify --json gives it."""
        unlisted = [f"and {self.findings_unlisted} more"] if self.findings_unlisted else []
        return {
            "position": self.position,
            "event_id": self.event_id,
            "at": self.at,
            "reason": self.details.get("reason"),
            "os_user": self.details.get("os_user"),
            "database_role": self.details.get("database_role"),
            "signature_checked": self.trusted,
            "found": found_of(self.details),
            "covered": self.findings + unlisted,
        }


class Acknowledgments:
    """The log's acknowledgments, in position order, for the checks to ask whether a
    finding lies in one that is trusted."""

    def __init__(self, found: list[Acknowledgment]) -> None:
        self.all = sorted(found, key=lambda ack: ack.position)
        self.trusted = [ack for ack in self.all if ack.trusted]
        self._positions = [ack.position for ack in self.trusted]

    def __bool__(self) -> bool:
        return bool(self.trusted)

    def owning(self, position: int) -> Acknowledgment | None:
        """The one whose seal covers `position`, its own event's included."""
        index = bisect.bisect_left(self._positions, position)
        if index < len(self.trusted) and self.trusted[index].sealed_from <= position:
            return self.trusted[index]
        return None

    def sealing(self, position: int) -> Acknowledgment | None:
        """The one whose seal covers `position` as found: before its own event."""
        ack = self.owning(position)
        return ack if ack is not None and position < ack.position else None

    def removing(self, position: int) -> Acknowledgment | None:
        """The one that found `position` removed."""
        for ack in self.trusted:
            removed = ack.removed
            if removed is not None and removed[0] <= position <= removed[1]:
                return ack
        return None


def found_of(details: dict[str, Any]) -> dict[str, Any]:
    """What an acknowledgment found, from its record."""
    keys = ("log_top", "trusted_head", "head", "forged_seals", "forged_seals_listed",
            "unsealed", "removed", "cut_seal")  # fmt: skip
    return {key: details.get(key) for key in keys}


def acknowledgments(store: Store, public_key: Ed25519PublicKey | None) -> Acknowledgments:
    """Every acknowledgment the read models list that the log bears out."""
    with store.database.read() as cursor:
        cursor.execute(
            "SELECT position FROM significant_events WHERE kind = ? ORDER BY position",
            (LOG_ACKNOWLEDGED,),
        )
        listed = [int(row[0]) for row in cursor.fetchall()]
    found = (_borne_out(store, position, public_key) for position in listed)
    return Acknowledgments([ack for ack in found if ack is not None])


def _borne_out(
    store: Store, position: int, public_key: Ed25519PublicKey | None
) -> Acknowledgment | None:
    seal = _seal_at(store, position)
    if seal is None or not seals.acknowledges(seal):
        return None
    event = _event_at(store, position)
    if event is None or event.kind != LOG_ACKNOWLEDGED or not isinstance(event.details, dict):
        return None
    details = event.details
    if details.get("position") != position or details.get("sealed_from") != seal.first_position:
        return None
    if public_key is not None and not seals.signed(public_key, seal):
        return None  # A forged seal: the seal check names it as one.
    trusted = public_key is not None
    return Acknowledgment(position, seal.first_position, str(event.event_id), str(event.at),
                          details, trusted)  # fmt: skip


def _seal_at(store: Store, position: int) -> Seal | None:
    with store.database.read() as cursor:
        cursor.execute(
            f"SELECT {seals.COLUMNS} FROM {seals.TABLE} WHERE last_position = ?", (position,)
        )
        row = cursor.fetchone()
    return None if row is None else seals.read_seal(row)


def _event_at(store: Store, position: int) -> Any | None:
    """The significant event at `position`, or None where none can be read."""
    found = store.app.recorder.select_notifications(start=position, limit=1, stop=position)
    if not found or found[0].topic != SignificantEvent.Created.TOPIC:
        return None
    try:
        return store.app.mapper.to_domain_event(found[0])
    except Exception:  # Unreadable: named where verify reads it in the log.
        return None
