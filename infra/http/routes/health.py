"""Health for load balancers and operators (no key needed): liveness, readiness, and
the read models' lag; and the Prometheus metrics.

Readiness asks three things. The store answers. A projector runs and is within
READY_LAG_EVENTS_MAX of the log's head: with the projector inside, this process's
worker is alive; with `CASINO_PROJECTOR=separate`, the projector in its own
process has written its heartbeat row (`projector_heartbeat`) within
HEARTBEAT_STALE_SECONDS. A heartbeat rather than watching the position advance:
an idle log does not advance either, so only a heartbeat tells a projector with
nothing to do from one that is gone, and it tells at the first look. The
server's own workers are alive and have passed lately.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from infra.http.answers import Health, Liveness, Readiness
from infra.http.contract import answers
from infra.http.problems import problem_response
from infra.logs import get_logger
from infra.metrics import CONTENT_TYPE, Metrics
from infra.store.store import Store
from infra.workers import HEARTBEAT_SECONDS, PeriodicWorker

router = APIRouter(tags=["operations"])
log = get_logger("casino.health")
READY_LAG_EVENTS_MAX = 10_000
HEARTBEAT_STALE_SECONDS = 5 * HEARTBEAT_SECONDS + 5
WORKER_GRACE_SECONDS = 30.0  # beyond three intervals, before a quiet worker counts as stuck


@router.get("/v1/health", **answers(200, Health, (503, "store_unavailable")))
def health(request: Request) -> dict[str, Any] | JSONResponse:
    """The store answers; how many events the read models are behind the log."""
    store: Store = request.app.state.store
    try:
        head, position = store.projector.head(), store.projector.position()
    except Exception as error:  # Whatever the driver raises, the answer is the same.
        log.warning("health_check_failed", error=repr(error))
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
def ready(request: Request) -> dict[str, Any] | JSONResponse:
    """Whether to send traffic here: store, projector and workers; a 503 names what is
    wrong."""
    checks = readiness(request.app.state.store, request.app.state.workers)
    listed = [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in checks]
    failing = [c for c in checks if not c.ok]
    if failing:
        detail = "; ".join(f"{c.name}: {c.detail}" for c in failing)
        return problem_response(503, "not_ready", detail, checks=listed)
    return {"status": "ready", "checks": listed}


@router.get(
    "/metrics",
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
    response_class=Response,
)
def metrics(request: Request) -> Response:
    """Prometheus text format (README.md, Metrics, lists each one)."""
    registry: Metrics = request.app.state.metrics
    return Response(registry.exposition(), media_type=CONTENT_TYPE)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def readiness(store: Store, workers: list[PeriodicWorker]) -> list[Check]:
    try:
        head, position = store.projector.head(), store.projector.position()
        beat, failed = store.projector.heartbeat(), store.projector.failed()
    except Exception as error:
        log.warning("readiness_store_failed", error=repr(error)[:200])
        return [Check("store", False, "the store does not answer")]
    checks = [Check("store", True, f"{store.database.dialect}, {head} events")]
    if failed is not None:  # Stopped at an event it cannot apply (projections/failure.py).
        checks.append(Check("projector", False, f"stopped: {failed.detail}"))
    else:
        checks.append(_projector(store, workers, head - position, beat))
    checks.append(_workers([w for w in workers if w.name != "projector"]))
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
