"""`casino audit verify` finds nothing on an honest store, and names what was tampered with."""

import sqlite3
from pathlib import Path

import psycopg
from typer.testing import CliRunner

from domain.games import GameSettings
from infra.audit import verify
from infra.cli import app as cli
from infra.store import Store, open_store
from tests.conftest import POSTGRES_URL, StoreFactory

PLAYER_WINS = ["9", "K", "K", "K"]


def play_some_rounds(store: Store) -> str:
    app = store.app
    for name in ("dan", "pat"):
        app.register_player(name, name)
        app.deposit(name, "real", 500_000)
    app.adjust_points("dan", "real", 100, "qualifies")
    house = app.open_house_round("pat", "real", PLAYER_WINS).result
    assert house is not None
    app.place_bet(house.round_id, "player", 1000)
    app.deal(house.round_id)
    table = app.sit_as_dealer("dan", "real", "II", False).result
    assert table is not None
    app.join_as_player("pat", "real", "II")
    p2p = app.confirm(table.table_id).result
    assert p2p is not None
    app.place_bet(p2p.round_id, "banker", 2500)
    app.deal(p2p.round_id)
    voided = app.confirm(table.table_id).result
    assert voided is not None
    app.place_bet(voided.round_id, "tie", 500)
    app.leave_table(table.table_id, "pat")
    store.projector.catch_up()  # As the server's worker does within a second: chains them.
    return house.round_id


def tamper(stores: StoreFactory, sqlite_sql: str, postgres_sql: str) -> None:
    """What someone with the database's keys could do: switch the guard off, then edit."""
    if stores.backend == "sqlite":
        with sqlite3.connect(stores.url.removeprefix("sqlite:///")) as connection:
            connection.execute("DROP TRIGGER stored_events_refuse_update")
            connection.execute("DROP TRIGGER stored_events_refuse_delete")
            connection.execute(sqlite_sql)
    else:
        events = f"{stores.schema}.casino_events"
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f"ALTER TABLE {events} DISABLE TRIGGER USER")  # type: ignore[arg-type]
            connection.execute(postgres_sql.format(events=events))  # type: ignore[arg-type]


def test_an_honest_store_verifies_clean(store: Store) -> None:
    play_some_rounds(store)
    report = verify(store, None, lambda _: None)
    assert report.problems == []
    assert report.rounds == 3
    assert report.events > 30
    assert len(report.head_link) == 64


def test_an_altered_payout_is_named(stores: StoreFactory, store: Store) -> None:
    round_id = play_some_rounds(store)
    topic = "casino:BaccaratRound.PayoutMade"
    tamper(
        stores,
        "UPDATE stored_events SET state = CAST(REPLACE(CAST(state AS TEXT),"
        f" '\"net_cents\":1000', '\"net_cents\":9000') AS BLOB) WHERE topic = '{topic}'",
        "UPDATE {events} SET state = convert_to(replace(convert_from(state, 'UTF8'),"
        f" '\"net_cents\":1000', '\"net_cents\":9000'), 'UTF8') WHERE topic = '{topic}'",
    )
    problems = verify(store, None, lambda _: None).problems
    assert any("differs from the chain" in problem for problem in problems)
    assert any(f"round {round_id}: player paid 9000, due 1000" in p for p in problems)


def test_a_removed_event_is_named(stores: StoreFactory, store: Store) -> None:
    play_some_rounds(store)
    topic = "casino:Wallet.CommissionCharged"
    tamper(
        stores,
        f"DELETE FROM stored_events WHERE topic = '{topic}'",
        f"DELETE FROM {{events}} WHERE topic = '{topic}'",
    )
    problems = verify(store, None, lambda _: None).problems
    assert any("has been removed" in problem for problem in problems)
    assert any("an event is missing" in problem for problem in problems)
    assert any("read model disagrees with the events" in problem for problem in problems)
    assert any("CommissionCharged None, the round says" in problem for problem in problems)


def test_the_cli_verifies_one_round_and_replays_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'casino.sqlite'}"
    store = open_store(url, games=GameSettings(test_mode=True))
    round_id = play_some_rounds(store)
    store.close()
    runner = CliRunner()
    env = {"CASINO_DATABASE_URL": url}
    verified = runner.invoke(cli, ["audit", "verify", "--round", round_id], env=env)
    assert verified.exit_code == 0, verified.output
    assert "checked" in verified.output and "1 rounds: all holds" in verified.output
    replayed = runner.invoke(cli, ["audit", "replay", round_id], env=env)
    assert replayed.exit_code == 0, replayed.output
    kinds = [line.split()[3] for line in replayed.output.splitlines()]
    assert kinds[0] == "Opened" and kinds[-1] == "Settled"
    missing = runner.invoke(cli, ["audit", "replay", "nope"], env=env)
    assert missing.exit_code == 2
