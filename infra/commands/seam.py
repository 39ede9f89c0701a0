"""The command seam: every command of the application passes `CommandSeam.run`.

The seam is an object of its own beside the application: the store builds it,
`CommandSeam(app)`, and it hands itself over as `app.commands` (domain/commands.py:
`Commands`, what the domain needs of it); tests build both with
`infra.commands.with_commands`.

An application method marked `@command` takes a fresh `Unit`, loads what it
needs, calls one step of its game and returns a result. The seam then saves
every aggregate the unit touched in one atomic save, together with the command's
receipt when it carries an idempotency key. An optimistic-concurrency conflict
(another command saved one of those aggregates first) makes the seam run the
method again on fresh state, a bounded number of times, so a command is never
lost and never applied twice. Retries, batching and sharding belong here.

    app.deposit("alice", "real", 1_000)                 # an Outcome[Movement]
    app.deposit.with_receipt(receipt, "alice", "real", 1_000)  # answered once per key
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar, cast
from uuid import UUID

from eventsourcing.application import ProcessingEvent
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import (
    IntegrityError,
    InterfaceError,
    OperationalError,
)

from domain.errors import (
    ConcurrencyExhausted,
    DomainError,
)
from domain.outcome import Outcome, Receipt
from domain.queries import CasinoQueries
from domain.unit import MemoryBox, SecretBox, answering
from domain.wallet import check_postings_balance
from infra.commands.cache import cache_saved, forget
from infra.commands.fresh_reads import FreshReads
from infra.commands.observer import CommandObserver, Unobserved
from infra.commands.receipt import ReceiptRecord
from infra.commands.receipt_answers import ReceiptAnswers, ReceiptsTable
from infra.commands.save import Committer, Save, insert_of
from infra.commands.unit import Unit, project

T = TypeVar("T")
P = ParamSpec("P")
S = TypeVar("S", bound="CommandSeam")
Sleep = Callable[[float], None]

# Commands on one aggregate are saved one after another, one a batch: the last of n at
# once waits out n - 1 commits, each a try. 12 tries ran out under 32 deposits to one
# wallet from 8 threads on a busy 2-core machine (tests/infra/store/test_receipt_races.py,
# about one run in two); 24, backing off up to 0.1 s, span over a second of commits.
ATTEMPTS_MAX = 24
BACK_OFF_SECONDS_FIRST = 0.001
BACK_OFF_SECONDS_MAX = 0.1
RECEIPT_RETENTION_DAYS = 90  # CASINO_RECEIPT_RETENTION_DAYS's default
RECEIPT_RETENTION_DAYS_MAX = 3650


class Attempt:
    """A command's attempts, as the seam counts them: how many so far, why the next
    runs (the retry's reason, for the metrics), whether to look the key's receipt up
    first, and the outcome told to the observer once."""

    def __init__(self, observer: CommandObserver, name: str, look_first: bool) -> None:
        self.observer = observer
        self.name = name
        self.look_first = look_first
        self.reason = "stale"
        self.number = -1

    def next(self) -> bool:
        """Go on to the next attempt: True, or ConcurrencyExhausted past the last."""
        self.number += 1
        if self.number >= ATTEMPTS_MAX:
            raise ConcurrencyExhausted(
                "the command kept conflicting with concurrent commands; nothing was "
                "applied, retry it with the same Idempotency-Key"
            )
        if self.number:
            self.observer.retried(self.name, self.reason)
        self.reason = "stale"
        return True

    def done(self, outcome: Outcome[T]) -> Outcome[T]:
        self.observer.finished(self.name, "replayed" if outcome.replayed else "applied")
        return outcome

    @contextmanager
    def told(self) -> Iterator[None]:
        """The command's failure told to the observer, by kind, as it passes."""
        try:
            yield
        except ConcurrencyExhausted:
            self.observer.finished(self.name, "exhausted")
            raise
        except DomainError:
            self.observer.finished(self.name, "refused")
            raise
        except Exception:
            self.observer.finished(self.name, "failed")
            raise


class CommandSeam(ReceiptAnswers):
    """Runs an application's commands: `app.commands` (domain/commands.py: `Commands`)."""

    # Whether the store's seals cover an event (aggregate id, version); set by the
    # store when it seals (infra/store/sealed_reads.py). A receipt is an answer given
    # without running the command, so one no seal covers is never replayed.
    sealed: Callable[[UUID, int], bool] | None = None
    # How long a receipt answers a repeated key; after that the key is refused (422
    # idempotency_key_expired), never run again. Infra sets CASINO_RECEIPT_RETENTION_DAYS.
    receipt_retention_days: int = RECEIPT_RETENTION_DAYS

    def __init__(
        self, app: CasinoQueries, sleep: Sleep | None = None, box: SecretBox | None = None
    ) -> None:
        self.app = app
        # Seals a round's seed before it is stored (rules.md 5); infra passes one keyed
        # by CASINO_SECRET_KEY (infra/secrets.py).
        self.box: SecretBox = box or MemoryBox()
        self._sleep = sleep or time.sleep  # Between retries; tests may pass one that does not.
        # A store that keeps receipts in a table of their own (infra/store/receipts.py)
        # takes them beside the events; else they are events (infra/commands/receipt.py).
        recorder = app.recorder
        self._table = recorder if isinstance(recorder, ReceiptsTable) else None
        self.snapshot_failures = 0
        self.observer: CommandObserver = Unobserved()
        # Queries must see what other processes saved: what they keep is brought up to
        # date with the store on every read (infra/commands/fresh_reads.py). Commands use
        # the cached repository: a stale cached aggregate fails the optimistic-concurrency
        # check, is forgotten, and reloaded.
        self.fresh = FreshReads(app.events, app.snapshots)
        # Gathers concurrent commands' saves into shared transactions, when the store
        # hands one over (infra/store/group_commit.py); else each save is inserted at once.
        self._committer: Committer | None = None
        app.commands = self

    def observe(self, observer: CommandObserver) -> None:
        """Tell `observer` of every command's outcome, retry and save from now on."""
        self.observer = observer

    def reading(self, together: Sequence[UUID] = ()) -> Unit:
        """A unit for queries: it reads the store, never the commands' cache; those of
        `together` it keeps are brought up to date in one query where the store can."""
        return Unit(self.fresh.together(together) if together else self.fresh, None)

    def kept(self, aggregate_id: UUID) -> Aggregate | None:
        """The aggregate as queries last read it, perhaps behind the store: no query."""
        return self.fresh.kept(aggregate_id)

    def commit_through(self, committer: Committer) -> None:
        """Hand every save to `committer` from now on (the store's group commit)."""
        self._committer = committer

    def close(self) -> None:
        """Stop the committer, if there is one (the application closes the store)."""
        if self._committer is not None:
            self._committer.close()
            self._committer = None

    def run(
        self,
        command: Callable[..., T],
        receipt: Receipt[T] | None = None,
        name: str = "command",
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Outcome[T]:
        """Run `command(unit, *args, **kwargs)` to its end in this thread, once per receipt's key:
        decide on what the cache and the store hold, then save; again on fresh state
        after a conflict, a lost connection (with a receipt to tell whether the save
        landed) or a decision taken on a stale read. The one function between a
        command's driver and its application method (infra/http/idempotency.py:
        `Command.run` hands it to a worker thread).

        A store that keeps receipts in a table of their own (one receipt per key,
        whichever kind: infra/store/receipts.py) is asked for a key's receipt only where
        a repeat would else be saved, refused or run again: after a failed save or a
        refusal, before a save of no event or a decision again. Others are asked first."""
        attempt = Attempt(self.observer, name, look_first=not self._keeps_receipts)
        kwargs = kwargs or {}
        with attempt.told():
            while attempt.next():
                if attempt.look_first and (replay := self._replay(receipt)):
                    return attempt.done(replay)
                unit = Unit(self.app.repository, self.box)
                try:
                    result = command(unit, *args, **kwargs)
                    self.app.before_save(unit)
                except Exception:
                    if (replay := self._refused(unit, receipt, attempt)) is not None:
                        return attempt.done(replay)
                    continue  # stale: decide again
                if (outcome := self._saved(unit, result, receipt, attempt)) is not None:
                    return attempt.done(outcome)
        raise AssertionError("unreachable: an attempt ends in an outcome or an error")

    def _refused(
        self, unit: Unit, receipt: Receipt[T] | None, attempt: Attempt
    ) -> Outcome[T] | None:
        """After the command raised: the first answer of a repeat, or None to decide
        again (it read a cached aggregate another process has moved on), or the error
        raised again (called in the `except` block that caught it)."""
        # A refusal (or a broken invariant) reached from a cached aggregate that
        # another process has moved on is no answer: decide again on fresh state.
        stale = self._stale(unit, unit.aggregates())
        if not attempt.look_first and (replay := self._replay(receipt)):
            return replay  # The first answer, not a refusal (or a retry) by today's.
        if stale:
            return None
        raise

    def _saved(
        self, unit: Unit, result: T, receipt: Receipt[T] | None, attempt: Attempt
    ) -> Outcome[T] | None:
        """Save what the command decided, with its receipt: its outcome, the first
        answer of a repeat, or None to try again (`attempt.reason` says why)."""
        answer = None
        if receipt is not None:
            with answering(unit):
                answer = receipt.render(result)
        aggregates = unit.aggregates()
        records = self._receipts(receipt, answer, aggregates)
        # A decision on an aggregate only read (the save will not check it) is taken
        # again; first, a repeat about to run again, or with no row to fail on its key.
        # One whose later events can only widen what a command may do (a game session's
        # life only lengthens: `WIDENS_ONLY`) cannot have made a decision that went
        # through wrong, and a refusal is decided again anyway (`_refused`).
        read = [a for a in aggregates if not a.pending_events and not _widens_only(a)]
        stale = self._stale(unit, read)
        if (stale or not records) and not attempt.look_first and (replay := self._replay(receipt)):
            return replay
        if stale:
            return None
        check_postings_balance(aggregates)
        save = self._prepared(aggregates, records)
        try:
            ids = self.submit(save).result()
        except Exception as error:
            return self._not_saved(error, aggregates, receipt, attempt)
        self.snapshot(self._due_snapshots(save.processing))
        self.observer.saved(len(ids))
        return Outcome(result=result, answer=answer, replayed=False, position=max(ids, default=0))

    def _not_saved(
        self,
        error: Exception,
        aggregates: list[Aggregate],
        receipt: Receipt[T] | None,
        attempt: Attempt,
    ) -> Outcome[T] | None:
        """After a failed save: the first answer when it failed on its key, or None to
        try again (after a conflict, or a lost connection with a receipt that will tell
        whether it landed), or the error raised again (called in the `except` block)."""
        if isinstance(error, IntegrityError):
            forget(self.app.repository, aggregates)
            if replay := self._replay(receipt):
                return replay  # The save failed on the key: a repeated request.
            attempt.reason = "conflict"  # Another command saved first: again, on fresh state.
        elif isinstance(error, OperationalError | InterfaceError):
            forget(self.app.repository, aggregates)
            if receipt is None:
                raise  # Without a receipt we cannot tell whether the save landed.
            attempt.reason = "connection"
            attempt.look_first = True  # The receipt tells next time round whether it landed.
        else:
            # A store that refuses the save (a tampered log) says nothing of the key:
            # a repeat is still answered, and a forged receipt refused, as such.
            if replay := self._replay(receipt):
                return replay
            raise
        self._sleep(self._back_off_seconds(attempt.number))
        return None

    def _prepared(self, aggregates: list[Aggregate], receipts: list[ReceiptRecord]) -> Save:
        """The aggregates' new events, stored as the store will keep them (mapped in the
        command's own thread, not the committer's), and the command's receipts."""
        processing: ProcessingEvent[UUID] = ProcessingEvent()
        # As the library's collect_events, without its isinstance checks against typing
        # Protocols: they were a twentieth of a P2P command's time (py-spy), and every
        # one here is an Aggregate.
        for aggregate in aggregates:
            processing.events += aggregate.collect_events()
            processing.aggregates[aggregate.id] = aggregate
        stored = [self.app.mapper.to_stored_event(event) for event in processing.events]
        return Save(processing, stored, receipts)

    def submit(self, save: Save) -> Future[list[int]]:
        """Insert a save's events: through the group commit when it is on, else now."""
        if self._committer is not None:
            return self._committer.save(
                save.stored,
                save.receipts,
                lambda: cache_saved(self.app.repository, save.processing.aggregates),
            )
        done: Future[list[int]] = Future()
        try:
            ids = list(insert_of(self.app.recorder)(save.stored, save.receipts) or [])
        except Exception as error:
            done.set_exception(error)
        else:
            cache_saved(self.app.repository, save.processing.aggregates)
            done.set_result(ids)
        return done

    def _stale(self, unit: Unit, aggregates: list[Aggregate]) -> bool:
        """`_forget_stale` where the unit read any of the aggregates."""
        loaded = [a for a in aggregates if a.id in unit.loaded_versions]
        return bool(loaded) and self._forget_stale(unit, loaded)

    def _forget_stale(self, unit: Unit, aggregates: list[Aggregate]) -> bool:
        """Forget those of the aggregates the unit loaded whose stored stream has moved
        past the version it read; say whether there were any.

        Aggregates the command changes need no look before saving: the store's
        (id, version) key refuses a stale one then.
        """
        stale = [
            aggregate
            for aggregate in aggregates
            if aggregate.id in unit.loaded_versions
            and self.app.recorder.select_events(
                aggregate.id, gt=unit.loaded_versions[aggregate.id], limit=1
            )
        ]
        forget(self.app.repository, stale)
        return bool(stale)

    def _back_off_seconds(self, attempt: int) -> float:
        # Exponential, with full jitter so that racing commands do not collide again in step.
        ceiling = min(BACK_OFF_SECONDS_MAX, BACK_OFF_SECONDS_FIRST * 2**attempt)
        return random.uniform(0, ceiling)

    def _due_snapshots(self, processing: ProcessingEvent[UUID]) -> list[Aggregate]:
        """The saved aggregates whose events crossed their kind's snapshot interval."""
        due: dict[UUID, Aggregate] = {}
        for event in processing.events:
            aggregate = processing.aggregates.get(event.originator_id)
            interval = self.app.snapshotting_intervals.get(type(aggregate))
            if interval and event.originator_version % interval == 0:
                due[event.originator_id] = cast(Aggregate, aggregate)
        return list(due.values())

    def snapshot(self, aggregates: list[Aggregate]) -> None:
        """Snapshot each aggregate as the save left it. The library reads it back from
        the store to the interval's version first; the saved one is that state or a
        later one, so it is taken as it is: no read, no replay. Except one holding
        secrets opened in memory (a round's seed, rules.md 5), which is read back as
        stored, sealed."""
        # Snapshots only speed up loading. Failing to write one must not make a
        # saved command look failed (the seam would then run it again).
        app = self.app
        try:
            assert app.snapshots is not None
            for aggregate in aggregates:
                if hasattr(aggregate, "unseal"):
                    app.take_snapshot(aggregate.id, aggregate.version, projector_func=project)
                    continue
                kind = getattr(type(aggregate), "Snapshot", app.snapshot_class)
                assert kind is not None
                app.snapshots.put([kind.take(aggregate)])
        except Exception:
            self.snapshot_failures += 1
            self.observer.snapshot_failed()


def _widens_only(aggregate: Aggregate) -> bool:
    return bool(getattr(type(aggregate), "WIDENS_ONLY", False))
