"""The command seam: every command of the application passes `CommandSeam.run`.

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

import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload
from uuid import UUID

from eventsourcing.application import Application, Repository
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, InterfaceError, OperationalError
from eventsourcing.utils import EnvType

from domain.errors import ConcurrencyExhausted, DomainError, IdempotencyKeyReused
from domain.ids import receipt_uuid
from domain.player import Player
from domain.receipt import CommandReceipt
from domain.unit import Unit
from domain.wallet import Wallet, check_postings_balance

T = TypeVar("T")
P = ParamSpec("P")
S = TypeVar("S", bound="CommandSeam")
Sleep = Callable[[float], None]

ATTEMPTS_MAX = 12
BACK_OFF_SECONDS_FIRST = 0.001
BACK_OFF_SECONDS_MAX = 0.1


class CommandObserver(Protocol):
    """Told what the seam does, for metrics; infra passes one in (`CommandSeam.observe`),
    so the domain counts nothing itself and imports no metrics library."""

    def finished(self, command: str, outcome: str) -> None:
        """A command ended: `applied`, `replayed`, `refused` (a domain error),
        `exhausted` (lost every optimistic-concurrency race) or `failed`."""
        ...

    def retried(self, command: str, reason: str) -> None:
        """A command runs again: `conflict` (another command saved first), `stale`
        (it decided on a cached aggregate that had moved on) or `connection`."""
        ...

    def saved(self, events: int) -> None:
        """One atomic save wrote this many events (the receipt included)."""
        ...

    def snapshot_failed(self) -> None: ...


class _Unobserved:
    def finished(self, command: str, outcome: str) -> None:
        pass

    def retried(self, command: str, reason: str) -> None:
        pass

    def saved(self, events: int) -> None:
        pass

    def snapshot_failed(self) -> None:
        pass


@dataclass(frozen=True)
class Receipt(Generic[T]):
    """An idempotent request: its scoped key, the fingerprint of its body, and how to
    turn the command's result into the answer's body to remember."""

    key: str
    fingerprint: str
    render: Callable[[T], dict[str, Any]]


@dataclass(frozen=True)
class Outcome(Generic[T]):
    result: T | None  # None when the answer was replayed from an earlier receipt
    answer: dict[str, Any] | None  # the body the receipt remembers, if there is one
    replayed: bool
    # The log position that includes the command: a read that waits for it sees the
    # command's effects (for a replay, the log's head then, which is later still).
    position: int = 0


class CommandSeam(Application[UUID]):
    name = "casino"
    is_snapshotting_enabled = True
    # Players gain two events per blackjack round left in play by its deal. Every
    # long-lived aggregate is snapshotted so that loading it costs the same however
    # old it is; the application adds its games' (domain/application.py).
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {Wallet: 200, Player: 200}

    def __init__(self, env: EnvType | None = None, sleep: Sleep | None = None) -> None:
        super().__init__(env)
        self._sleep = sleep or time.sleep  # Between retries; tests may pass one that does not.
        self.snapshot_failures = 0
        self.observer: CommandObserver = _Unobserved()
        # Queries must see what other processes saved, so they read the store itself.
        # Commands use the cached repository: a stale cached aggregate fails the
        # optimistic-concurrency check, is forgotten, and reloaded.
        self.fresh = Repository(event_store=self.events, snapshot_store=self.snapshots)

    def observe(self, observer: CommandObserver) -> None:
        """Tell `observer` of every command's outcome, retry and save from now on."""
        self.observer = observer

    def reading(self) -> Unit:
        """A unit for queries: it reads the store, never the commands' cache."""
        return Unit(self.fresh)

    def run(
        self,
        command: Callable[[Unit], T],
        receipt: Receipt[T] | None = None,
        name: str = "command",
    ) -> Outcome[T]:
        try:
            outcome = self._run(command, receipt, name)
        except ConcurrencyExhausted:
            self.observer.finished(name, "exhausted")
            raise
        except DomainError:
            self.observer.finished(name, "refused")
            raise
        except Exception:
            self.observer.finished(name, "failed")
            raise
        self.observer.finished(name, "replayed" if outcome.replayed else "applied")
        return outcome

    def _run(
        self, command: Callable[[Unit], T], receipt: Receipt[T] | None, name: str
    ) -> Outcome[T]:
        reason = "stale"  # why the attempt after this one runs, should there be one
        for attempt in range(ATTEMPTS_MAX):
            if attempt:
                self.observer.retried(name, reason)
            if receipt is not None:
                earlier = self._earlier_answer(receipt)
                if earlier is not None:
                    head = self.recorder.max_notification_id() or 0
                    return Outcome(result=None, answer=earlier, replayed=True, position=head)
            unit = Unit(self.repository)
            reason = "stale"
            try:
                result = command(unit)
                self.before_save(unit)
            except Exception:
                # A refusal (or a broken invariant) reached from a cached aggregate that
                # another process has moved on is no answer: decide again on fresh state.
                if self._forget_stale(unit, unit.aggregates()):
                    continue
                raise
            answer = receipt.render(result) if receipt is not None else None
            aggregates = unit.aggregates()
            if receipt is not None and answer is not None:
                aggregates.append(CommandReceipt(receipt.key, receipt.fingerprint, answer))
            check_postings_balance(aggregates)
            # A decision taken on an aggregate only read: the save will not check that one.
            if self._forget_stale(unit, [a for a in aggregates if not a.pending_events]):
                continue
            try:
                recordings = self.save(*aggregates)
            except IntegrityError:
                # Another command saved first: start again from fresh state.
                reason = "conflict"
                self._forget(aggregates)
                self._back_off(attempt)
            except (OperationalError, InterfaceError):
                reason = "connection"
                self._forget(aggregates)
                if receipt is None:
                    raise  # Without a receipt we cannot tell whether the save landed.
                self._back_off(attempt)  # The receipt tells next time round whether it landed.
            else:
                self.observer.saved(len(recordings))
                position = max((r.notification.id for r in recordings), default=0)
                return Outcome(result=result, answer=answer, replayed=False, position=position)
        raise ConcurrencyExhausted(
            "the command kept conflicting with concurrent commands; nothing was applied, "
            "retry it with the same Idempotency-Key"
        )

    def before_save(self, unit: Unit) -> None:
        """The last look at what a command is about to save; it may refuse it (a domain
        error) or add to it. The application guards player protection here."""

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
            and self.recorder.select_events(
                aggregate.id, gt=unit.loaded_versions[aggregate.id], limit=1
            )
        ]
        self._forget(stale)
        return bool(stale)

    def _forget(self, aggregates: list[Aggregate]) -> None:
        if self.repository.cache is not None:
            for aggregate in aggregates:
                with contextlib.suppress(KeyError):
                    self.repository.cache.get(aggregate.id, evict=True)

    def _earlier_answer(self, receipt: Receipt[Any]) -> dict[str, Any] | None:
        # A receipt is one event, never snapshotted: read it straight from the event
        # store, one query, rather than through the repository (snapshots, then events).
        found: list[Any] = list(self.events.get(receipt_uuid(receipt.key), limit=1))
        if not found:
            return None
        stored = found[0]
        assert isinstance(stored, CommandReceipt.Created)
        if stored.fingerprint != receipt.fingerprint:
            raise IdempotencyKeyReused(
                "this Idempotency-Key was already used with a different request"
            )
        return stored.answer

    def _back_off(self, attempt: int) -> None:
        # Exponential, with full jitter so that racing commands do not collide again in step.
        ceiling = min(BACK_OFF_SECONDS_MAX, BACK_OFF_SECONDS_FIRST * 2**attempt)
        self._sleep(random.uniform(0, ceiling))

    def _take_snapshots(self, processing_event: Any) -> None:
        # Snapshots only speed up loading. Failing to write one must not make a
        # saved command look failed (the seam would then run it again).
        try:
            super()._take_snapshots(processing_event)
        except Exception:
            self.snapshot_failures += 1
            self.observer.snapshot_failed()


