"""Command routes' driver: a command runs on the event loop, awaiting its save.

A command's attempts (domain/seam.py: `CommandSeam.steps`) decide with what the
commands' cache holds and yield their save. Here each step runs on the event loop,
inside `never_waiting` (infra/store/no_wait.py), and the save is handed to the group
commit and awaited: no worker thread, and no thread-pool hop, for a command that
only waits on its save. Measured with `make bench` (benchmarks/bench_load.py) on
PostgreSQL at 16 clients, the hop and its thread were a fifth of a deposit's CPU.

A command that would wait on the store before its first save to load what the
cache lacks is stopped there, before it sends anything, and run again from the start
in a worker thread by the seam's blocking `run`, exactly as a sync route would have
run it: nothing it decided was saved or counted. What the attempts look up once they
have decided (is what they only read stale? has the key a receipt? `Look`) is read
in a worker thread and sent back to them here: a refusal is decided once.

After a failed save (a conflict, a lost connection) its attempts go on in
a worker thread from that failure (`CommandSeam.drive`), as they would have there:
looking the receipt up, retrying. After a save has landed nothing is started over
(a command without a receipt could be applied twice): the steps after it run on the
loop, and a snapshot it made due is written in a worker thread.

A caller that goes away while the save is awaited (a disconnect where the server
cancels the request, a shutdown that cancels what is in flight) cancels the route's
coroutine, never the save: it is the committer's (cancelling its future would leave
the committer answering a cancelled future, and every command after it unanswered).
The attempts go on in a worker thread from that save, to their end, as a sync route's
thread would have gone on.

Without group commit a save is the store's own blocking call, so the whole command
runs in a worker thread.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import Any, ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool

from domain.commands import BoundCommand
from domain.outcome import Outcome, Receipt
from domain.seam import CommandSeam
from domain.seam_steps import Look, Pause, Save, Snapshots, Steps
from infra.logs import get_logger
from infra.store.no_wait import WouldWait, never_waiting

T = TypeVar("T")
P = ParamSpec("P")
Step = Save | Pause | Snapshots | Look
log = get_logger("casino.http")


async def run_command(
    bound: BoundCommand[Any, P, T], receipt: Receipt[T], *args: P.args, **kwargs: P.kwargs
) -> Outcome[T]:
    """The command's outcome, once per receipt's key, as `bound.with_receipt` gives it."""
    if bound.seam.group_commit is not None:
        try:
            return await _on_the_loop(bound.seam, bound.steps(receipt, *args, **kwargs))
        except WouldWait:
            pass  # It needs the store before its save: the nothing it did, done again.
    return await run_in_threadpool(bound.with_receipt, receipt, *args, **kwargs)


async def _on_the_loop(seam: CommandSeam, steps: Steps[T]) -> Outcome[T]:
    with never_waiting():
        step = _next(steps, None)
    while not isinstance(step, Outcome):
        if isinstance(step, Save):
            saving = seam.submit(step)
            waiting = asyncio.wrap_future(saving)
            try:
                ids = await asyncio.shield(waiting)
            except asyncio.CancelledError:
                # Its failure, if any, is the finishing thread's to handle, not asyncio's
                # to log as never retrieved.
                waiting.add_done_callback(lambda done: done.cancelled() or done.exception())
                _finish_elsewhere(seam, steps, saving)
                raise
            except Exception as error:
                # What a failed save leads to (a receipt to look up, a retry) waits on
                # the store: the same attempts go on in a worker thread from there.
                return await run_in_threadpool(seam.drive, steps, error)
            step = _next(steps, ids)  # It landed: what follows runs here, never again.
        elif isinstance(step, Look):
            # Decided, nothing saved: the look waits in a worker thread, the rest here.
            looked, failed = None, None
            try:
                looked = await run_in_threadpool(step.read, *step.args)
            except Exception as error:
                failed = error  # thrown into the attempts where they wait on it
            with never_waiting():
                step = _next(steps, looked, failed)
        else:
            # A pause only follows a failed save, and a worker thread takes those.
            assert isinstance(step, Snapshots), step
            try:
                await run_in_threadpool(seam.snapshot, step)
            except asyncio.CancelledError:
                # The save landed: what follows the snapshot only tells the metrics.
                _next(steps, None)
                raise
            step = _next(steps, None)
    return step


def _finish_elsewhere(seam: CommandSeam, steps: Steps[T], saving: Future[list[int]]) -> None:
    """The attempts after a save nobody awaits any more, to their end in a worker thread."""

    def finish() -> None:
        try:
            ids = saving.result()
        except Exception as error:
            seam.drive(steps, error)
        else:
            seam.drive(steps, saved=ids)

    def told(done: asyncio.Future[None]) -> None:
        if not done.cancelled() and (error := done.exception()) is not None:
            log.warning("command_unanswered", error=repr(error)[:300])

    asyncio.get_running_loop().run_in_executor(None, finish).add_done_callback(told)


def _next(steps: Steps[T], sent: Any, error: Exception | None = None) -> Step | Outcome[T]:
    """The attempts' next step, sent what they waited on (or thrown its `error`), or
    their outcome (a coroutine may not let the generator's StopIteration through)."""
    try:
        return steps.throw(error) if error is not None else steps.send(sent)
    except StopIteration as done:
        outcome: Outcome[T] = done.value
        return outcome
