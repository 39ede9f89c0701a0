"""Checking the seals beside the log (`casino audit verify`), and the witness's checkpoints.

Every seal (infra/store/seal.py) must follow the one before it, hash to its digest,
be signed by the service's key (with `--public-key`), and cover exactly the events
that now stand at its positions. An event no seal covers, after sealing began, was
inserted behind the store's back; a seal whose events differ names the positions of
the save that was altered, had an event inserted, removed or moved. A cut tail takes
its seals with it: only a checkpoint written elsewhere shows that (`--witness`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from infra.audit.acknowledged import Acknowledgments
from infra.audit.chain_check import Problems, name_of
from infra.store import seal as seals
from infra.store.seal import Seal
from infra.store.store import Store

BATCH = 1000


def stored_seals(store: Store, up_to: int | None = None, after: int = 0) -> Iterator[Seal]:
    """The store's seals in position order, from the first to end after `after` (up
    to the one covering `up_to`)."""
    while True:
        with store.database.read() as cursor:
            cursor.execute(
                f"SELECT {seals.COLUMNS} FROM {seals.TABLE} WHERE last_position > ?"
                " ORDER BY last_position LIMIT ?",
                (after, BATCH),
            )
            batch = [seals.read_seal(row) for row in cursor.fetchall()]
        if not batch:
            return
        yield from batch
        after = batch[-1].last_position
        if up_to is not None and after >= up_to:
            return


def seal_head(store: Store) -> int:
    with store.database.read() as cursor:
        cursor.execute(f"SELECT MAX(last_position) FROM {seals.TABLE}")
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


ROTATED_TOPIC = "casino:SealKeys.Rotated"  # domain/seal_keys.py


class KeyFollower:
    """The keys a seal may be signed by, as the log goes (rules.md 5, "Keys"): the
    pinned key; once a seal it signed holds a rotation from it to the next key, that
    key or the next; from the next key's first seal on, the next only."""

    def __init__(self, pinned: Ed25519PublicKey) -> None:
        self.current = pinned
        self.next: Ed25519PublicKey | None = None
        self.seen: list[Ed25519PublicKey] = [pinned]

    def signs(self, seal: Seal) -> bool:
        if seals.signed(self.current, seal):
            return True
        if self.next is not None and seals.signed(self.next, seal):
            self.current, self.next = self.next, None  # the next key has taken over
            return True
        return False

    def rotate(self, state: bytes) -> str | None:
        """A rotation event in a seal the current key signed; a problem, or None."""
        try:
            found = json.loads(state)
            start = seals.parse_public_key(str(found["from_public_key"]))
            to = seals.parse_public_key(str(found["to_public_key"]))
        except (ValueError, KeyError, TypeError, seals.SealKeyError):
            return "a seal key rotation that cannot be read"
        if seals.public_key_text(start) != seals.public_key_text(self.current):
            return "a seal key rotation not from the key that signs: not followed"
        self.next = to
        self.seen.append(to)
        return None

    @property
    def all(self) -> tuple[Ed25519PublicKey, ...]:
        return tuple(self.seen)


