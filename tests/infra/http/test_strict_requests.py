"""What the HTTP edge refuses, and in which order: a caller is known before their
body is judged; a body is parsed strictly (UTF-8, no duplicate key, not too deep);
types are taken strictly; every header and string has a limit. Every refusal is
problem+json and changes nothing.

These are about the edge, not the store: they run on SQLite only."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from infra.config import load_settings
from infra.http.app import create_app
from tests.conftest import AUDITOR, OPERATOR, SERVICE, Api, StoreFactory

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def edge(tmp_path: Path) -> Iterator[Api]:
    stores = StoreFactory("sqlite", tmp_path)
    store = stores.open()
    with TestClient(create_app(store, load_settings(), background=False)) as client:
        api = Api(client)
        api.player("alice", real="100.00")
        yield api
    stores.close_all()


def raw(api: Api, path: str, body: bytes, headers: dict[str, str]) -> Any:
    sent = {**JSON, "Idempotency-Key": uuid.uuid4().hex, **headers}
    return api.client.post(path, content=body, headers=sent)


def refusal(answer: Any) -> tuple[int, str]:
    assert answer.headers["content-type"] == "application/problem+json", answer.text
    return answer.status_code, answer.json()["code"]


MALFORMED = b'{"mode": "real", "amount": '


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, (401, "unauthenticated")),
        (AUDITOR, (403, "forbidden_role")),
        (SERVICE, (400, "malformed_json")),
    ],
)
def test_a_malformed_body_is_judged_only_once_the_caller_is_known(
    edge: Api, headers: dict[str, str], expected: tuple[int, str]
) -> None:
    answer = raw(edge, "/v1/players/alice/deposits", MALFORMED, headers)
    assert refusal(answer) == expected


def test_a_body_that_is_not_utf8_is_malformed_json(edge: Api) -> None:
    body = b'{"mode": "real", "amount": "1.00", "note": "\xff\xfe"}'
    answer = raw(edge, "/v1/players/alice/deposits", body, SERVICE)
    assert refusal(answer) == (400, "malformed_json")
    assert answer.json()["detail"] == "the body is not UTF-8"


def test_a_deeply_nested_body_is_an_invalid_body(edge: Api) -> None:
    for depth in (20, 5_000):
        body = b'{"mode": "real", "amount": "1.00", "x": ' + b"[" * depth + b"]" * depth + b"}"
        answer = raw(edge, "/v1/players/alice/deposits", body, SERVICE)
        assert refusal(answer) == (422, "invalid_body")
        assert "nested more than 16 levels" in answer.json()["detail"]


def test_a_key_given_twice_is_refused_rather_than_the_last_one_winning(edge: Api) -> None:
    body = b'{"mode": "real", "amount": "1.00", "amount": "50.00"}'
    answer = raw(edge, "/v1/players/alice/deposits", body, SERVICE)
    assert refusal(answer) == (422, "invalid_body")
    assert "'amount' appears more than once" in answer.json()["detail"]
    assert edge.wallet("alice")["balance"] == "100.00"


def test_nan_is_not_json(edge: Api) -> None:
    body = b'{"mode": "real", "change": NaN, "reason": "x"}'
    answer = raw(edge, "/v1/players/alice/dealer-points/adjustments", body, OPERATOR)
    assert refusal(answer) == (400, "malformed_json")


@pytest.mark.parametrize("change", ["5", True, 5.0])
def test_points_change_must_be_a_json_integer(edge: Api, change: Any) -> None:
    body = {"mode": "real", "change": change, "reason": "loyalty"}
    answer = edge.post("/v1/players/alice/dealer-points/adjustments", body, headers=OPERATOR)
    assert refusal(answer) == (422, "invalid_request")
    assert edge.wallet("alice")["dealer_points"] == 0


def test_a_blackjack_box_or_hand_must_be_a_json_integer(edge: Api) -> None:
    opened = edge.post("/v1/blackjack/rounds", {"player_id": "alice", "mode": "real", "hall": "2"})
    round_id = opened.json()["round_id"]
    for box in ("1", True):
        answer = edge.post(f"/v1/rounds/{round_id}/bets", {"box": box, "amount": "5.00"})
        assert refusal(answer) == (422, "invalid_request")
    answer = edge.post(f"/v1/rounds/{round_id}/actions", {"box": 1, "hand": False, "action": "hit"})
    assert refusal(answer) == (422, "invalid_request")
    assert edge.wallet("alice")["held"] == "0.00"


@pytest.mark.parametrize("auto_confirm", ["yes", 1, "true"])
def test_auto_confirm_must_be_a_json_boolean(edge: Api, auto_confirm: Any) -> None:
    body = {"player_id": "alice", "mode": "real", "table_type": "I", "auto_confirm": auto_confirm}
    answer = edge.post("/v1/p2p/dealers", body)
    assert refusal(answer) == (422, "invalid_request")


@pytest.mark.parametrize(
    "name", ["", "   ", "a\x00b", "evil\u202etxt", "zero\u200bwidth", "line\u2028break", "\t"]
)
def test_a_display_name_must_be_readable(edge: Api, name: str) -> None:
    answer = edge.post("/v1/players", {"player_id": "bob", "display_name": name})
    assert refusal(answer) == (422, "invalid_request")
    assert edge.get("/v1/players/bob").status_code == 404


def test_a_display_name_may_be_any_script(edge: Api) -> None:
    answer = edge.post("/v1/players", {"player_id": "zoe", "display_name": "Zoë Ωμέγα 李"})
    assert answer.status_code == 201, answer.text


def test_a_request_id_is_echoed_within_limits_and_refused_beyond(edge: Api) -> None:
    fine = edge.get("/v1/players/alice", headers={**SERVICE, "X-Request-ID": "r" * 128})
    assert (fine.status_code, fine.headers["x-request-id"]) == (200, "r" * 128)
    for bad in ("r" * 129, "has space", "é"):
        answer = edge.client.get(
            "/v1/players/alice", headers={**SERVICE, "X-Request-ID": bad.encode()}
        )
        assert refusal(answer) == (400, "invalid_request_id")
        assert answer.headers["x-request-id"] != bad  # a fresh id, to quote in a ticket


def test_an_overlong_key_is_unknown_without_being_compared(edge: Api) -> None:
    answer = edge.get("/v1/players/alice", headers={"Authorization": "Bearer " + "k" * 600})
    assert refusal(answer) == (401, "unauthenticated")


def test_a_commission_report_from_after_to_is_refused(edge: Api) -> None:
    answer = edge.get("/v1/reports/commission?from=2024-05-02&to=2024-05-01", headers=OPERATOR)
    assert refusal(answer) == (422, "invalid_request")
    assert "is after to" in answer.json()["detail"]
    same_day = edge.get("/v1/reports/commission?from=2024-05-01&to=2024-05-01", headers=OPERATOR)
    assert same_day.status_code == 200


def test_a_server_failure_is_problem_json_too(edge: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> Any:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr("infra.http.routes.players.player_view", broken)
    client = TestClient(edge.client.app, raise_server_exceptions=False)
    answer = client.get("/v1/players/alice", headers=SERVICE)
    assert refusal(answer) == (500, "internal_error")
    assert "a bug of ours" not in answer.text


def test_an_unknown_path_and_a_wrong_method_are_problem_json(edge: Api) -> None:
    assert refusal(edge.get("/v1/nowhere")) == (404, "not_found")
    assert refusal(edge.client.put("/v1/players", headers=SERVICE)) == (405, "method_not_allowed")
