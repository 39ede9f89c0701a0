"""Player protection and significant events through the HTTP API, on both stores:
limits set and shown, deposits and bets refused at a limit, exclusions, bad input
that changes nothing, and the significant-event log (rules.md 7)."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

import pytest

from infra.store.store import Store
from tests.conftest import AUDITOR, OPERATOR, SERVICE, Api, eventually
from tests.domain.tables.test_steps import NOW, Clock

DAY = datetime.timedelta(days=1)
PLAYER_WINS = ["10", "K", "3", "10", "10", "Q"]


def at(moment: datetime.datetime) -> str:
    return moment.isoformat(timespec="microseconds")


@pytest.fixture
def clock(store: Store) -> Clock:
    clock = Clock()
    store.app.clock = clock
    return clock


def put_limits(api: Api, body: Any, headers: dict[str, str] = SERVICE) -> Any:
    sent = {**headers, "Idempotency-Key": uuid.uuid4().hex}
    return api.client.put("/v1/players/alice/limits", json=body, headers=sent)


def limits(api: Api) -> dict[str, Any]:
    answer = api.get("/v1/players/alice/limits?mode=real")
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def significant(api: Api, query: str = "") -> list[dict[str, Any]]:
    answer = api.get(f"/v1/significant-events{query}", headers=AUDITOR)
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


def test_a_deposit_past_the_daily_limit_is_refused_naming_what_remains(
    api: Api, clock: Clock
) -> None:
    api.player("alice", real="500.00")  # before any limit: not counted
    answer = put_limits(api, {"mode": "real", "deposit": {"day": "100.00"}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["limits"]["deposit"] == {"day": "100.00", "week": None, "month": None}
    assert answer.json()["pending"] == []  # a first limit lowers "none": at once
    api.deposit("alice", "60.00")
    refused = api.post("/v1/players/alice/deposits", {"mode": "real", "amount": "40.01"})
    assert refused.status_code == 409
    assert {k: refused.json()[k] for k in ("code", "limit", "period", "remaining")} == {
        "code": "deposit_limit_exceeded",
        "limit": "100.00",
        "period": "day",
        "remaining": "40.00",
    }
    assert refused.json()["resets_at"] == at(NOW + DAY)
    assert api.wallet("alice")["balance"] == "560.00"


def test_a_bet_past_the_loss_limit_is_refused(api: Api, clock: Clock) -> None:
    api.player("alice", real="500.00")
    put_limits(api, {"loss": {"day": "30.00"}})
    opened = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"})
    round_id = opened.json()["round_id"]
    assert api.post(f"/v1/rounds/{round_id}/bets", {"spot": "banker", "amount": "20.00"}).is_success
    refused = api.post(f"/v1/rounds/{round_id}/bets", {"spot": "player", "amount": "11.00"})
    assert (refused.status_code, refused.json()["code"]) == (409, "loss_limit_exceeded")
    assert refused.json()["remaining"] == "10.00"
    assert api.wallet("alice")["held"] == "20.00"


def test_limits_show_a_raise_waiting_its_cooling_off_and_what_each_window_leaves(
    api: Api, clock: Clock
) -> None:
    api.player("alice")
    put_limits(api, {"deposit": {"day": "100.00"}, "loss": {"week": "50.00"}})
    api.deposit("alice", "30.00")
    answer = put_limits(api, {"deposit": {"day": "500.00"}, "loss": {"week": None}})
    assert answer.json()["pending"] == [
        {"kind": "deposit", "period": "day", "amount": "500.00", "effective_at": at(NOW + DAY)},
        {"kind": "loss", "period": "week", "amount": None, "effective_at": at(NOW + DAY)},
    ]
    assert limits(api) == answer.json()
    assert limits(api)["windows"] == [
        {
            "kind": "deposit",
            "period": "day",
            "used": "30.00",
            "remaining": "70.00",
            "resets_at": at(NOW + DAY),
        },
        {"kind": "loss", "period": "week", "used": "0.00", "remaining": "50.00", "resets_at": None},
    ]
    clock.now = NOW + DAY
    assert limits(api)["limits"]["deposit"]["day"] == "500.00"
    assert limits(api)["limits"]["loss"]["week"] is None
    assert limits(api)["pending"] == []


def test_an_operator_may_set_limits_and_is_named_as_the_actor(api: Api, clock: Clock) -> None:
    api.player("alice")
    assert put_limits(api, {"loss": {"month": "0.00"}}, OPERATOR).status_code == 200
    assert limits(api)["limits"]["loss"]["month"] == "0.00"
    [changed] = significant(api, "?kind=limit_changed")
    assert changed["actor"] == "operator"
    assert changed["detail"] == {
        "player_id": "alice",
        "limits": {"loss:month": {"cents": 0, "effective_at": at(NOW)}},
    }


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"deposit": {"day": "-1.00"}}, "invalid_amount"),
        ({"deposit": {"day": "1000000000000.01"}}, "invalid_amount"),
        ({"deposit": {"year": "10.00"}}, "invalid_request"),
        ({"winnings": {"day": "10.00"}}, "invalid_request"),
        ({"mode": "play", "deposit": {"day": "10.00"}}, "unknown_mode"),
        ({}, "invalid_limit"),
    ],
)
def test_a_bad_limit_is_refused_and_changes_nothing(
    api: Api, clock: Clock, body: Any, code: str
) -> None:
    api.player("alice")
    before = limits(api)
    answer = put_limits(api, body)
    assert (answer.status_code, answer.json()["code"]) == (422, code)
    assert limits(api) == before
    assert significant(api) == []


def test_an_excluded_player_may_withdraw_but_not_deposit_or_be_excluded_again(
    api: Api, clock: Clock
) -> None:
    api.player("alice", real="100.00")
    answer = api.post("/v1/players/alice/exclusions", {"kind": "time_out", "days": 7})
    assert answer.status_code == 201, answer.text
    until = at(NOW + 7 * DAY)
    exclusion = {"kind": "time_out", "period": "P7D", "from": at(NOW), "until": until}
    assert answer.json() == {"player_id": "alice", **exclusion, "affected_rounds": []}
    for path, body in (
        ("/v1/players/alice/deposits", {"mode": "real", "amount": "1.00"}),
        ("/v1/players/alice/exclusions", {"kind": "self_exclusion", "months": 60}),
    ):
        refused = api.post(path, body)
        assert (refused.status_code, refused.json()["code"]) == (409, "player_excluded")
        assert refused.json()["until"] == until
    withdrawn = api.post("/v1/players/alice/withdrawals", {"mode": "real", "amount": "100.00"})
    assert withdrawn.status_code == 201
    shown = api.get("/v1/players/alice/exclusions").json()
    assert shown == {"player_id": "alice", "current": exclusion, "past": []}
    clock.now = NOW + 7 * DAY
    shown = api.get("/v1/players/alice/exclusions").json()
    assert shown == {"player_id": "alice", "current": None, "past": [exclusion]}


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "time_out", "days": 43},
        {"kind": "time_out", "days": 0},
        {"kind": "self_exclusion", "months": 3},
        {"kind": "self_exclusion", "days": 180},
        {"kind": "time_out", "days": 3, "months": 6},
    ],
)
def test_an_unlisted_exclusion_is_refused_and_changes_nothing(
    api: Api, clock: Clock, body: Any
) -> None:
    api.player("alice")
    answer = api.post("/v1/players/alice/exclusions", body)
    assert (answer.status_code, answer.json()["code"]) == (422, "unknown_period")
    assert api.get("/v1/players/alice/exclusions").json()["current"] is None
    assert significant(api) == []


def test_significant_events_list_limit_changes_exclusions_and_adjustments(
    api: Api, clock: Clock
) -> None:
    api.player("alice")
    put_limits(api, {"loss": {"day": "20.00"}})
    clock.now = NOW + DAY
    api.post("/v1/players/alice/exclusions", {"kind": "time_out", "days": 1})
    clock.now = NOW + 2 * DAY
    api.post(
        "/v1/players/alice/dealer-points/adjustments",
        {"mode": "real", "change": 5, "reason": "goodwill"},
        headers=OPERATOR,
    )
    listed = significant(api)
    assert [(e["kind"], e["actor"]) for e in listed] == [
        ("limit_changed", "service"),
        ("player_excluded", "service"),
        ("points_adjusted", "operator"),
    ]
    assert significant(api, "?kind=points_adjusted")[0]["detail"] == {
        "player_id": "alice",
        "mode": "real",
        "change": 5,
        "reason": "goodwill",
    }
    window = "?from=2026-12-02T00:00:00Z&to=2026-12-03T12:00:00Z"
    assert [event["kind"] for event in significant(api, window)] == ["player_excluded"]
    page = api.get("/v1/significant-events?limit=2", headers=OPERATOR).json()
    rest = significant(api, f"?after={page['next_after']}")
    assert [e["kind"] for e in page["events"] + rest] == [e["kind"] for e in listed]
    assert api.get("/v1/significant-events").status_code == 403  # the service may not


def test_refused_authentication_is_counted_not_recorded_once_per_request(api: Api) -> None:
    for _ in range(5):
        answer = api.client.get("/v1/players/alice", headers={"Authorization": "Bearer wrong"})
        assert answer.status_code == 401
    refusals = eventually(lambda: significant(api, "?kind=authentication_refused"), bool)
    assert len(refusals) == 1  # the first at once; the rest wait for the interval
    assert refusals[0]["detail"]["count"] == 1
    assert refusals[0]["detail"]["last"] == "GET /v1/players/alice"
