"""The unit of work as the model sees it: what one attempt of a command loaded,
created and changed (a Protocol; the seam's is infra/commands/unit.py).

It knows no game. A command loads aggregates through it by id and kind, adds the
ones it creates, and the seam saves every one of them in one atomic save.
Finding a table, a lobby or a round by its public id belongs to the game that
owns it (`domain/baccarat/p2p.py`, `domain/rounds.py`, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, TypeVar
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.errors import DomainError

A = TypeVar("A", bound=Aggregate)


class SecretBox(Protocol):
    """Seals what must not be read from the database, and opens it again (rules.md 5:
    a round's seed and certification shoe). Infra gives the application one
    (`infra/secrets.py`), so the domain reads no key; `context` is public text the
    sealed one is bound to (a round's commitment), so it cannot be moved elsewhere."""

    def seal(self, clear: bytes, context: str) -> str: ...

    def open(self, sealed: str, context: str) -> bytes: ...

    def clear_allowed(self, aggregate_id: UUID) -> bool:
        """Whether a round not over may have its seed stored in clear: only one opened
        before the store sealed anything, when seeds were stored so (rules.md 5)."""
        ...


class MemoryBox:
    """The box of an application given none (tests on the in-memory store): what it
    seals stays in this process's memory and only a token is stored, so nothing can be
    read from the store; a store that outlives the process needs `infra/secrets.py`."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[bytes, str]] = {}

    def seal(self, clear: bytes, context: str) -> str:
        token = f"memory:{id(self)}:{len(self._kept)}"
        self._kept[token] = (clear, context)
        return token

    def open(self, sealed: str, context: str) -> bytes:
        clear, sealed_for = self._kept[sealed]
        assert sealed_for == context, "sealed for another context"
        return clear

    def clear_allowed(self, aggregate_id: UUID) -> bool:
        return True  # an in-memory store has no seals to tell old rounds by


class Unit(Protocol):
    """What a command loads, creates and changes in one attempt; the seam gives it one
    (infra/commands/unit.py) and saves everything it holds in one atomic save."""

    def get(self, cls: type[A], aggregate_id: UUID, missing: Callable[[], DomainError]) -> A:
        """The aggregate of that id and kind, or the refusal `missing` makes."""
        ...

    def find(self, cls: type[A], aggregate_id: UUID) -> A | None:
        """The aggregate of that id and kind, or None (one of another kind is not found)."""
        ...

    def held(self, aggregate_id: UUID) -> Aggregate | None:
        """The aggregate if this unit loaded or added it already, as it stands in it."""
        ...

    def read_ahead(self, aggregate_ids: Sequence[UUID]) -> None:
        """A hint: the command is about to find these (of kinds never snapshotted);
        where the store can, they are read in one round trip. Changes no answer."""
        ...

    def sealing(self) -> SecretBox:
        """The box a command seals a new round's secrets with."""
        ...

    def add(self, aggregate: Aggregate) -> None: ...

    def aggregates(self) -> list[Aggregate]: ...


# The unit of the command whose answer is being shaped (infra/commands/seam.py), if any.
_answering: ContextVar[Unit | None] = ContextVar("answering", default=None)


@contextmanager
def answering(unit: Unit) -> Iterator[None]:
    """While a command's answer is shaped: an answer that shows another aggregate than
    the command's result (a table's coup in play) asks `answering_unit` whether the
    command holds it, so it shows it as this command left it, not as the store had it
    before."""
    token = _answering.set(unit)
    try:
        yield
    finally:
        _answering.reset(token)


def answering_unit() -> Unit | None:
    return _answering.get()


def parse_public_id(text: str, missing: Callable[[], DomainError]) -> UUID:
    """A server-issued id (a round's, a table's) from a path or body, or the refusal."""
    try:
        return UUID(text)
    except ValueError:
        raise missing() from None
