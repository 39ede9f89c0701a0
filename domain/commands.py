"""`@command`: an application method taking a unit first, made a command that runs
through the application's `commands` (infra/commands/seam.py: `CommandSeam.run`).

    @command
    def deposit(self, unit: Unit, player_id: str, mode: str, cents: int) -> Movement: ...

    app.deposit("alice", "real", 1_000)                        # an Outcome[Movement]
    app.deposit.with_receipt(receipt, "alice", "real", 1_000)  # answered once per key

`Commands` names what the domain needs of the machinery that runs its commands
(retries, receipts, one atomic save) and gives its queries what the store holds;
the store builds it beside the application and hands it over as `app.commands`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain.outcome import Outcome, Receipt
from domain.unit import Unit

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")


class Commands(Protocol):
    """The application's way to run its commands and to read the store."""

    def run(
        self,
        command: Callable[..., R],
        receipt: Receipt[R] | None = None,
        name: str = "command",
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Outcome[R]:
        """`command(unit, *args, **kwargs)` run to its end, saved, once per receipt's key."""
        ...

    def reading(self, together: Sequence[UUID] = ()) -> Unit:
        """A unit for queries: what the store holds now, never the commands' cache;
        the aggregates `together` names brought up to date at once where it can."""
        ...

    def kept(self, aggregate_id: UUID) -> Aggregate | None:
        """The aggregate as queries last read it, perhaps behind the store: no query."""
        ...

    def close(self) -> None: ...


class Commanded(Protocol):
    """An application whose commands run through `commands`."""

    commands: Commands


S = TypeVar("S", bound=Commanded)


class BoundCommand(Generic[S, P, T]):
    """An application's command, ready to run through its `commands`."""

    def __init__(self, app: S, method: Callable[Concatenate[S, Unit, P], T]) -> None:
        self._app = app
        self._method = method
        self.__doc__ = method.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Outcome[T]:
        return self._app.commands.run(self.method, None, self.name, args, kwargs)

    def with_receipt(self, receipt: Receipt[T], *args: P.args, **kwargs: P.kwargs) -> Outcome[T]:
        """Run once per idempotency key: a repeat gets the first answer, changing nothing."""
        return self._app.commands.run(self.method, receipt, self.name, args, kwargs)

    @property
    def method(self) -> Callable[..., T]:
        """The application's method, bound: what the seam calls with a unit first."""
        return partial(self._method, self._app)

    @property
    def app(self) -> S:
        return self._app

    @property
    def name(self) -> str:
        return self._method.__name__


class CommandMethod(Generic[S, P, T]):
    """What `@command` makes of an application method taking a unit first."""

    def __init__(self, method: Callable[Concatenate[S, Unit, P], T]) -> None:
        self._method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, app: None, owner: type[Any]) -> CommandMethod[S, P, T]: ...

    @overload
    def __get__(self, app: S, owner: type[Any]) -> BoundCommand[S, P, T]: ...

    def __get__(
        self, app: S | None, owner: type[Any]
    ) -> CommandMethod[S, P, T] | BoundCommand[S, P, T]:
        if app is None:
            return self
        return BoundCommand(app, self._method)


def command(method: Callable[Concatenate[S, Unit, P], T]) -> CommandMethod[S, P, T]:
    """Mark an application method as a command: its `commands` give it a fresh unit,
    save what it touched in one atomic save, and run it again after a conflict."""
    return CommandMethod(method)
