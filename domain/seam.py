"""The command seam: every command passes `CommandSeam.run`.

A command loads the aggregates it needs into a `Unit`, calls their methods and
returns a result. `run` then saves every aggregate the unit touched in one
atomic save, together with the command's receipt when it carries an
idempotency key. An optimistic-concurrency conflict (another command saved one
of those aggregates first) makes `run` start the command again from fresh
state, a bounded number of times, so a command is never lost and never
applied twice. Batching, retries and sharding belong here.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application, Repository
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, InterfaceError, OperationalError
from eventsourcing.utils import EnvType

from domain.baccarat.p2p import Lobby, Table, lobby_uuid
from domain.errors import (
    ConcurrencyExhausted,
    DomainError,
    IdempotencyKeyReused,
    UnknownPlayer,
    UnknownRound,
    UnknownTable,
)
from domain.ids import check_mode, check_player_id, player_uuid, receipt_uuid, wallet_uuid
from domain.player import Player
from domain.receipt import CommandReceipt
from domain.settings import GameSettings
from domain.wallet import Wallet

T = TypeVar("T")
A = TypeVar("A", bound=Aggregate)

ATTEMPTS_MAX = 12
BACK_OFF_SECONDS_FIRST = 0.001
BACK_OFF_SECONDS_MAX = 0.1


@dataclass(frozen=True)
class Receipt:
    """An idempotent request: its scoped key, the fingerprint of its body, and
    how to turn the command's result into the answer to remember."""

    key: str
    fingerprint: str
    render: Callable[[Any], dict[str, Any]]


@dataclass(frozen=True)
class Outcome(Generic[T]):
    result: T | None  # None when the answer was replayed from an earlier receipt
    answer: dict[str, Any] | None
    replayed: bool
    # The log position that includes the command: a read that waits for it sees the
    # command's effects (for a replay, the log's head then, which is later still).
    position: int = 0


@dataclass(frozen=True)
class Movement:
    """A deposit or withdrawal: the wallet after it, and the transaction's id."""

    wallet: Wallet
    transaction_id: str


class Unit:
    """What one attempt of a command loaded, created and changed."""

    def __init__(self, app: CommandSeam, repository: Repository[UUID] | None = None) -> None:
        self.games = app.games
        self._repository = repository or app.repository
        self._aggregates: dict[UUID, Aggregate] = {}
        self.loaded_versions: dict[UUID, int] = {}  # as read, before this command changed them

    def get(self, cls: type[A], aggregate_id: UUID, missing: Callable[[], DomainError]) -> A:
        aggregate = self.find(cls, aggregate_id)
        if aggregate is None:
            raise missing()
        return aggregate

    def find(self, cls: type[A], aggregate_id: UUID) -> A | None:
        if aggregate_id not in self._aggregates:
            try:
                loaded: Aggregate = self._repository.get(aggregate_id)
            except AggregateNotFoundError:
                return None
            self._aggregates[aggregate_id] = loaded
            self.loaded_versions[aggregate_id] = loaded.version
        aggregate = self._aggregates[aggregate_id]
        # Ids are public: one of another kind (a table id sent as a round id) is not found.
        return aggregate if isinstance(aggregate, cls) else None

    def add(self, aggregate: Aggregate) -> None:
        self._aggregates[aggregate.id] = aggregate

    def wallet(self, player_id: str, mode: str) -> Wallet:
        check_player_id(player_id)
        check_mode(mode)
        return self.get(Wallet, wallet_uuid(player_id, mode), lambda: _unknown(player_id))

    def player(self, player_id: str) -> Player:
        check_player_id(player_id)
        return self.get(Player, player_uuid(player_id), lambda: _unknown(player_id))

    def table(self, table_id: str) -> Table:
        missing = UnknownTable(f"no table {table_id[:80]} exists")
        try:
            aggregate_id = UUID(table_id)
        except ValueError:
            raise missing from None
        return self.get(Table, aggregate_id, lambda: missing)

    def lobby(self, mode: str, table_type: str) -> Lobby:
        """The lobby of a mode and table type, opened the first time it is needed."""
        lobby = self.find(Lobby, lobby_uuid(mode, table_type))
        if lobby is None:
            lobby = Lobby(mode, table_type)  # Two first-comers conflict; the seam retries one.
            self.add(lobby)
        return lobby

    def round(self, cls: type[A], round_id: str) -> A:
        try:
            aggregate_id = UUID(round_id)
        except ValueError:
            raise _unknown_round(round_id) from None
        aggregate = self.get(cls, aggregate_id, lambda: _unknown_round(round_id))
        if not getattr(aggregate, "IS_ROUND", False):
            raise _unknown_round(round_id)
        return aggregate

    def aggregates(self) -> list[Aggregate]:
        return list(self._aggregates.values())


