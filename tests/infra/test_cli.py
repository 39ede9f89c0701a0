import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from infra.cli import app
from infra.store.store import open_store


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
