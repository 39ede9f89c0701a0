"""Player protection and significant events through the HTTP API, on both stores:
limits set and shown, deposits and bets refused at a limit, exclusions, bad input
that changes nothing, and the significant-event log (rules.md 7)."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

import pytest

from infra.store.store import Store
from tests.conftest import AUDITOR, OPERATOR, SERVICE, Api
from tests.domain.tables.test_steps import NOW, Clock

DAY = datetime.timedelta(days=1)


@pytest.fixture
def clock(store: Store) -> Clock:
    clock = Clock()
    store.app.clock = clock
    return clock


def limits(api: Api, body: Any, headers: dict[str, str] | None = None) -> Any:
    return api.client.put(
        "/v1/players/alice/limits",
        json=body,
        headers={**(headers or SERVICE), "Idempotency-Key": uuid.uuid4().hex},
    )


def shown(api: Api) -> dict[str, Any]:
    answer = api.get("/v1/players/alice/limits")
    assert answer.status_code == 200, answer.text
    return {limit["limit"]: limit for limit in answer.json()["limits"]}


def significant(api: Api, query: str = "") -> list[dict[str, Any]]:
    answer = api.get(f"/v1/significant-events{query}", headers=AUDITOR)
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


def test_a_deposit_past_the_daily_limit_is_refused_naming_what_is_left(
    api: Api, clock: Clock
) -> None:
    api.player("alice", real="500.00")  # before any limit: not counted
    answer = limits(api, {"deposit": {"day": "100.00"}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["effective_at"] == {"deposit:day": NOW.isoformat(timespec="microseconds")}
    api.deposit("alice", "60.00")
    refused = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "40.01"})
    assert refused.status_code == 409
    assert refused.json()["code"] == "deposit_limit_exceeded"
    assert (refused.json()["limit"], refused.json()["left"]) == ("deposit:day", "40.00")
    assert api.wallet("alice")["balance"] == "560.00"
    assert shown(api)["deposit:day"]["used"] == "60.00"


def test_limits_show_what_is_used_left_and_a_raise_waiting_its_cooling_off(
    api: Api, clock: Clock
) -> None:
    api.player("alice")
    limits(api, {"deposit": {"day": "100.00"}, "loss": {"week": "50.00"}})
    api.deposit("alice", "30.00")
    answer = limits(api, {"deposit": {"day": "500.00"}})
    later = (NOW + DAY).isoformat(timespec="microseconds")
    assert answer.json()["effective_at"] == {"deposit:day": later}
    day = shown(api)["deposit:day"]
    assert day == {
        "limit": "deposit:day",
        "amount": "100.00",
        "used": "30.00",
        "left": "70.00",
        "resets_at": later,
        "pending": {"amount": "500.00", "effective_at": later},
    }
    assert shown(api)["loss:week"]["left"] == "50.00"
    assert shown(api)["deposit:month"]["amount"] is None
    clock.now = NOW + DAY
    assert shown(api)["deposit:day"]["amount"] == "500.00"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"deposit": {"day": "-1.00"}}, "invalid_amount"),
        ({"deposit": {"day": "1000000000000.01"}}, "invalid_amount"),
        ({"deposit": {"year": "10.00"}}, "invalid_request"),
        ({"winnings": {"day": "10.00"}}, "invalid_request"),
        ({}, "invalid_limit"),
    ],
)
def test_a_bad_limit_is_refused_and_changes_nothing(
    api: Api, clock: Clock, body: Any, code: str
) -> None:
    api.player("alice")
    before = significant(api)
    answer = limits(api, body)
    assert (answer.status_code, answer.json()["code"]) == (422, code)
    assert all(limit["amount"] is None for limit in shown(api).values())
    assert significant(api) == before


def test_an_excluded_player_may_withdraw_but_not_deposit_or_be_excluded_again(
    api: Api, clock: Clock
) -> None:
    api.player("alice", real="100.00")
    answer = api.post("/v1/players/alice/exclusions", {"period": "1w"})
    assert answer.status_code == 201, answer.text
    ends = (NOW + 7 * DAY).isoformat(timespec="microseconds")
    assert answer.json() == {
        "player_id": "alice",
        "exclusion": {
            "kind": "time_out",
            "period": "1w",
            "started_at": NOW.isoformat(timespec="microseconds"),
            "ends_at": ends,
        },
        "affected_rounds": [],
    }
    for path, body in (
        ("/v1/players/alice/deposits", {"mode": "real", "amount": "1.00"}),
        ("/v1/players/alice/exclusions", {"period": "5y"}),
    ):
        refused = api.post(path, body)
        assert (refused.status_code, refused.json()["code"]) == (409, "player_excluded")
        assert refused.json()["ends_at"] == ends
    withdrawn = api.post("/v1/players/alice/withdrawals", {"mode": "real", "amount": "100.00"})
    assert withdrawn.status_code == 201
    assert api.get("/v1/players/alice/limits").json()["exclusion"]["ends_at"] == ends


def test_an_unlisted_exclusion_period_is_refused_and_changes_nothing(
    api: Api, clock: Clock
) -> None:
    api.player("alice")
    answer = api.post("/v1/players/alice/exclusions", {"period": "3d"})
    assert (answer.status_code, answer.json()["code"]) == (422, "unknown_period")
    assert api.get("/v1/players/alice/limits").json()["exclusion"] is None


def test_significant_events_list_limit_changes_exclusions_and_adjustments(
    api: Api, clock: Clock
) -> None:
    api.player("alice")
    limits(api, {"loss": {"day": "20.00"}})
    clock.now = NOW + DAY
    api.post("/v1/players/alice/exclusions", {"period": "24h"})
    clock.now = NOW + 2 * DAY
    api.post(
        "/v1/players/alice/dealer-points/adjustments",
        {"mode": "real", "change": 5, "reason": "goodwill"},
        headers=OPERATOR,
    )
    kinds = [event["kind"] for event in significant(api)]
    assert kinds == ["limit_changed", "player_excluded", "points_adjusted"]
    assert significant(api, "?kind=points_adjusted")[0]["details"] == {
        "player_id": "alice",
        "mode": "real",
        "change": 5,
        "reason": "goodwill",
    }
    window = "?from=2026-12-02T00:00:00Z&to=2026-12-03T12:00:00Z"
    assert [event["kind"] for event in significant(api, window)] == ["player_excluded"]
    assert api.get("/v1/significant-events").status_code == 403  # the service may not


def test_refused_authentication_is_counted_not_logged_once_per_request(api: Api) -> None:
    for _ in range(5):
        answer = api.client.get("/v1/players/alice", headers={"Authorization": "Bearer wrong"})
        assert answer.status_code == 401
    refusals = significant(api, "?kind=authentication_refused")
    assert len(refusals) == 1  # the first at once; the rest wait for the interval
    assert refusals[0]["details"]["count"] == 1
