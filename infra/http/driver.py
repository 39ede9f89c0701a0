"""Command routes' driver: a command runs in a worker thread, to its end.

One path for every command (issue 38): the route awaits the application's blocking
command, run in a worker thread of the server's pool, as FastAPI runs any sync
route. The command's attempts (retries, receipts, the group commit's shared save)
are the seam's (domain/seam.py); here only the hand-off to the thread.

A caller that goes away while the command runs cancels the route's coroutine,
never the command: the thread goes on to its end (anyio waits for a thread it
runs), so a command that was started lands once or not at all, as it would had
the caller stayed.
"""

from __future__ import annotations

from typing import Any, ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool

from domain.commands import BoundCommand
from domain.outcome import Outcome, Receipt

T = TypeVar("T")
P = ParamSpec("P")


async def run_command(
    bound: BoundCommand[Any, P, T], receipt: Receipt[T], *args: P.args, **kwargs: P.kwargs
) -> Outcome[T]:
    """The command's outcome, once per receipt's key, as `bound.with_receipt` gives it."""
    return await run_in_threadpool(bound.with_receipt, receipt, *args, **kwargs)
