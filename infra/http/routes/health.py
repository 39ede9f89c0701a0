"""Health for load balancers and operators (no key needed): liveness, readiness, and
the read models' lag; and the Prometheus metrics.

Readiness tells the truth (rules.md 8). Three checks decide whether this server
can save commands, and fail it with 503: the store answers (through the pool
commands save through), the log's head is as the service left it
(infra/store/head_check.py), and the server's start-up event is saved. The rest
are dependencies whose failure degrades the service without stopping it, listed
as failing checks inside a 200: a projector runs and is within
READY_LAG_EVENTS_MAX of the log's head (with the projector inside, this process's
worker is alive; with `CASINO_PROJECTOR=separate`, the projector in its own
process has written its heartbeat row (`projector_heartbeat`) within
HEARTBEAT_STALE_SECONDS: a heartbeat rather than watching the position advance,
since an idle log does not advance either), the server's own workers (the
witness among them) are alive and have passed lately, and, with CASINO_FEED set,
the feed's relay (`feed`) reaches its stream and keeps up with the last seal
(infra/feed/relay.py: FeedRelay.health).

Readiness and health read in threads of their own, given CHECK_SECONDS: a hung
database makes them answer 503, not hang. Liveness reads nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from infra.fault_log import faults
from infra.feed.relay import FeedRelay
from infra.http.answers import Health, Liveness, Readiness
from infra.http.contract import answers
from infra.http.problems import problem_response
from infra.metrics import CONTENT_TYPE, Metrics
from infra.significant import StartRecord
from infra.store.faults import STORE
from infra.store.head_check import head_problem
from infra.store.reach import first_line
from infra.store.store import Store
from infra.workers import HEARTBEAT_SECONDS, PeriodicWorker

router = APIRouter(tags=["operations"])
T = TypeVar("T")
CHECK_SECONDS = 0.9  # readiness and health answer within a second (rules.md 8)
NO_ANSWER = (
    f"the store did not answer within {CHECK_SECONDS} s: down, stalled, or no "
    "connection free in its pool"
)
# The checks without which this server cannot save a command: 503 when one fails.
CRITICAL = frozenset(("store", "log", "start"))
_checking = ThreadPoolExecutor(max_workers=4, thread_name_prefix="health")
READY_LAG_EVENTS_MAX = 10_000
HEARTBEAT_STALE_SECONDS = 5 * HEARTBEAT_SECONDS + 5
WORKER_GRACE_SECONDS = 30.0  # beyond three intervals, before a quiet worker counts as stuck


@router.get("/v1/health", **answers(200, Health, (503, "store_unavailable")))
async def health(request: Request) -> dict[str, Any] | JSONResponse:
    """The store answers; how many events the read models are behind the log.
    Answered within CHECK_SECONDS, even when the database hangs."""
    store: Store = request.app.state.store
    try:
        head, position = await within_budget(_figures, store)
    except TimeoutError:
        return problem_response(503, "store_unavailable", NO_ANSWER)
    except Exception as error:  # Whatever the driver raises, the answer is the same.
        faults.failed(STORE, error)
        return problem_response(503, "store_unavailable", "the store does not answer")
    return {
        "status": "ok",
        "store": store.database.dialect,
        "events": head,
        "projections": {
            "position": position,
            "lag": head - position,
            "runs": "inside" if store.projector_inside else "separate",
        },
    }


@router.get("/v1/health/live", **answers(200, Liveness))
async def live() -> dict[str, Any]:
    """The process answers (it reads nothing: a slow store does not make it restart)."""
    return {"status": "alive"}


@router.get("/v1/health/ready", **answers(200, Readiness, (503, "not_ready")))
async def ready(request: Request) -> dict[str, Any] | JSONResponse:
    """Whether to send traffic here. 503, naming what is wrong, while this server
    cannot save commands (the store down, stalled or out of connections, the log
    changed behind its back, its start-up event unsaved); 200 otherwise, a degraded
    dependency (the projector, a worker, the witness) listed as a failing check.
    Answered within CHECK_SECONDS, even when the database hangs."""
    state = request.app.state
    try:
        checks = await within_budget(readiness, state.store, state.workers, state.start)
    except TimeoutError:
        checks = [Check("store", False, NO_ANSWER)]
    listed = [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in checks]
    failing = [c for c in checks if not c.ok and c.name in CRITICAL]
    if failing:
        detail = "; ".join(f"{c.name}: {c.detail}" for c in failing)
        return problem_response(503, "not_ready", detail, checks=listed)
    status = "ready" if all(c.ok for c in checks) else "degraded"
    return {"status": status, "checks": listed}


async def within_budget(check: Callable[..., T], *args: Any) -> T:
    """`check(*args)` in a thread of the health checks' own, given CHECK_SECONDS:
    past them TimeoutError, the thread left to finish (the store's own timeouts end
    it). Not the requests' thread pool, which a hung database may have filled."""
    running = asyncio.get_running_loop().run_in_executor(_checking, check, *args)
    # Its failure, should it end after the budget, is the store watch's to see.
    running.add_done_callback(lambda done: done.cancelled() or done.exception())
    return await asyncio.wait_for(asyncio.shield(running), CHECK_SECONDS)


