"""What a command's attempts yield (domain/seam.py: `_attempts`), and how a driver
steps through them, whoever does the waiting.

The seam's rules are one generator: it yields a save (and is sent the save's
notification ids, or thrown the store's error) or a pause (and is sent nothing),
and returns the command's outcome. `waiting` hands each save to the store and
leaves its driver only the waiting: `CommandSeam.run` blocks its thread on the
save's future and sleeps; `CommandSeam.arun` awaits both on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TypeVar
from uuid import UUID

from eventsourcing.application import ProcessingEvent
from eventsourcing.persistence import StoredEvent

from domain.outcome import Outcome

T = TypeVar("T")


@dataclass(frozen=True)
class Save:
    processing: ProcessingEvent[UUID]
    stored: list[StoredEvent]


@dataclass(frozen=True)
class Pause:
    seconds: float


# A command's attempts: they yield saves (sent back their notification ids) and pauses.
Steps = Generator[Save | Pause, list[int] | None, Outcome[T]]
# What a driver waits for: a pause's seconds, a save's future; last, the outcome.
Wait = float | Future[list[int]] | Outcome[T]


def waiting(
    steps: Steps[T], store: Callable[[Save], Future[list[int]]]
) -> Generator[Wait[T], None, None]:
    """The attempts, each save handed to `store`: yields what to wait for before
    asking for the next (a save's future must be done by then), then the outcome."""
    try:
        step = next(steps)
        while True:
            if isinstance(step, Pause):
                yield step.seconds
                step = steps.send(None)
                continue
            saved = store(step)
            yield saved
            assert saved.done(), "the driver waits for the save before going on"
            error = saved.exception()
            step = steps.throw(error) if error is not None else steps.send(saved.result())
    except StopIteration as done:
        yield done.value