class SealCheck:
    """The seals, one save at a time, beside the events in log order. An event in the
    range an acknowledgment sealed is that seal's, whatever seal rows were found there
    (infra/audit/acknowledged.py). With a pinned key, each seal must be signed by the
    key the chain of rotations has come to (`KeyFollower`)."""

    def __init__(
        self,
        found: Iterator[Seal],
        public_key: Ed25519PublicKey | None,
        acks: Acknowledgments,
    ) -> None:
        self.problems = Problems("the seals")
        self.acks = acks if acks else None  # asked of every event: None costs least
        self.notes: list[str] = []
        self.keys = KeyFollower(public_key) if public_key is not None else None
        self.rotations: list[tuple[int, bytes]] = []  # in the seal being read
        self.found = found
        self.current: Seal | None = next(found, None)
        self.previous: Seal | None = None
        self.count = 0
        self.lines: list[bytes] = []
        self.positions: list[int] = []
        self.unsealed: list[int] = []  # a run of events no seal covers
        self.unsealed_first = ""

    def add(self, position: int, notification: Any) -> None:
        # Seal rows found inside an acknowledged range end before its own seal, which
        # holds every event there: they are passed by, to be named, holding none.
        owner = self.acks.owning(position) if self.acks is not None else None
        reach = position if owner is None else owner.position
        while self.current is not None and self.current.last_position < reach:
            self._close()
        seal = self.current
        if seal is None or position < seal.first_position:
            self._unsealed(position, notification)
            return
        self._flush_unsealed()
        if notification.topic == ROTATED_TOPIC:
            self.rotations.append((position, bytes(notification.state)))
        self.positions.append(position)
        self.lines.append(
            seals.event_line(
                position,
                notification.originator_id,
                int(notification.originator_version),
                str(notification.topic),
                bytes(notification.state),
            )
        )

    def _unsealed(self, position: int, notification: Any) -> None:
        if self.unsealed and self.unsealed[-1] != position - 1:
            self._flush_unsealed()
        if not self.unsealed:
            self.unsealed_first = name_of(notification)
        self.unsealed.append(position)

    def _flush_unsealed(self) -> None:
        if not self.unsealed:
            return
        first, last = self.unsealed[0], self.unsealed[-1]
        self.unsealed = []
        if self.previous is None:
            self.notes.append(
                f"the events at positions {first}..{last} are in no seal: written before "
                "sealing began, only the event chain covers them"
            )
        elif first == last:
            self.problems.add(
                f"event at position {first} ({self.unsealed_first}) is in no seal: it was "
                "inserted behind the store's back"
            )
        else:
            self.problems.add(
                f"the events at positions {first}..{last} (the first {self.unsealed_first}) "
                "are in no seal: they were inserted behind the store's back"
            )

    def _close(self) -> None:
        seal = self.current
        assert seal is not None
        inside = self.acks.sealing(seal.last_position) if self.acks is not None else None
        if inside is not None:  # Found there when acknowledged; its events are the ack's.
            for problem in self._seal_problems(seal):
                inside.note(problem)
        else:
            problems = self._seal_problems(seal)
            for problem in problems:
                self.problems.add(problem)
            self._check_events(seal)
            if not problems:
                self._follow_rotations(seal)
        self.count += 1
        self.previous, self.current = seal, next(self.found, None)
        self.lines, self.positions, self.rotations = [], [], []

    def _follow_rotations(self, seal: Seal) -> None:
        """A rotation in a seal signed as it should be hands the log to the next key."""
        for position, state in self.rotations if self.keys is not None else ():
            problem = self.keys.rotate(state)  # type: ignore[union-attr]
            if problem is not None:
                self.problems.add(f"event at position {position}: {problem}")

    def _seal_problems(self, seal: Seal) -> list[str]:
        where = f"the seal of positions {seal.first_position}..{seal.last_position}"
        before = self.previous.digest if self.previous is not None else seals.GENESIS
        problems = []
        if seal.previous != before:
            problems.append(
                f"{where} does not follow the seal before it: a seal was removed, "
                "inserted or reordered"
            )
        digest = seals.digest_of(seal)
        if digest != seal.digest:
            problems.append(f"{where} does not hash to its digest: it was altered")
        elif self.keys is not None and not self.keys.signs(seal):
            problems.append(
                f"{where} is not signed by the service's key (the pinned key, or a key it "
                "handed over to): it was forged"
            )
        return problems

    def _check_events(self, seal: Seal) -> None:
        if (
            len(self.positions) == seal.event_count
            and seals.events_digest(self.lines) == seal.events_digest
        ):
            return
        span = f"positions {seal.first_position}..{seal.last_position}"
        if not self.positions:
            problem = f"the events at {span}, {seal.event_count} sealed, were removed"
        else:
            there = ", ".join(str(p) for p in self.positions)
            problem = (
                f"the events at {span} are not those sealed ({seal.event_count} sealed; now "
                f"at {there}): an event there was altered, inserted, removed or moved"
            )
        cut = self.acks.removing(seal.last_position) if self.acks is not None else None
        if cut is not None and cut.holds_cut(seal, self.lines):
            cut.note(problem)
        else:
            self.problems.add(problem)

    def finish(self, sealed_store_expected: bool) -> list[str]:
        while self.current is not None:
            self._close()
        self._flush_unsealed()
        if sealed_store_expected and self.count == 0:
            self.problems.add(
                "the store holds no seal: nothing shows that its events are the service's"
            )
        return self.problems.all()
