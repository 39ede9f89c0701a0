"""Liveness and the read models' lag, for load balancers and operators (no key needed)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from infra.http.answers import Health
from infra.http.contract import answers
from infra.http.problems import problem_response
from infra.logs import get_logger
from infra.store.store import Store

router = APIRouter(tags=["health"])
log = get_logger("casino.health")


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
