from pathlib import Path

import pytest

from infra.config import DEV_KEYS, ConfigError, load_settings
from infra.secrets import SecretKeyError, new_key

KEY = "ab" * 32
# Production's witness is a stream (never reached here: settings only name it).
STREAM = "nats://casino:pw@127.0.0.1:4222/CASINO"


def test_defaults_use_an_sqlite_file_under_var_and_the_dev_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("CASINO_DATABASE_URL", "CASINO_API_KEYS", "CASINO_ENV", "CASINO_TEST_MODE"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert settings.database_url == "sqlite:///var/casino.sqlite"
    assert settings.keys() == DEV_KEYS
    assert settings.uses_dev_keys


def test_configured_keys_replace_the_dev_keys() -> None:
    settings = load_settings(api_keys="service=s3cret, operator=op-key,auditor=aud")
    assert settings.keys() == {"s3cret": "service", "op-key": "operator", "aud": "auditor"}


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"database_url": "mysql://x"}, "CASINO_DATABASE_URL"),
        ({"database_url": "sqlite:///"}, "CASINO_DATABASE_URL"),
        ({"api_keys": "admin=x"}, "CASINO_API_KEYS"),
        ({"api_keys": "service"}, "CASINO_API_KEYS"),
        ({"env": "staging"}, "CASINO_ENV"),
        ({"idle_timeout_seconds": 0}, "CASINO_IDLE_TIMEOUT_SECONDS"),
        ({"test_mode": "perhaps"}, "CASINO_TEST_MODE"),
        ({"witness": "nats://127.0.0.1:4222/CASINO"}, "CASINO_WITNESS"),  # no user
        ({"witness": "nats://u:p@127.0.0.1/CASINO"}, "CASINO_WITNESS"),  # no port
        ({"witness": "nats://u:p@127.0.0.1:4222/"}, "CASINO_WITNESS"),  # no stream
        ({"witness": "nats://u:p@127.0.0.1:4222/A.B"}, "CASINO_WITNESS"),
        ({"witness": "https://u:p@127.0.0.1:4222/CASINO"}, "CASINO_WITNESS"),
        ({"witness_public_key": "not a key"}, "CASINO_WITNESS_PUBLIC_KEY"),
    ],
)
def test_a_bad_setting_stops_start_up_and_names_itself(
    overrides: dict[str, object], named: str
) -> None:
    with pytest.raises(ConfigError, match=named):
        load_settings(**overrides)


def test_production_refuses_the_dev_keys_and_test_mode() -> None:
    with pytest.raises(ConfigError, match="CASINO_API_KEYS"):
        load_settings(env="production")
    with pytest.raises(ConfigError, match="CASINO_API_KEYS"):
        load_settings(env="production", api_keys="service=dev-service")
    with pytest.raises(ConfigError, match="CASINO_TEST_MODE"):
        load_settings(env="production", api_keys="service=k1", test_mode=True)
    production = load_settings(env="production", api_keys="service=k1", witness=STREAM)
    assert production.keys() == {"k1": "service"}


def test_production_refuses_a_witness_file_and_takes_a_stream() -> None:
    with pytest.raises(ConfigError, match="CASINO_WITNESS: production refuses a witness file"):
        load_settings(env="production", api_keys="service=k1", witness="var/witness.jsonl")
    production = load_settings(env="production", api_keys="service=k1", witness=STREAM)
    assert production.witness == STREAM


def test_a_bad_witness_url_is_named_without_its_password() -> None:
    with pytest.raises(ConfigError, match="CASINO_WITNESS") as refused:
        load_settings(witness="nats://casino:s3cret@127.0.0.1:4222/a.b")
    assert "s3cret" not in str(refused.value)
    assert "s3cret" not in repr(load_settings(witness="nats://casino:s3cret@h:4222/CASINO"))


def test_production_refuses_to_seal_seeds_without_a_secret_key() -> None:
    production = load_settings(env="production", api_keys="service=k1", witness=STREAM)
    with pytest.raises(ConfigError, match="CASINO_SECRET_KEY"):
        production.secret_box()
    configured = load_settings(
        env="production", api_keys="service=k1", secret_key=KEY, witness=STREAM
    )
    assert configured.secret_box()[1] is None


def test_a_secret_key_seals_what_only_it_opens_for_that_round() -> None:
    # Given the box of a configured key,
    box, warning = load_settings(secret_key=KEY).secret_box()
    assert warning is None
    sealed = box.seal(b"the seed", "commitment-1")
    # then the sealed text does not show the secret, and opens only for its own round
    assert b"the seed" not in sealed.encode() and box.open(sealed, "commitment-1") == b"the seed"
    with pytest.raises(SecretKeyError):
        box.open(sealed, "commitment-2")
    # and another key cannot open it.
    other, _ = load_settings(secret_key=new_key()).secret_box()
    with pytest.raises(SecretKeyError, match="CASINO_SECRET_KEY"):
        other.open(sealed, "commitment-1")


def test_a_malformed_secret_key_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match="CASINO_SECRET_KEY"):
        load_settings(secret_key="not hex")


def test_development_makes_a_secret_key_once_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    box, warning = load_settings().secret_box()
    assert warning is not None and "var/secret.key (made now)" in warning
    assert (tmp_path / "var/secret.key").stat().st_mode & 0o777 == 0o600
    again, warning = load_settings().secret_box()
    assert warning is not None and "made now" not in warning
    assert again.open(box.seal(b"s", "c"), "c") == b"s"  # the same key, read back


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASINO_IDLE_TIMEOUT_SECONDS", "42")
    monkeypatch.setenv("CASINO_DATABASE_URL", "postgresql://u@h:5433/db")
    settings = load_settings()
    assert (settings.idle_timeout_seconds, settings.database_url) == (
        42,
        "postgresql://u@h:5433/db",
    )
