import json

import pytest

from infra.logs import configure_logging
from tests.conftest import Api


def test_each_request_writes_one_json_line_with_its_ids_and_timing(
    api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info")
    api.player("alice")
    capsys.readouterr()
    answer = api.client.post(
        "/v1/players/alice/deposits",
        json={"mode": "real", "amount": "1.00"},
        headers={
            "Authorization": "Bearer dev-service",
            "Idempotency-Key": "k",
            "X-Request-ID": "req-7",
        },
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(lines) == 1
    line = lines[0]
    assert line["request_id"] == "req-7" == answer.headers["x-request-id"]
    assert line["route"] == "/v1/players/{player_id}/deposits"
    assert line["status"] == 201
    assert line["player_id"] == "alice"
    assert line["role"] == "service"
    assert line["duration_ms"] >= 0


def test_refused_requests_are_logged_too(api: Api, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info")
    api.client.post("/v1/players", content=b"x" * 100_000, headers={"Idempotency-Key": "k"})
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert [line["status"] for line in lines] == [413]


def test_ids_named_in_a_command_body_are_logged(
    api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("info")
    capsys.readouterr()
    api.post("/v1/players", {"player_id": "zoe", "display_name": "Zoe"})
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert [(line["route"], line["player_id"]) for line in lines] == [("/v1/players", "zoe")]
