"""`@command`: an application method taking a unit first, made a command that runs
through the seam (domain/seam.py: `CommandSeam.run`).

    @command
    def deposit(self, unit: Unit, player_id: str, mode: str, cents: int) -> Movement: ...

    app.deposit("alice", "real", 1_000)                        # an Outcome[Movement]
    app.deposit.with_receipt(receipt, "alice", "real", 1_000)  # answered once per key
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from domain.outcome import Outcome, Receipt
from domain.seam import CommandSeam
from domain.unit import Unit

T = TypeVar("T")
P = ParamSpec("P")
S = TypeVar("S", bound=CommandSeam)


class BoundCommand(Generic[S, P, T]):
    """An application's command, ready to run through its seam."""

    def __init__(self, seam: S, method: Callable[Concatenate[S, Unit, P], T]) -> None:
        self._seam = seam
        self._method = method
        self.__doc__ = method.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Outcome[T]:
        return self._seam.run(self.method, None, self.name, args, kwargs)

    def with_receipt(self, receipt: Receipt[T], *args: P.args, **kwargs: P.kwargs) -> Outcome[T]:
        """Run once per idempotency key: a repeat gets the first answer, changing nothing."""
        return self._seam.run(self.method, receipt, self.name, args, kwargs)

    @property
    def method(self) -> Callable[..., T]:
        """The application's method, bound: what the seam calls with a unit first."""
        return partial(self._method, self._seam)

    @property
    def seam(self) -> S:
        return self._seam

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
