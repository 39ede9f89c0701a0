"""The tenant directory (CASINO_TENANTS): its shape, and what it refuses at start-up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.config import DEV_KEYS, ConfigError, load_settings, parse_api_keys
from infra.tenants import DEFAULT, load_tenants
from tests.infra.tenants.conftest import tenant_entry


def directory(tmp_path: Path, *names: str, **changes: dict[str, object]) -> str:
    tenants = {
        name: {**tenant_entry(name, f"sqlite:///{tmp_path / name}.sqlite", name,
                              tmp_path / f"{name}.jsonl"), **changes.get(name, {})}
        for name in names
    }  # fmt: skip
    return json.dumps({"tenants": tenants})


def test_without_a_directory_there_is_the_one_tenant_default_as_configured() -> None:
    settings = load_settings(api_keys="service=s1")
    tenants = load_tenants(settings)
    assert list(tenants) == [DEFAULT]
    assert tenants[DEFAULT].settings is settings


def test_each_tenant_has_its_store_keys_and_witness(tmp_path: Path) -> None:
    tenants = load_tenants(load_settings(tenants=directory(tmp_path, "alpha", "beta")))
    alpha, beta = tenants["alpha"].settings, tenants["beta"].settings
    assert alpha.database_url != beta.database_url and alpha.witness != beta.witness
    assert alpha.seal_key != beta.seal_key and alpha.secret_key != beta.secret_key
    roles = ("service", "operator", "auditor")
    assert parse_api_keys(alpha.api_keys) == {f"alpha-{role}": role for role in roles}
    assert alpha.postgres_schema == "alpha"


def test_the_directory_may_be_a_file(tmp_path: Path) -> None:
    path = tmp_path / "tenants.json"
    path.write_text(directory(tmp_path, "alpha"))
    assert list(load_tenants(load_settings(tenants=str(path)))) == ["alpha"]


def test_the_dev_keys_reach_the_tenant_default_and_no_other(tmp_path: Path) -> None:
    tenants = load_tenants(load_settings(tenants=directory(tmp_path, "default", "beta")))
    assert set(DEV_KEYS) <= set(parse_api_keys(tenants["default"].settings.api_keys))
    assert not set(DEV_KEYS) & set(parse_api_keys(tenants["beta"].settings.api_keys))


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"beta": {"api_keys": {"service": "alpha-service"}}}, "share an API key"),
        ({"beta": {"database_url": "same"}}, "share a store"),
        ({"beta": {"witness": "same"}}, "share a witness"),
        ({"beta": {"seal_key": None}}, "beta: needs its own seal_key"),
        ({"beta": {"secret_key": ""}}, "beta: needs its own secret_key"),
        ({"beta": {"shard": 3}}, "beta: unknown shard"),
        ({"beta": {"api_keys": {}}}, "beta: needs api_keys"),
        ({"beta": {"api_keys": {"croupier": "x"}}}, "beta: api_keys maps"),
    ],
)
def test_what_two_tenants_share_or_a_tenant_lacks_stops_the_start(
    tmp_path: Path, changes: dict[str, dict[str, object]], named: str
) -> None:
    text = json.loads(directory(tmp_path, "alpha", "beta", **changes))
    for name, change in changes.items():
        for field, value in change.items():
            if value == "same":  # the same as alpha's
                text["tenants"][name][field] = text["tenants"]["alpha"][field]
    with pytest.raises(ConfigError, match=named):
        load_tenants(load_settings(tenants=json.dumps(text)))


def test_a_directory_not_of_the_shape_names_what_is_wrong(tmp_path: Path) -> None:
    for text, named in (
        ("{not json", "not JSON"),
        ('{"brands": {}}', '"tenants"'),
        ('{"tenants": {"Alpha!": {"database_url": "sqlite:///a"}}}', "is not a name"),
        ("/no/such/file.json", "neither JSON nor a file"),
    ):
        with pytest.raises(ConfigError, match=named):
            load_tenants(load_settings(tenants=text))


def test_production_refuses_a_dev_key_in_any_tenant(tmp_path: Path) -> None:
    stream = "nats://u:p@127.0.0.1:4222/ALPHA"
    text = directory(
        tmp_path, "alpha", alpha={"api_keys": {"service": "dev-service"}, "witness": stream}
    )
    with pytest.raises(ConfigError, match=r"tenant alpha: .*dev"):
        load_tenants(load_settings(tenants=text, env="production", api_keys="service=x",
                                   witness="nats://u:p@127.0.0.1:4222/W"))  # fmt: skip
