"""The event feed: the log in order, for downstream systems (a data warehouse, a CRM,
a regulator's feed) that follow it (API.md, Operations).

    GET /v1/events?after=N&limit=100&wait=25

A consumer keeps the `next_after` of its last page and asks again from there:
positions are assigned in commit order (both stores write one save at a time),
so a page never skips an event that a later page would show, and resuming from
the last position seen - after a restart of either side - misses nothing and
repeats nothing. With `wait`, a consumer that has caught up is answered as soon
as an event arrives, or with an empty page when `wait` seconds pass.

What the feed leaves out:
- an open round's secrets: the seed, a certification shoe and a blackjack hole
  card read null while the round is not over, exactly as its audit trail shows
  them (`domain/rounds.py: secrets_revealed`, `withhold_secrets`);
- command receipts (`casino:CommandReceipt.*`): not facts of the casino but the
  idempotency store, holding each answer as shaped for the caller who sent the
  command and keyed by a digest of that caller's API key. Every fact they repeat
  is in the events the command saved. Their positions are skipped: a page's
  positions can have gaps, and `next_after` moves past them.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool

from domain.application import CasinoApplication
from domain.errors import UnknownRound
from domain.rounds import (
    SECRET_FIELDS,
    secrets_revealed,
    with_revealed_secrets,
    withhold_secrets,
)
from infra.http.answers import EventPage
from infra.http.auth import REPORT
from infra.http.contract import answers
from infra.http.reading import app_of
from projections.base import POSITION_MAX
from projections.round_trail import event_data

router = APIRouter(tags=["operations"])
LIMIT_MAX = 1000
WAIT_SECONDS_MAX = 30.0
POLL_SECONDS = 0.1
SCAN_PAGES_MAX = 10  # A page reads at most this many limits' worth of positions.
HIDDEN_TOPICS = ("casino:CommandReceipt.",)


@router.get("/v1/events", dependencies=[Depends(REPORT)], **answers(200, EventPage))
async def events(
    request: Request,
    after: int = Query(default=0, ge=0, le=POSITION_MAX, description="the last position seen"),
    limit: int = Query(default=100, ge=1, le=LIMIT_MAX),
    wait: float = Query(
        default=0,
        ge=0,
        le=WAIT_SECONDS_MAX,
        description="seconds to wait for an event when there is none after `after`",
    ),
) -> dict[str, Any]:
    """The log after `after`, oldest first (operators and auditors)."""
    app = app_of(request)
    deadline = time.monotonic() + wait
    while True:
        page, next_after = await run_in_threadpool(read_page, app, after, limit)
        if page or next_after > after or time.monotonic() >= deadline:
            return {"events": page, "next_after": next_after}
        await asyncio.sleep(POLL_SECONDS)  # Holds no thread while it waits.


def read_page(app: CasinoApplication, after: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Up to `limit` events after `after`, and the last position read."""
    page: list[dict[str, Any]] = []
    rounds: dict[str, Any] = {}  # round id -> the round if its secrets are shown, or None
    position, scanned = after, 0
    while len(page) < limit and scanned < SCAN_PAGES_MAX * limit:
        batch = app.recorder.select_notifications(
            start=position, limit=limit, inclusive_of_start=False
        )
        if not batch:
            break
        for notification in batch:
            position, scanned = notification.id, scanned + 1
            if not notification.topic.startswith(HIDDEN_TOPICS):
                page.append(_event(app, notification, rounds))
                if len(page) == limit:
                    break
    return page, position


def _event(app: CasinoApplication, notification: Any, rounds: dict[str, Any]) -> dict[str, Any]:
    event: Any = app.mapper.to_domain_event(notification)
    data = json.loads(json.dumps(event_data(event), default=str))
    aggregate_id = str(notification.originator_id)
    if any(name in data for name in SECRET_FIELDS):
        round_ = _shown(app, aggregate_id, rounds)
        data = withhold_secrets(data) if round_ is None else with_revealed_secrets(data, round_)
    return {
        "position": notification.id,
        "at": event.timestamp.isoformat(),
        "type": notification.topic.rsplit(".", 1)[-1],
        "topic": notification.topic,
        "aggregate_id": aggregate_id,
        "version": notification.originator_version,
        "data": data,
    }


def _shown(app: CasinoApplication, round_id: str, rounds: dict[str, Any]) -> Any:
    """The round, if its secrets may be shown: once it is over, as its audit trail."""
    if round_id not in rounds:
        try:
            round_ = app.round(round_id)
            rounds[round_id] = round_ if secrets_revealed(round_.status) else None
        except UnknownRound:
            rounds[round_id] = None  # Not a round: hide what looks secret all the same.
    return rounds[round_id]
