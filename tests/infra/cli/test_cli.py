import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from infra.cli import app
from infra.store.seal import new_private_key, parse_private_key, private_key_text, public_key_text
from infra.store.store import open_store
from tests.conftest import POSTGRES_URL
from tests.projections.test_projection_failure import POISON_CENTS, ledger_refusing_the_poison


def test_a_bad_setting_stops_serve_with_its_name(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "infra.cli", "serve"],
        env={"CASINO_DATABASE_URL": "oracle://nope", "PATH": "/usr/bin"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "CASINO_DATABASE_URL" in result.stderr


def test_projections_rebuild_compares_then_replaces_what_differs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'casino.sqlite'}"
    store = open_store(url)
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 500)
    store.projector.catch_up()
    env = {"CASINO_DATABASE_URL": url}
    same = CliRunner().invoke(app, ["projections", "rebuild"], env=env)
    assert same.exit_code == 0, same.output
    assert "equal a rebuild from the events up to position 4: nothing to replace" in same.output
    with store.database.write() as cursor:
        cursor.execute("DELETE FROM ledger_entries")
    check = CliRunner().invoke(app, ["projections", "rebuild", "--check"], env=env)
    assert check.exit_code == 1
    assert "DIFFERS: ledger_entries: 1 rows only in the rebuild" in check.output
    fixed = CliRunner().invoke(app, ["projections", "rebuild"], env=env)
    assert fixed.exit_code == 0, fixed.output
    assert "replaced the live read models with the rebuild" in fixed.output
    with store.database.read() as cursor:
        cursor.execute("SELECT kind, amount_cents FROM ledger_entries")
        assert cursor.fetchall() == [("deposit", 500)]
    store.close()


UNREACHABLE = "postgresql://casino:s3cret@127.0.0.1:1/casino"  # nothing listens on port 1
EVERY_STORE_COMMAND = [
    ["serve"],
    ["audit", "verify"],
    ["audit", "replay", "r"],
    ["audit", "export"],
    ["projections", "run"],
    ["projections", "rebuild"],
    ["projections", "rebuild", "--check"],
]


@pytest.mark.parametrize("arguments", EVERY_STORE_COMMAND)
def test_an_unreachable_database_is_one_line_naming_the_setting(arguments: list[str]) -> None:
    result = CliRunner().invoke(app, arguments, env={"CASINO_DATABASE_URL": UNREACHABLE})
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if "dev_keys_in_use" not in line]
    assert line.startswith("CASINO_DATABASE_URL: cannot reach postgresql://casino:***@127.0.0.1:1")
    assert "s3cret" not in result.output  # the password is never shown


@pytest.mark.parametrize("arguments", EVERY_STORE_COMMAND[1:])
def test_audit_and_projection_commands_never_create_a_sqlite_store(
    tmp_path: Path, arguments: list[str]
) -> None:
    path = tmp_path / "nowhere" / "casino.sqlite"
    result = CliRunner().invoke(app, arguments, env={"CASINO_DATABASE_URL": f"sqlite:///{path}"})
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"no store: CASINO_DATABASE_URL: {path} does not exist (this command creates none)"
    ]
    assert not path.parent.exists()


@pytest.mark.postgres
@pytest.mark.parametrize("arguments", EVERY_STORE_COMMAND[1:])
def test_a_mistyped_postgres_schema_is_named_and_never_created(
    postgres_up: bool, arguments: list[str]
) -> None:
    if not postgres_up:
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} is not reachable")
    schema = f"typo_{uuid.uuid4().hex[:12]}"
    env = {"CASINO_DATABASE_URL": POSTGRES_URL, "CASINO_POSTGRES_SCHEMA": schema}
    result = CliRunner().invoke(app, arguments, env=env)
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert line.startswith("no store: CASINO_POSTGRES_SCHEMA:") and schema in line
    with psycopg.connect(POSTGRES_URL) as connection:
        found = connection.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (schema,)
        ).fetchone()
    assert found is None


