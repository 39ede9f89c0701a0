"""The seal key: production refuses to serve without one; development makes one."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infra.cli import app as cli
from infra.config import ConfigError, load_settings
from infra.keys import seal_key_for
from infra.store.seal import new_private_key, private_key_text, public_key_text

PRODUCTION = {
    "env": "production",
    "api_keys": "service=s3cret-service-key",
    "witness": "nats://casino:pw@127.0.0.1:4222/CASINO",  # named, never reached here
}


def test_production_refuses_to_serve_without_a_seal_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="CASINO_SEAL_KEY: production refuses to start"):
        seal_key_for(load_settings(**PRODUCTION), tmp_path / "seal.key")
    answer = CliRunner().invoke(
        cli,
        ["serve"],
        env={
            "CASINO_ENV": "production",
            "CASINO_API_KEYS": PRODUCTION["api_keys"],
            "CASINO_WITNESS": PRODUCTION["witness"],
            "CASINO_DATABASE_URL": f"sqlite:///{tmp_path / 'casino.sqlite'}",
        },
    )
    assert answer.exit_code == 2
    assert "CASINO_SEAL_KEY" in answer.output
    assert not (tmp_path / "seal.key").exists()


def test_production_serves_with_the_configured_key(tmp_path: Path) -> None:
    key = new_private_key()
    settings = load_settings(**PRODUCTION, seal_key=private_key_text(key))
    found = seal_key_for(settings, tmp_path / "seal.key")
    assert public_key_text(found.public_key()) == public_key_text(key.public_key())


def test_development_makes_one_key_under_var_and_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "var" / "seal.key"
    first = seal_key_for(load_settings(), path)
    again = seal_key_for(load_settings(), path)
    assert public_key_text(first.public_key()) == public_key_text(again.public_key())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # readable by the server's user only


def test_a_seal_key_that_is_no_key_stops_start_up_naming_it() -> None:
    with pytest.raises(ConfigError, match="CASINO_SEAL_KEY"):
        load_settings(seal_key="not-a-key")
