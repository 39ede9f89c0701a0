"""What a command gives and gets at the seam (`domain/seam.py`): the receipt that makes it
idempotent, the outcome it returns, and the observer told of what the seam does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")


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
        """One atomic save wrote this many events (its receipt is not one of them)."""
        ...

    def snapshot_failed(self) -> None: ...


class Unobserved:
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
