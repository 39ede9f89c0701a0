"""The lane (infra/http/lane.py) answers every request as FastAPI's own routing does.

The same requests go to two apps on two new stores, one with the lane and one
without; each answer must match: status, problem code (or the answer's fields), the
replay header, and what a read afterwards shows. Ids and times differ between
stores, so those are not compared.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from infra.config import load_settings
from infra.http.app import create_app
from infra.http.idempotency import service_command
from infra.http.lane import CommandLane
from infra.http.problems import Problem
from tests.conftest import StoreFactory

SERVICE = {"Authorization": "Bearer dev-service"}
AUDITOR = {"Authorization": "Bearer dev-auditor"}
JSON = {"Content-Type": "application/json"}

# (method, path, headers, raw body): refusals of every kind, then a round played.
REQUESTS: list[tuple[str, str, dict[str, str], bytes | None]] = [
    ("POST", "/v1/players", {**SERVICE, **JSON, "Idempotency-Key": "r1"},
     b'{"player_id": "alice", "display_name": "Alice"}'),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d1"},
     b'{"mode": "real", "amount": "100.00"}'),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d1"},
     b'{"amount": "100.00",  "mode": "real"}'),  # a replay, spelt otherwise
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d1"},
     b'{"mode": "real", "amount": "5.00"}'),  # the key reused for another body
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON}, b'{"mode": "real"}'),
    ("POST", "/v1/players/alice/deposits", {**JSON, "Idempotency-Key": "d2"},
     b'{"mode": "real", "amount": "1.00"}'),
    ("POST", "/v1/players/alice/deposits", {**AUDITOR, **JSON, "Idempotency-Key": "d3"},
     b'{"mode": "real", "amount": "1.00"}'),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d4"},
     b'{"mode": "real", "amount": "abc"}'),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d5"},
     b'{"mode": "real"'),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d6"},
     b'{"mode": "real", "amount": "1.00", "amount": "90.00"}'),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d7"}, b"[]"),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d8"}, b""),
    ("POST", "/v1/players/alice/deposits",
     {**SERVICE, "Content-Type": "text/plain", "Idempotency-Key": "d9"},
     b'{"mode": "real", "amount": "1.00"}'),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, "Idempotency-Key": "d10"},
     b'{"mode": "real", "amount": "1.00"}'),
    ("POST", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d11"},
     b'{"mode": "real", "amount": "1.00", "extra": 1}'),
    ("POST", "/v1/players/nobody/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d12"},
     b'{"mode": "real", "amount": "1.00"}'),
    ("PUT", "/v1/players/alice/deposits", {**SERVICE, **JSON, "Idempotency-Key": "d13"},
     b'{"mode": "real", "amount": "1.00"}'),
    ("POST", "/v1/rounds/" + "x" * 81 + "/deal", {**SERVICE, "Idempotency-Key": "x1"}, None),
    ("POST", "/v1/rounds/unknown/deal", {**SERVICE, "Idempotency-Key": "x2"}, None),
    ("POST", "/v1/rounds/unknown/deal/", {**SERVICE, "Idempotency-Key": "x3"}, None),
    ("POST", "/v1/baccarat/rounds", {**SERVICE, **JSON, "Idempotency-Key": "o1"},
     b'{"player_id": "alice", "mode": "real", "shoe": ["9", "K", "K", "K"]}'),  # a natural: no draw
    ("POST", "/v1/rounds/{round}/bets", {**SERVICE, **JSON, "Idempotency-Key": "b1"},
     b'{"spot": "banker", "amount": "10.00"}'),
    ("POST", "/v1/rounds/{round}/bets", {**SERVICE, **JSON, "Idempotency-Key": "b2"},
     b'{"spot": "nowhere", "amount": "10.00"}'),
    ("POST", "/v1/rounds/{round}/deal", {**SERVICE, "Idempotency-Key": "x4"}, None),
    ("POST", "/v1/rounds/{round}/deal", {**SERVICE, "Idempotency-Key": "x4"}, None),
    ("POST", "/v1/rounds/{round}/deal", {**SERVICE, "Idempotency-Key": "x5"}, None),
    ("GET", "/v1/players/alice/wallets/real", SERVICE, None),
]  # fmt: skip


@pytest.fixture
def apps(tmp_path: Path) -> Iterator[tuple[TestClient, TestClient]]:
    (tmp_path / "laned").mkdir()
    (tmp_path / "plain").mkdir()
    laned, plain = (
        StoreFactory("sqlite", tmp_path / "laned"),
        StoreFactory("sqlite", tmp_path / "plain"),
    )
    try:
        one = create_app(laned.open(), load_settings(), background=False)
        other = create_app(plain.open(), load_settings(), background=False, lane=False)
        with TestClient(one) as first, TestClient(other) as second:
            yield first, second
    finally:
        laned.close_all()
        plain.close_all()


def seen(answer: Any) -> tuple[Any, ...]:
    """What a client acts on: status, problem code or the answer's fields, replayed?"""
    body = answer.json() if answer.content else None
    shown = body.get("code") if isinstance(body, dict) and "code" in body else _shape(body)
    return answer.status_code, shown, answer.headers.get("idempotent-replayed")


def _shape(body: Any) -> Any:
    """The answer's fields and the values that do not depend on the store's ids."""
    if not isinstance(body, dict):
        return body
    kept = ("status", "balance", "held", "available", "outcome", "amount", "mode")
    return sorted(body), {k: body[k] for k in kept if k in body}


def test_every_answer_is_the_same_with_and_without_the_lane(
    apps: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[str] = []  # paths the lane ran itself, rather than hand to FastAPI
    run = CommandLane._run

    async def counted(lane: CommandLane, route: Any, body: Any, scope: Any, *rest: Any) -> None:
        taken.append(scope["path"])
        await run(lane, route, body, scope, *rest)

    monkeypatch.setattr(CommandLane, "_run", counted)
    rounds: list[dict[str, str]] = [{}, {}]
    statuses = set()
    for method, path, headers, body in REQUESTS:
        answers = []
        for client, named in zip(apps, rounds, strict=True):
            answer = client.request(method, path.format(**named), headers=headers, content=body)
            if path == "/v1/baccarat/rounds" and answer.status_code == 201:
                named["round"] = answer.json()["round_id"]
            answers.append(seen(answer))
        assert answers[0] == answers[1], (method, path, body)
        statuses.add(answers[0][0])
    assert {200, 201, 400, 401, 403, 404, 405, 409, 422} <= statuses
    assert len(taken) >= len(REQUESTS) // 2  # only the laned app's requests are counted
    assert "/v1/rounds/unknown/deal/" not in taken  # no route's: FastAPI's 404


def test_dependencies_overridden_after_start_are_used(
    apps: tuple[TestClient, TestClient],
) -> None:
    laned = apps[0]

    async def refuse() -> None:
        raise Problem(418, "overridden", "a test's stand-in")

    laned.app.dependency_overrides[service_command] = refuse  # type: ignore[attr-defined]
    answer = laned.post(
        "/v1/players/alice/deposits",
        headers={**SERVICE, **JSON, "Idempotency-Key": "o1"},
        content=b'{"mode": "real", "amount": "1.00"}',
    )
    assert (answer.status_code, answer.json()["code"]) == (418, "overridden")
