import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from infra.http.routes import players
from infra.logs import configure_logging
from tests.conftest import SERVICE, Api


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


def test_a_library_line_logged_during_a_request_is_json_with_the_request_id(
    api: Api, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    configure_logging("info")
    api.player("alice")
    view = players.player_view

    def talkative(player: object) -> object:
        logging.getLogger("some.library").warning("looked %s up", "a player")
        return view(player)  # type: ignore[arg-type]

    monkeypatch.setattr(players, "player_view", talkative)
    capsys.readouterr()
    api.client.get("/v1/players/alice", headers={**SERVICE, "X-Request-ID": "req-9"})
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    library = next(line for line in lines if line["logger"] == "some.library")
    assert library["event"] == "looked a player up"
    assert library["level"] == "warning"
    assert library["request_id"] == "req-9"
    assert [line["request_id"] for line in lines] == ["req-9", "req-9"]


def test_every_line_a_real_server_prints_is_json(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CASINO_")},
        "CASINO_DATABASE_URL": f"sqlite:///{tmp_path / 'casino.sqlite'}",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "infra.cli", "serve", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"http://127.0.0.1:{port}/v1/health/live", timeout=5)
                break
            time.sleep(0.1)
        httpx.get(f"http://127.0.0.1:{port}/v1/nowhere", timeout=5)
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]  # each JSON
    loggers = {line.get("logger") for line in lines}
    assert "uvicorn.error" in loggers  # uvicorn's own start-up and shut-down lines
    assert "casino.serve" in loggers
    assert any(line["event"] == "dev_keys_in_use" for line in lines)
    assert [line["status"] for line in lines if line["event"] == "request"][-1] == 404