class CommandSeam(Application[UUID]):
    name = "casino"
    is_snapshotting_enabled = True
    # Players gain two events per blackjack round left in play by its deal.
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {Wallet: 200, Player: 200}

    def __init__(self, env: EnvType | None = None, games: GameSettings | None = None) -> None:
        self.games = games or GameSettings()
        super().__init__(env)
        # Queries must see what other processes saved, so they read the store itself.
        # Commands use the cached repository: a stale cached aggregate fails the
        # optimistic-concurrency check, is forgotten, and reloaded.
        self.fresh = Repository(event_store=self.events, snapshot_store=self.snapshots)

    # The seam.

    def run(self, command: Callable[[Unit], T], receipt: Receipt | None = None) -> Outcome[T]:
        for attempt in range(ATTEMPTS_MAX):
            if receipt is not None:
                earlier = self._earlier_answer(receipt)
                if earlier is not None:
                    head = self.recorder.max_notification_id() or 0
                    return Outcome(result=None, answer=earlier, replayed=True, position=head)
            unit = Unit(self)
            try:
                result = command(unit)
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
                self._forget(aggregates)
                _back_off(attempt)
            except (OperationalError, InterfaceError):
                self._forget(aggregates)
                if receipt is None:
                    raise  # Without a receipt we cannot tell whether the save landed.
                _back_off(attempt)  # The receipt tells next time round whether it landed.
            else:
                position = max((r.notification.id for r in recordings), default=0)
                return Outcome(result=result, answer=answer, replayed=False, position=position)
        raise ConcurrencyExhausted(
            "the command kept conflicting with concurrent commands; nothing was applied, "
            "retry it with the same Idempotency-Key"
        )

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

    def _earlier_answer(self, receipt: Receipt) -> dict[str, Any] | None:
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

    def _take_snapshots(self, processing_event: Any) -> None:
        # Snapshots only speed up loading. Failing to write one must not make a
        # saved command look failed (the seam would then run it again).
        try:
            super()._take_snapshots(processing_event)
        except Exception:
            self.snapshot_failures = getattr(self, "snapshot_failures", 0) + 1


def check_postings_balance(aggregates: list[Aggregate]) -> None:
    """Pair assertion on the write path: every save's postings sum to zero per mode."""
    totals: dict[str, int] = {}
    for aggregate in aggregates:
        if not isinstance(aggregate, Wallet):
            continue
        for pending in aggregate.pending_events:
            for _account, cents in getattr(pending, "postings", ()):
                totals[aggregate.mode] = totals.get(aggregate.mode, 0) + cents
    if any(totals.values()):
        # Not an assert: this must hold even when Python runs with -O.
        raise UnbalancedPostings(f"a save's postings do not sum to zero per mode: {totals}")


class UnbalancedPostings(Exception):
    """Our bug, never a client's: a save would break double entry. Nothing is saved."""


def _unknown(player_id: str) -> UnknownPlayer:
    return UnknownPlayer(f"no player {player_id} is registered")


def _unknown_round(round_id: str) -> UnknownRound:
    return UnknownRound(f"no round {round_id[:80]} exists")


def new_id() -> str:
    # Drawn outside any event body: the id is stored in the event and replayed as is.
    return str(uuid.uuid4())


def _back_off(attempt: int) -> None:
    # Exponential, with full jitter so that racing commands do not collide again in step.
    ceiling = min(BACK_OFF_SECONDS_MAX, BACK_OFF_SECONDS_FIRST * 2**attempt)
    time.sleep(random.uniform(0, ceiling))
