"""`casino --tenant NAME ...` and `casino tenants list` (docs/cli.md)."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from infra.cli import app
from tests.infra.tenants.conftest import Brand, directory_of


def test_each_tenants_verify_passes_on_its_own_log_with_its_own_key_only(
    served: TestClient, brands: dict[str, Brand]
) -> None:
    alpha, beta = brands["alpha"], brands["beta"]
    for brand in (alpha, beta):
        player = {"player_id": "alice", "display_name": "Alice"}
        assert served.post("/v1/players", json=player, headers=brand.headers()).status_code == 201
    env = {"CASINO_TENANTS": directory_of(brands)}
    for brand in (alpha, beta):
        verify = ["--tenant", brand.name, "audit", "verify", "--public-key", brand.public_key]
        result = CliRunner().invoke(app, verify, env=env)
        assert result.exit_code == 0, result.output
    # Alpha's log is not sealed by beta's key: pinned to it, verify names the seals.
    crossed = ["--tenant", "alpha", "audit", "verify", "--public-key", beta.public_key]
    assert CliRunner().invoke(app, crossed, env=env).exit_code == 1


def test_a_tenant_not_in_the_directory_is_a_usage_error(brands: dict[str, Brand]) -> None:
    env = {"CASINO_TENANTS": directory_of(brands)}
    for arguments in (["--tenant", "gamma", "audit", "verify"], ["audit", "verify"]):
        result = CliRunner().invoke(app, arguments, env=env)
        assert result.exit_code == 2
        assert "the tenants are alpha, beta" in result.output


def test_tenants_list_names_each_tenants_place_head_and_lag(
    served: TestClient, brands: dict[str, Brand]
) -> None:
    player = {"player_id": "alice", "display_name": "Alice"}
    assert served.post("/v1/players", json=player, headers=brands["alpha"].headers()).is_success
    env = {"CASINO_TENANTS": directory_of(brands)}
    result = CliRunner().invoke(app, ["tenants", "list", "--json"], env=env)
    assert result.exit_code == 0, result.output
    listed = {row["tenant"]: row for row in json.loads(result.output)["tenants"]}
    assert set(listed) == {"alpha", "beta"}
    assert listed["alpha"]["head"] > listed["beta"]["head"] == 0
    assert all(row["reachable"] and row["lag"] >= 0 for row in listed.values())
    text = CliRunner().invoke(app, ["tenants", "list"], env=env).output
    assert "alpha" in text and "beta" in text