class BoundCommand(Generic[S, P, T]):
    """An application's command, ready to run through its seam."""

    def __init__(self, seam: S, method: Callable[Concatenate[S, Unit, P], T]) -> None:
        self._seam = seam
        self._method = method
        self.__doc__ = method.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Outcome[T]:
        return self._seam.run(
            lambda unit: self._method(self._seam, unit, *args, **kwargs), name=self.name
        )

    def with_receipt(self, receipt: Receipt[T], *args: P.args, **kwargs: P.kwargs) -> Outcome[T]:
        """Run once per idempotency key: a repeat gets the first answer, changing nothing."""
        return self._seam.run(
            lambda unit: self._method(self._seam, unit, *args, **kwargs), receipt, self.name
        )

    @property
    def name(self) -> str:
        return self._method.__name__


class CommandMethod(Generic[S, P, T]):
    """What `@command` makes of an application method taking a unit first."""

    def __init__(self, method: Callable[Concatenate[S, Unit, P], T]) -> None:
        self._method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, seam: None, owner: type[Any]) -> CommandMethod[S, P, T]: ...

    @overload
    def __get__(self, seam: S, owner: type[Any]) -> BoundCommand[S, P, T]: ...

    def __get__(
        self, seam: S | None, owner: type[Any]
    ) -> CommandMethod[S, P, T] | BoundCommand[S, P, T]:
        if seam is None:
            return self
        return BoundCommand(seam, self._method)


def command(method: Callable[Concatenate[S, Unit, P], T]) -> CommandMethod[S, P, T]:
    """Mark an application method as a command: the seam gives it a fresh unit, saves
    what it touched in one atomic save, and runs it again after a conflict."""
    return CommandMethod(method)