def _figures(store: Store) -> tuple[int, int]:
    return store.projector.head(), store.projector.position()


@router.get(
    "/metrics",
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
    response_class=Response,
)
def metrics(request: Request) -> Response:
    """Prometheus text format (docs/operations.md, Metrics, lists each one)."""
    registry: Metrics = request.app.state.metrics
    return Response(registry.exposition(), media_type=CONTENT_TYPE)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def readiness(
    store: Store, workers: list[PeriodicWorker], start: StartRecord | None = None
) -> list[Check]:
    try:
        problem = head_problem(store)
        head, position = store.projector.head(), store.projector.position()
        beat, failed = store.projector.heartbeat(), store.projector.failed()
    except Exception as error:
        faults.failed(STORE, error)
        return [Check("store", False, f"the store does not answer: {first_line(error)}")]
    checks = [Check("store", True, f"{store.database.dialect}, {head} events")]
    checks.append(Check("log", problem is None, problem or "as this service left it"))
    if start is not None:
        checks.append(Check("start", start.saved, start.detail))
    if failed is not None:  # Stopped at an event it cannot apply (projections/failure.py).
        checks.append(Check("projector", False, f"stopped: {failed.detail}"))
    else:
        checks.append(_projector(store, workers, head - position, beat))
    relays = [w for w in workers if isinstance(w, FeedRelay)]  # the feed: a check of its own
    checks.extend(Check(FeedRelay.name, *relay.health()) for relay in relays)
    checks.append(_workers([w for w in workers if w.name not in ("projector", FeedRelay.name)]))
    return checks


def _projector(store: Store, workers: list[PeriodicWorker], lag: int, beat: float | None) -> Check:
    if lag > READY_LAG_EVENTS_MAX:
        return Check("projector", False, f"the read models are {lag} events behind the log")
    if store.projector_inside:
        own = [w for w in workers if w.name == "projector"]
        if own and not own[0].alive:
            return Check("projector", False, "the projector thread of this server has stopped")
        return Check("projector", True, f"inside this server, {lag} events behind")
    if beat is None:
        return Check("projector", False, "no separate projector has ever run on this store")
    silent = time.time() - beat
    if silent > HEARTBEAT_STALE_SECONDS:
        return Check(
            "projector",
            False,
            f"the separate projector (casino projections run) is not running: "
            f"last heard of {silent:.0f} s ago",
        )
    return Check("projector", True, f"separate, heard of {silent:.0f} s ago, {lag} behind")


def _workers(workers: list[PeriodicWorker]) -> Check:
    now = time.monotonic()
    for worker in workers:
        if not worker.alive:
            return Check("workers", False, f"the {worker.name} worker has stopped")
        problem = getattr(worker, "problem", None)  # the witness's, say
        if problem:
            return Check("workers", False, problem)
        quiet = now - (worker.last_pass or worker.started_at or now)
        if quiet > 3 * worker.interval_seconds + WORKER_GRACE_SECONDS:
            return Check("workers", False, f"the {worker.name} worker is stuck: {quiet:.0f} s")
    names = ", ".join(w.name for w in workers) or "none in this process"
    return Check("workers", True, names)
