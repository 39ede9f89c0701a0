"""`casino reports revenue|rtp`: the HTTP reports' figures for auditors without HTTP."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from domain.settings import GameSettings
from infra.cli import app
from infra.store.store import Store, open_store

TODAY = datetime.datetime.now(datetime.UTC).date().isoformat()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A house baccarat round: $10 on the player, the banker's natural 9 wins."""
    opened = open_store(
        f"sqlite:///{tmp_path / 'casino.sqlite'}", games=GameSettings(test_mode=True)
    )
    opened.app.register_player("alice", "Alice")
    opened.app.deposit("alice", "real", 50_000)
    round_ = opened.app.open_house_round("alice", "real", ["K", "9", "K", "K"]).result
    assert round_ is not None
    opened.app.place_bet(round_.round_id, "player", 1000)
    opened.app.deal(round_.round_id)
    yield opened
    opened.close()


def casino(store: Store, *arguments: str) -> Any:
    return CliRunner().invoke(app, list(arguments), env={"CASINO_DATABASE_URL": store.url})


def test_the_revenue_report_as_json_brings_the_read_models_up_to_date(store: Store) -> None:
    result = casino(store, "reports", "revenue", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    row = {"period": TODAY, "game": "baccarat", "variant": "house", "rounds": 1,
           "stakes": "10.00", "returns": "0.00", "ggr": "10.00", "commission": "0.00",
           "bonus_stakes": "0.00", "bonus_returns": "0.00", "bonus_converted": "0.00",
           "ngr": "10.00"}  # fmt: skip
    assert report["rows"] == [row]
    assert report["totals"]["ltd"]["ggr"] == "10.00"
    assert report["position"] == store.projector.head()


def test_the_revenue_report_as_text_and_csv(store: Store) -> None:
    text = casino(store, "reports", "revenue", "--group", "month")
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[1].split() == [TODAY[:7], "baccarat", "house", "1", "10.00",
                                                   "0.00", "10.00", "0.00", "0.00", "0.00",
                                                   "0.00", "10.00"]  # fmt: skip
    csv = casino(store, "reports", "revenue", "--csv")
    assert csv.output.splitlines()[-1] == "ltd,all,all,1,10.00,0.00,10.00,0.00,0.00,0.00,0.00,10.00"


def test_the_rtp_report_as_json_and_text(store: Store) -> None:
    result = casino(store, "reports", "rtp", "--game", "baccarat", "--variant", "house", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["rounds"], report["actual_rtp"], report["difference_ci95"]) == (
        1,
        "0.000000",
        None,
    )
    text = casino(store, "reports", "rtp", "--game", "blackjack")
    assert "actual_rtp: -" in text.output.splitlines()
    store.app.deposit("alice", "real", 1)  # a second round, so there is an interval
    again = store.app.open_house_round("alice", "real", ["9", "K", "K", "K"]).result
    assert again is not None
    store.app.place_bet(again.round_id, "player", 1000)
    store.app.deal(again.round_id)
    lines = casino(store, "reports", "rtp", "--game", "baccarat").output.splitlines()
    assert "actual_rtp: 1.000000" in lines
    assert next(line for line in lines if line.startswith("difference_ci95: ")).count(" to ") == 1


@pytest.mark.parametrize(
    "arguments",
    [
        ["reports", "revenue", "--group", "week"],
        ["reports", "revenue", "--from", "2026-02-02", "--to", "2026-02-01"],
        ["reports", "revenue", "--to", "tomorrow"],
        ["reports", "rtp", "--game", "roulette"],
        ["reports", "rtp"],
        ["reports", "rtp", "--game", "baccarat", "--mode", "fake"],
    ],
)
def test_bad_options_exit_2(store: Store, arguments: list[str]) -> None:
    assert casino(store, *arguments).exit_code == 2
