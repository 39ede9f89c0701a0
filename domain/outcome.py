"""What a command gives and gets at the seam (`infra/commands/seam.py`): the receipt that
makes it idempotent and the outcome it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Receipt(Generic[T]):
    """An idempotent request: its scoped key, the fingerprint of its body, and how to
    turn the command's result into the answer's body to remember."""

    key: str
    fingerprint: str
    render: Callable[[T], dict[str, Any]]
    # The refusal of the key used again for another request: None, the Idempotency-Key's
    # (422 idempotency_key_reused); a provider's transaction id has its own (rules.md 10).
    reused: Callable[[], Exception] | None = None
    # Fields of the answer that are credentials (a game session's token): the receipt
    # keeps them sealed with the service's secret box, so that the database does not
    # hold them in clear (rules.md 5); a repeat is answered with them opened.
    sealed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome(Generic[T]):
    result: T | None  # None when the answer was replayed from an earlier receipt
    answer: dict[str, Any] | None  # the body the receipt remembers, if there is one
    replayed: bool
    # The log position that includes the command: a read that waits for it sees the
    # command's effects (for a replay, the log's head then, which is later still).
    position: int = 0
