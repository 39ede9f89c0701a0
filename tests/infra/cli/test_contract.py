"""The command line as people expect it: --version, --json where a script reads the
result, one exit status table (0 holds, 1 discrepancy, 2 usage or configuration)
for every command, and help that reads as sentences at any terminal width."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from infra.cli import app
from infra.store.store import Store, open_store
from tests.conftest import SEAL_KEY


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    # Sealed with the test key, which verify is pinned to (tests/conftest.py).
    opened = open_store(f"sqlite:///{tmp_path / 'casino.sqlite'}", seal_key=SEAL_KEY)
    opened.app.register_player("alice", "Alice")
    opened.app.deposit("alice", "real", 500)
    opened.projector.catch_up()
    yield opened
    opened.close()


def casino(store: Store, *arguments: str) -> Any:
    return CliRunner().invoke(app, list(arguments), env={"CASINO_DATABASE_URL": store.url})


def damage_the_read_models(store: Store) -> None:
    with store.database.write() as cursor:
        cursor.execute("DELETE FROM ledger_entries")


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert (result.exit_code, result.output) == (0, f"casino {version('casino-ledger')}\n")


def test_verify_json_says_whether_all_holds_and_exits_by_it(store: Store) -> None:
    held = casino(store, "audit", "verify", "--json")
    assert held.exit_code == 0, held.output
    report = json.loads(held.output)
    assert (report["holds"], report["discrepancies"], report["events"]) == (True, [], 4)
    assert report["head"].startswith("4:")
    damage_the_read_models(store)
    broken = casino(store, "audit", "verify", "--json")
    assert broken.exit_code == 1
    report = json.loads(broken.output)
    assert report["holds"] is False
    assert any("ledger_entries" in problem for problem in report["discrepancies"])


def test_rebuild_check_json_lists_the_differences_and_exits_1(store: Store) -> None:
    same = casino(store, "projections", "rebuild", "--check", "--json")
    assert (same.exit_code, json.loads(same.output)["holds"]) == (0, True)
    damage_the_read_models(store)
    differs = casino(store, "projections", "rebuild", "--check", "--json")
    assert differs.exit_code == 1
    result = json.loads(differs.output)
    assert (result["holds"], result["replaced"], result["position"]) == (False, False, 4)
    assert result["differences"] == [
        "ledger_entries: 1 rows only in the rebuild, e.g. "
        + result["differences"][0].split("e.g. ", 1)[1]
    ]
    fixed = casino(store, "projections", "rebuild", "--json")
    assert (fixed.exit_code, json.loads(fixed.output)["replaced"]) == (0, True)


def test_replay_json_is_the_rounds_timeline(store: Store) -> None:
    store.app.deposit("alice", "real", 10_000)
    opened = store.app.open_house_round("alice", "real", None).result
    assert opened is not None
    store.app.place_bet(opened.round_id, "banker", 1_000)
    result = casino(store, "audit", "replay", opened.round_id, "--json")
    assert result.exit_code == 0, result.output
    timeline = json.loads(result.output)
    assert timeline["round_id"] == opened.round_id
    assert [event["type"] for event in timeline["events"]][-1] == "BetPlaced"
    assert all("seed" not in event["data"] for event in timeline["events"])  # not over yet
    unknown = casino(store, "audit", "replay", "no-such-round", "--json")
    assert unknown.exit_code == 2


@pytest.mark.parametrize(
    "arguments",
    [
        ["audit", "verify"],
        ["audit", "verify", "--json"],
        ["audit", "replay", "r"],
        ["audit", "export"],
        ["projections", "rebuild", "--check"],
        ["reports", "revenue"],
        ["reports", "rtp", "--game", "baccarat", "--json"],
    ],
)
def test_a_command_that_only_reads_never_creates_a_store(
    tmp_path: Path, arguments: list[str]
) -> None:
    path = tmp_path / "nowhere" / "casino.sqlite"
    result = CliRunner().invoke(app, arguments, env={"CASINO_DATABASE_URL": f"sqlite:///{path}"})
    assert result.exit_code == 2
    assert "no store" in result.output
    assert not path.parent.exists()


@pytest.mark.parametrize(
    "arguments",
    [
        ["audit", "verify", "--anchor", "not-an-anchor"],
        ["audit", "export", "--format", "xml"],
        ["rules", "baccarat"],
        ["serve", "--port", "http"],
        ["no-such-command"],
    ],
)
def test_usage_errors_exit_2(store: Store, arguments: list[str]) -> None:
    assert casino(store, *arguments).exit_code == 2


def test_a_bad_setting_exits_2_naming_it(store: Store) -> None:
    result = CliRunner().invoke(
        app, ["audit", "verify"], env={"CASINO_DATABASE_URL": store.url, "CASINO_ENV": "moon"}
    )
    assert result.exit_code == 2
    assert "CASINO_ENV" in result.output


def every_command(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, command in getattr(group, "commands", {}).items():
        yield from every_command(command, (*path, name))


def description(help_text: str) -> list[list[str]]:
    """The paragraphs of a help page's description, as rendered lines."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("╭")), len(lines))
    paragraphs: list[list[str]] = [[]]
    for line in lines[start:end]:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return [paragraph for paragraph in paragraphs if paragraph]


@pytest.mark.parametrize("width", [60, 80, 120])
def test_help_texts_do_not_break_mid_sentence(width: int) -> None:
    paths = list(every_command(typer.main.get_command(app)))
    assert len(paths) >= 10
    for path in paths:
        result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width)})
        assert result.exit_code == 0, path
        for paragraph in description(result.output):
            for line, following in itertools.pairwise(paragraph):
                next_word = following.split()[0]
                # Wrapped only where the next word would not have fitted.
                assert len(line) + 1 + len(next_word) > width - 4, (path, width, line, following)
