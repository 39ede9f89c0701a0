"""The list of rounds, every game, for operators and auditors (api.md, GET /v1/rounds):
what the auditor's index page shows, and what its round page heads itself with."""

from __future__ import annotations

import datetime
from typing import Any

from fastapi import APIRouter, Depends, Query, Request

from domain.ids import PLAYER_ID_PATTERN
from infra.audit.export import ExportArgumentError, parse_time
from infra.http.answers import RoundIndex
from infra.http.auth import REPORT
from infra.http.contract import answers
from infra.http.problems import Problem
from infra.http.reading import min_position, projected
from projections import round_index
from projections.base import POSITION_MAX

router = APIRouter(tags=["rounds"])
ROUNDS_DEFAULT = 100
ROUND_ID_LENGTH_MAX = 64
TIME_LENGTH_MAX = 40


@router.get(
    "/v1/rounds",
    dependencies=[Depends(REPORT), Depends(min_position)],
    **answers(200, RoundIndex),
)
def list_rounds(
    request: Request,
    player_id: str | None = Query(
        default=None, pattern=PLAYER_ID_PATTERN.pattern, description="rounds it played or dealt"
    ),
    round_id: str | None = Query(default=None, max_length=ROUND_ID_LENGTH_MAX),
    since: str | None = Query(
        default=None,
        alias="from",
        max_length=TIME_LENGTH_MAX,
        description="rounds begun from then on: YYYY-MM-DD or an ISO instant (UTC by default)",
    ),
    until: str | None = Query(
        default=None,
        alias="to",
        max_length=TIME_LENGTH_MAX,
        description="rounds begun up to then: YYYY-MM-DD (the whole day) or an ISO instant",
    ),
    limit: int = Query(default=ROUNDS_DEFAULT, ge=1, le=round_index.ROUNDS_MAX),
    after: int = Query(default=0, ge=0, le=POSITION_MAX, description="next_after, to go on"),
) -> dict[str, Any]:
    """Rounds in the order they opened: `{rounds: [...], next_after}`."""
    start = _instant(since, "from", end=False)
    end = _instant(until, "to", end=True)
    if start is not None and end is not None and start >= end:
        raise Problem(422, "invalid_request", f"from {since} is not before to {until}")
    with projected(request) as cursor:
        found = round_index.listed(
            cursor,
            after=after,
            limit=limit,
            player_id=player_id,
            round_id=round_id,
            since=None if start is None else start.isoformat(),
            before=None if end is None else end.isoformat(),
        )
    return {
        "rounds": [_entry_view(entry) for entry in found],
        "next_after": found[-1]["position"] if len(found) == limit else None,
    }


def _instant(text: str | None, name: str, *, end: bool) -> datetime.datetime | None:
    """A bound as an instant in UTC; an end is exclusive (a date takes in its whole day)."""
    if text is None:
        return None
    try:
        return parse_time(text, name, end=end)
    except ExportArgumentError as error:
        raise Problem(422, "invalid_request", str(error)) from None


def _entry_view(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "round_id": entry["round_id"],
        "position": entry["position"],
        "game": entry["game"],
        "variant": entry["variant"],
        "mode": entry["mode"],
        "table_id": entry["table_id"],
        "status": entry["status"],
        "players": entry["players"],
        "started_at": entry["started_at"],
        "ended_at": entry["ended_at"],
    }
