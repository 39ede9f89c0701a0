"""Significant events, for operators and auditors (api.md, Significant events)."""

from __future__ import annotations

import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from domain.significant import KIND_PATTERN, stamp
from infra.http import answers_protection as a
from infra.http.auth import REPORT
from infra.http.contract import answers
from infra.http.dates import Instant
from infra.http.problems import Problem
from infra.http.reading import min_position, projected
from projections import significant_events
from projections.base import POSITION_MAX

router = APIRouter(
    prefix="/v1/significant-events",
    tags=["significant events"],
    dependencies=[Depends(REPORT), Depends(min_position)],
)


@router.get("", **answers(200, a.SignificantEventPage))
def list_significant_events(
    request: Request,
    since: Annotated[Instant | None, Query(alias="from")] = None,
    until: Annotated[Instant | None, Query(alias="to")] = None,
    kind: str | None = Query(default=None, pattern=KIND_PATTERN.pattern, max_length=40),
    after: int = Query(default=0, ge=0, le=POSITION_MAX, description="position to go on after"),
    limit: int = Query(default=100, ge=1, le=significant_events.PAGE_MAX),
) -> dict[str, Any]:
    """Limit changes, exclusions, operators' adjustments, configuration changes,
    start-ups and shutdowns, refused authentication (counted per interval), failing
    workers: oldest first, `from` inclusive and `to` exclusive (ISO 8601 with a zone)."""
    first, last = _utc(since), _utc(until)
    if first is not None and last is not None and first > last:
        raise Problem(422, "invalid_request", "from is after to: no moment is in between")
    with projected(request) as cursor:
        found = significant_events.listed(cursor, first, last, kind, after, limit)
    next_after = found[-1]["position"] if len(found) == limit else None
    return {"events": found, "next_after": next_after}


def _utc(moment: datetime.datetime | None) -> str | None:
    if moment is not None and moment.tzinfo is None:
        raise Problem(422, "invalid_request", "from and to need a time zone, such as Z")
    return None if moment is None else stamp(moment)
