"""Group commit: the saves of concurrent commands, gathered and written in one
transaction (one lock, one notify, one insert, one fsync), each command still
answered on its own.

A command hands its save (its stored events, in order) to `GroupCommit.save` and
waits on the future it gets back. One committer thread takes whatever saves are
waiting, up to `batch_max`; when the last transaction was shared, it lingers up to
`wait_seconds` for more, so a lone client never waits for company. Then:

- two saves of one batch touching the same aggregate cannot both be right: the
  later is refused as a conflict (its command runs again, on the state the earlier
  left), once the batch has committed;
- the rest go to the store in one `insert` call, which is one transaction;
- a conflict with another process's save fails the whole transaction without
  saying whose it was: the batch's saves are then written one by one, each getting
  its own answer (saved, or the conflict for its command to retry);
- a lost connection fails every save of the batch with it; each command decides
  what to do, as it would alone (a receipt tells it next time whether it landed);
- a save is taken for good as it is gathered: its future can no longer be
  cancelled; one its waiter cancelled before that is dropped, never written;
- once closed, it writes what was queued before, and refuses any later save at once
  (`CommitterClosed`): nothing is left waiting on a committer that has stopped.

Hand-rolled rather than a library: the batching has to know the store's
conflict semantics (aggregate id and version), and it is about a hundred lines.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from uuid import UUID

from eventsourcing.persistence import IntegrityError, StoredEvent

from infra.commands.receipt import ReceiptRecord
from infra.commands.save import Insert

# Bounds on the knobs (rules.md 6: every quantity has a limit).
WAIT_SECONDS_MAX = 0.05
BATCH_MAX_MAX = 1_000


class CommitterClosed(RuntimeError):
    """A save handed to a committer after it was closed (the server is stopping):
    nothing of it was written."""


@dataclass(frozen=True)
class GroupCommitSettings:
    # Linger for more saves, only after a shared transaction. Off by default: while one
    # transaction is written the next saves queue anyway, and lingering only idled the
    # server between batches. Measured on 2 cores, PostgreSQL, 16 clients over HTTP:
    # deposits 1,195-1,228/s lingering 2 ms, 1,281-1,330/s without; in process from 16
    # threads 2,637 commands/s and 0.07 write transactions a command lingering, 3,142
    # and 0.14 without, PostgreSQL's CPU a command the same (benchmarks/).
    wait_seconds: float = 0.0
    batch_max: int = 64  # saves per transaction

    def __post_init__(self) -> None:
        if not 0 <= self.wait_seconds <= WAIT_SECONDS_MAX:
            raise ValueError(f"group commit waits 0-{WAIT_SECONDS_MAX * 1000:.0f} ms")
        if not 1 <= self.batch_max <= BATCH_MAX_MAX:
            raise ValueError(f"group commit gathers 1-{BATCH_MAX_MAX} saves")


@dataclass
class PendingSave:
    """One command's save: its stored events, in order, its receipts, what to do once
    they are stored (before any later batch is gathered), and the answer it waits for."""

    stored_events: list[StoredEvent]
    receipts: list[ReceiptRecord]
    on_saved: Callable[[], None]
    answer: Future[list[int]] = field(default_factory=Future)

    def taken(self) -> bool:
        """Taken into a batch: from now on its answer cannot be cancelled (its waiter
        only stops listening). False if the waiter cancelled it first: it is dropped,
        never written, and nobody is told."""
        return self.answer.set_running_or_notify_cancel()

    def saved(self, ids: list[int]) -> None:
        try:
            self.on_saved()  # the aggregates into the cache, so the next batch sees them
        finally:
            self.answer.set_result(ids)

    def touched(self) -> set[UUID | str]:
        """The aggregates and receipt keys it writes (a receipt key taken twice in one
        batch is a conflict too: one command, sent twice at once)."""
        touched: set[UUID | str] = {event.originator_id for event in self.stored_events}
        return touched | {receipt.key_id for receipt in self.receipts}


@dataclass
class BatchCounts:
    """What the committer did, for metrics and the benchmark."""

    transactions: int = 0
    saves: int = 0
    conflicts_in_batch: int = 0
    fallbacks: int = 0


class GroupCommit:
    """The seam's committer (infra/commands/save.py: `Committer`) while group commit is
    on: the store hands one to the seam (infra/store/store.py)."""

    def __init__(self, insert: Insert, settings: GroupCommitSettings) -> None:
        self._insert = insert
        self._settings = settings
        self._waiting: queue.SimpleQueue[PendingSave | None] = queue.SimpleQueue()
        self._shared_last = False
        self._closed = False
        self._closing = threading.Lock()  # no save queued behind the close
        self.counts = BatchCounts()
        self._thread = threading.Thread(target=self._run, name="group-commit", daemon=True)
        self._thread.start()

    def save(
        self,
        stored_events: list[StoredEvent],
        receipts: list[ReceiptRecord],
        on_saved: Callable[[], None],
    ) -> Future[list[int]]:
        """Queue a command's save; the future holds its notification ids, or the error."""
        pending = PendingSave(stored_events, receipts, on_saved)
        with self._closing:
            if self._closed:
                pending.answer.set_exception(CommitterClosed("the store is closing"))
            else:
                self._waiting.put(pending)
        return pending.answer

    def close(self) -> None:
        """Write what is queued, then stop; a save handed in after this is refused."""
        with self._closing:
            if not self._closed:
                self._closed = True
                self._waiting.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            batch = self._gather()
            if batch is None:
                return
            if not batch:
                continue  # every save gathered had been given up on first
            try:
                self._commit(batch)
            except BaseException as error:
                # The committer outlives any one batch: whoever is still waiting hears
                # of the error (it landed or not: a receipt tells a retry), the rest go on.
                for pending in batch:
                    if not pending.answer.done():
                        pending.answer.set_exception(error)

    def _gather(self) -> list[PendingSave] | None:
        first = self._waiting.get()
        if first is None:
            return None
        batch = [first] if first.taken() else []
        linger_until = time.monotonic() + (self._settings.wait_seconds if self._shared_last else 0)
        while len(batch) < self._settings.batch_max:
            timeout = linger_until - time.monotonic()
            try:
                pending = (
                    self._waiting.get(timeout=timeout)
                    if timeout > 0
                    else self._waiting.get_nowait()
                )
            except queue.Empty:
                break
            if pending is None:
                self._waiting.put(None)  # close once this batch is written
                break
            if pending.taken():
                batch.append(pending)
        self._shared_last = len(batch) > 1
        return batch

    def _commit(self, batch: list[PendingSave]) -> None:
        together, refused = _without_overlaps(batch)
        try:
            self._write(together)
        finally:
            for pending in refused:  # only now: a retry then sees what the batch saved
                self.counts.conflicts_in_batch += 1
                pending.answer.set_exception(
                    IntegrityError("another command of the same batch changed it first")
                )

    def _write(self, together: list[PendingSave]) -> None:
        stored = [event for pending in together for event in pending.stored_events]
        receipts = [receipt for pending in together for receipt in pending.receipts]
        try:
            ids = list(self._insert(stored, receipts) or [])
        except IntegrityError:
            self.counts.fallbacks += 1
            for pending in together:  # whose conflict was it? each alone says
                self._write_alone(pending)
            return
        except BaseException as error:
            for pending in together:
                pending.answer.set_exception(error)
            return
        self.counts.transactions += 1
        self.counts.saves += len(together)
        for pending in together:
            size = len(pending.stored_events)
            pending.saved(ids[:size])
            ids = ids[size:]

    def _write_alone(self, pending: PendingSave) -> None:
        try:
            ids = list(self._insert(pending.stored_events, pending.receipts) or [])
        except BaseException as error:
            pending.answer.set_exception(error)
            return
        self.counts.transactions += 1
        self.counts.saves += 1
        pending.saved(ids)


def _without_overlaps(batch: list[PendingSave]) -> tuple[list[PendingSave], list[PendingSave]]:
    """The saves that can go together, and the later ones of any two touching one
    aggregate (both were decided on the same version of it)."""
    seen: set[UUID | str] = set()
    together, refused = [], []
    for pending in batch:
        touched = pending.touched()
        if touched & seen:
            refused.append(pending)
        else:
            seen |= touched
            together.append(pending)
    return together, refused
