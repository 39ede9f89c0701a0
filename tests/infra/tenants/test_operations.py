"""Readiness, metrics and logs with tenants (docs/operations.md, "Tenants")."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from tests.infra.tenants.conftest import Brand


def test_readiness_names_each_tenants_checks(served: TestClient) -> None:
    answer = served.get("/v1/health/ready")
    assert answer.status_code == 200, answer.text
    names = {check["name"] for check in answer.json()["checks"]}
    assert {"alpha/store", "beta/store", "alpha/log", "beta/log"} <= names


def test_metrics_are_every_tenants_labelled_with_it(
    served: TestClient, brands: dict[str, Brand]
) -> None:
    player = {"player_id": "alice", "display_name": "Alice"}
    assert served.post("/v1/players", json=player, headers=brands["alpha"].headers()).is_success
    text = served.get("/metrics").text
    assert 'casino_saves_total{tenant="alpha"} 1.0' in text
    assert 'casino_saves_total{tenant="beta"} 0.0' in text
    assert text.count("# TYPE casino_saves_total counter") == 1


def test_a_request_line_names_its_tenant(
    served: TestClient, brands: dict[str, Brand], capsys: pytest.CaptureFixture[str]
) -> None:
    from infra.logs import configure_logging

    configure_logging("info")
    capsys.readouterr()
    served.get("/v1/players/nobody", headers=brands["beta"].headers())
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    requests = [line for line in lines if line.get("event") == "request"]
    assert requests and requests[-1]["tenant"] == "beta"
