"""How routes read: the application the store holds, and read models, read-your-writes.

Every command's answer carries the log position that includes it (the
`Casino-Position` header). A read given `min_position` answers only once the
read models include that position. With the projector inside the server (on
SQLite, by default) every read first catches the read models up with the whole
log, so it includes every acknowledged command even without `min_position`; so
does a read with the projector in the process the server starts beside itself
(on PostgreSQL, by default), by waiting until it has the log's head as of the
read. With the projector in a process of the operator's (CASINO_PROJECTOR=
separate) a read waits only for the position it was given. A wait lasts up to
CASINO_READ_WAIT_SECONDS, then answers 503 `projection_behind`.

A projector stopped at an event it cannot apply makes every read answer 503
`projection_failed`, naming the read model and the position; a read model that
fails to be read (a limit, a broken assertion) answers 503 `read_model_unavailable`:
a problem, never a bare 500.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import HTTPException, Query, Request

from domain.application import CasinoApplication
from domain.errors import DomainError
from infra.http.problems import Problem
from infra.logs import get_logger
from infra.store.faults import is_store_fault, remaining
from infra.store.store import Store
from projections.base import POSITION_MAX, Cursor
from projections.failure import ProjectionFailed

POLL_SECONDS = 0.005  # a projector beside the server is usually a few ms behind
# A wait this long may be a projector stopped at an event it cannot apply: look.
FAILURE_CHECK_POLLS = 20
ANSWER_MARGIN_SECONDS = 0.5  # of a request's deadline, kept to answer a wait that ran out
log = get_logger("casino.reading")


def app_of(request: Request) -> CasinoApplication:
    app: CasinoApplication = request.app.state.store.app
    return app


def min_position(
    request: Request,
    min_position: int | None = Query(
        default=None,
        ge=0,
        le=POSITION_MAX,
        description="answer only once the read models include this log position "
        "(a command's Casino-Position header)",
    ),
) -> None:
    request.state.min_position = min_position


@contextmanager
def projected(request: Request, *, whole_log: bool = False) -> Iterator[Cursor]:
    """A read transaction on read models that include the position asked for (or,
    with `whole_log`, every event stored when the call began; a command reads so, and
    past the wait it goes on with the read models as they are rather than fail)."""
    store: Store = request.app.state.store
    try:
        _catch_up(request, store, whole_log)
    except ProjectionFailed as failed:
        raise Problem(503, "projection_failed", f"the read models stopped: {failed.detail}",
                      position=failed.position, read_model=failed.read_model) from None  # fmt: skip
    with store.database.read() as cursor:
        try:
            yield cursor
        except (Problem, DomainError, HTTPException):
            raise
        except Exception as error:  # A read model's bug or limit: a problem, never a crash.
            if is_store_fault(error):
                raise  # the store's, answered 503 store_unavailable (infra/http/app.py)
            log.error("read_model_failed", path=request.url.path, error=repr(error)[:300])
            raise Problem(
                503, "read_model_unavailable", "a read model could not be read; see the logs"
            ) from None


def _catch_up(request: Request, store: Store, whole_log: bool) -> None:
    if store.projector_inside:
        store.projector.catch_up()
        return
    seconds = request.app.state.settings.read_wait_seconds
    if whole_log:
        with contextlib.suppress(Problem):
            wait_for(store, store.projector.head(), seconds)
    elif store.reads_wait_for_head:
        asked = request.state.min_position or 0
        wait_for(store, max(asked, store.projector.head()), seconds)
    elif request.state.min_position:
        wait_for(store, request.state.min_position, seconds)


def wait_for(store: Store, position: int, seconds: float) -> None:
    # Within the request's deadline, with time left to answer (infra/store/faults.py).
    seconds = min(seconds, remaining() - ANSWER_MARGIN_SECONDS)
    deadline = time.monotonic() + seconds
    polls = 0
    while (reached := store.projector.position()) < position:
        polls += 1
        if polls % FAILURE_CHECK_POLLS == 0 or time.monotonic() > deadline:
            failed = store.projector.failed()  # The projector elsewhere may have stopped.
            if failed is not None:
                raise failed
        if time.monotonic() > deadline:
            raise Problem(
                503,
                "projection_behind",
                f"the read models are at position {reached}, not yet {position}; retry shortly",
            )
        time.sleep(POLL_SECONDS)
