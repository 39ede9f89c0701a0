import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from infra.cli import app
from infra.store import open_store


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


def test_projections_rebuild_replays_every_event(tmp_path: Path, monkeypatch: object) -> None:
    url = f"sqlite:///{tmp_path / 'casino.sqlite'}"
    store = open_store(url)
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 500)
    store.close()
    result = CliRunner().invoke(app, ["projections", "rebuild"], env={"CASINO_DATABASE_URL": url})
    assert result.exit_code == 0, result.output
    assert "rebuilt read models from 4 events" in result.output