@pytest.mark.parametrize(
    ("arguments", "projected_before"),
    [(["projections", "run"], False), (["projections", "rebuild"], True)],
)
def test_a_read_model_that_cannot_apply_an_event_stops_the_command_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: list[str], projected_before: bool
) -> None:
    # Given an event the ledger read model cannot apply (any more),
    url = f"sqlite:///{tmp_path / 'casino.sqlite'}"
    store = open_store(url)
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", POISON_CENTS)
    poison = store.projector.head()
    if projected_before:  # A rebuild meets it again from the start.
        store.projector.catch_up()
    store.close()
    ledger_refusing_the_poison(monkeypatch)
    result = CliRunner().invoke(app, arguments, env={"CASINO_DATABASE_URL": url})
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "projection" not in line[:40]]
    assert lines[-1].endswith(
        f"read model ledger cannot apply the event at position {poison}: "
        "OverflowError: Python int too large to convert to SQLite INTEGER"
    )


def test_production_refuses_to_serve_without_a_key_to_seal_seeds(tmp_path: Path) -> None:
    path = tmp_path / "casino.sqlite"
    env = {
        "CASINO_DATABASE_URL": f"sqlite:///{path}",
        "CASINO_ENV": "production",
        "CASINO_API_KEYS": "service=k1,operator=k2,auditor=k3",
        "CASINO_SEAL_KEY": private_key_text(new_private_key()),  # the log's key is there
        "CASINO_WITNESS": "nats://casino:pw@127.0.0.1:4222/CASINO",  # never reached
    }
    result = CliRunner().invoke(app, ["serve"], env=env)
    assert result.exit_code == 2
    assert "CASINO_SECRET_KEY" in result.output
    assert not path.exists()  # refused before anything is made


def sealed_store(tmp_path: Path) -> tuple[str, str]:
    """A store sealed with a key of its own; its URL and that key, as text."""
    url, key = f"sqlite:///{tmp_path / 'casino.sqlite'}", new_private_key()
    store = open_store(url, seal_key=key)
    store.app.register_player("alice", "Alice")
    store.close()
    return url, private_key_text(key)


def test_verify_in_production_wants_the_auditors_pinned_key_never_the_services(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the service's seal key in the configuration, and no pinned key
    monkeypatch.chdir(tmp_path)
    url, seal_key = sealed_store(tmp_path)
    env = {
        "CASINO_DATABASE_URL": url,
        "CASINO_ENV": "production",
        "CASINO_API_KEYS": "service=k1,operator=k2,auditor=k3",
        "CASINO_SEAL_KEY": seal_key,
        "CASINO_AUDITOR_PUBLIC_KEY": "",
        "CASINO_WITNESS": "nats://casino:secret@127.0.0.1:1/CASINO",  # production's kind
    }
    result = CliRunner().invoke(app, ["audit", "verify"], env=env)
    # Then verify refuses to take the service's word for it
    assert result.exit_code == 2
    assert "CASINO_AUDITOR_PUBLIC_KEY" in result.output
    # And with the auditor's own pinned key it checks every seal
    public = private_key_text(new_private_key())  # another key: every seal named
    pinned = public_key_text(parse_private_key(public).public_key())
    env["CASINO_AUDITOR_PUBLIC_KEY"] = pinned
    witness = tmp_path / "exported-witness.jsonl"  # the auditor's export of the stream
    witness.write_text("")
    result = CliRunner().invoke(app, ["audit", "verify", "--witness", str(witness)], env=env)
    assert result.exit_code == 1
    assert "is not signed by the service's key" in result.output


def test_verify_in_development_checks_with_the_development_key_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url, seal_key = sealed_store(tmp_path)
    (tmp_path / "var").mkdir(exist_ok=True)
    (tmp_path / "var" / "seal.key").write_text(seal_key)
    env = {"CASINO_DATABASE_URL": url, "CASINO_AUDITOR_PUBLIC_KEY": ""}
    result = CliRunner().invoke(app, ["audit", "verify"], env=env)
    assert result.exit_code == 0, result.output
    assert "signatures checked with the development key var/seal.key" in result.output
