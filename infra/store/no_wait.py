"""Store reads a thread must not wait on: the event loop's, while it steps a command.

A command route runs its command on the event loop (infra/http/driver.py) as long as
the command waits on nothing but its save: everything it reads is in the commands'
cache, and its save is the group commit's future, awaited. A command that would wait
on the store (a cache miss, a stale check, a receipt to look up) must not stall every
other request meanwhile: its connection is refused with `WouldWait`, before anything
is sent, and the driver runs the command again from the start in a worker thread.
Nothing of it was saved yet, so starting over changes nothing.

The store's one way to a connection (the library's `get_connection`, on SQLite and
PostgreSQL alike) checks this thread's flag; the committer's and the workers' threads
never set it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_this_thread = threading.local()


class WouldWait(BaseException):
    """The store was asked for a connection where no thread may wait on one.

    A BaseException, as KeyboardInterrupt is: the seam's `except Exception` handlers
    (a refusal, a failed save) must let it through, not take it for the store's answer.
    """


@contextmanager
def never_waiting() -> Iterator[None]:
    """In this block, in this thread, any use of the store raises WouldWait."""
    _this_thread.forbidden = True
    try:
        yield
    finally:
        _this_thread.forbidden = False


def check() -> None:
    """Raise WouldWait in a thread inside `never_waiting`: for a read of the store that
    does not pass the guarded `get_connection` (the read models' database)."""
    if getattr(_this_thread, "forbidden", False):
        raise WouldWait("the store was asked for a read on the event loop")


def guard(datastore: Any) -> None:
    """Make `datastore.get_connection` refuse a thread inside `never_waiting`."""
    opened: Callable[..., Any] = datastore.get_connection

    def get_connection(*args: Any, **kwargs: Any) -> Any:
        if getattr(_this_thread, "forbidden", False):
            raise WouldWait("the store was asked for a connection on the event loop")
        return opened(*args, **kwargs)

    datastore.get_connection = get_connection
