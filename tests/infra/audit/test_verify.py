"""`casino audit verify` finds nothing on an honest store, and names what was tampered with.

Every tampering test works on the real store (the SQLite file, the PostgreSQL
schema) as someone with the database's keys would: switch the immutability
triggers off, then edit the events table, and sometimes the chain too.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import PersistenceError
from typer.testing import CliRunner

from domain.settings import GameSettings
from infra.audit.verify import AuditReport, verify
from infra.cli import app as cli
from infra.store import chain as event_chain
from infra.store import receipts
from infra.store import seal as seals
from infra.store.store import Store, open_store
from tests.conftest import POSTGRES_URL, SEAL_KEY, StoreFactory

PLAYER_WINS = ["9", "K", "K", "K"]
ROOT = Path(__file__).resolve().parents[3]
GUARDED = ("casino_events", event_chain.TABLE, seals.TABLE, "casino_snapshots", receipts.TABLE)


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
    return house.round_id


class Row:
    """One stored event as the database holds it."""

    def __init__(self, values: Sequence[Any]) -> None:
        self.position, self.stored_id = int(values[0]), str(values[1])
        self.version, self.topic, self.state = int(values[2]), str(values[3]), bytes(values[4])
        self.aggregate = str(uuid.UUID(self.stored_id))

    def link(self, previous: str) -> str:
        return event_chain.link_of(previous, self.aggregate, self.version, self.topic, self.state)

    @property
    def name(self) -> str:
        return f"{self.aggregate} version {self.version}"


class Attacker:
    """Someone with the database's keys: switches the store's guards off (the
    immutability triggers and, on PostgreSQL, the trigger that chains each insert),
    edits with raw SQL, and switches them on again so nothing looks amiss."""

    def __init__(self, stores: StoreFactory) -> None:
        self.connection: Any
        self.dialect = stores.backend
        if stores.backend == "sqlite":
            self.connection = sqlite3.connect(
                stores.url.removeprefix("sqlite:///"), isolation_level=None
            )
            self.events, self.position = "stored_events", "rowid"
            for table in ("stored_events", event_chain.TABLE, seals.TABLE, "stored_snapshots"):
                for change in ("update", "delete"):
                    self.connection.execute(f"DROP TRIGGER IF EXISTS {table}_refuse_{change}")
            for trigger in ("prune_only", "refuse_delete"):
                self.connection.execute(f"DROP TRIGGER IF EXISTS {receipts.TABLE}_{trigger}")
        else:
            self.connection = psycopg.connect(POSTGRES_URL, autocommit=True)
            self.events, self.position = "casino_events", "notification_id"
            self.connection.execute(f"SET search_path TO {stores.schema}")

    def run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if self.dialect == "sqlite":
            return self.connection.execute(sql, params)
        with self.connection.transaction():
            for table in GUARDED:
                self.connection.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            cursor = self.connection.execute(sql.replace("?", "%s"), params)
            rows = cursor.fetchall() if cursor.description else None
            for table in GUARDED:
                self.connection.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
        return _Fetched(rows)

    def rows(self) -> list[Row]:
        cursor = self.run(
            f"SELECT {self.position}, originator_id, originator_version, topic, state"
            f" FROM {self.events} ORDER BY {self.position}"
        )
        return [Row(values) for values in cursor.fetchall()]

    def row(self, topic: str, nth: int = 0) -> Row:
        return [row for row in self.rows() if row.topic == topic][nth]

    def link_at(self, position: int) -> str:
        cursor = self.run(f"SELECT link FROM {event_chain.TABLE} WHERE position = ?", (position,))
        return str(cursor.fetchone()[0])

    def set_state(self, position: int, state: bytes) -> None:
        self.run(f"UPDATE {self.events} SET state = ? WHERE {self.position} = ?", (state, position))

    def delete_event(self, position: int) -> None:
        self.run(f"DELETE FROM {self.events} WHERE {self.position} = ?", (position,))

    def delete_link(self, position: int) -> None:
        self.run(f"DELETE FROM {event_chain.TABLE} WHERE position = ?", (position,))

    def swap_positions(self, first: int, second: int) -> None:
        for old, new in ((first, -1), (second, first), (-1, second)):
            self.run(
                f"UPDATE {self.events} SET {self.position} = ? WHERE {self.position} = ?",
                (new, old),
            )

    def swap_contents(self, first: Row, second: Row) -> None:
        for position, row in ((first.position, second), (second.position, first)):
            self.run(
                f"UPDATE {self.events} SET topic = ?, state = ? WHERE {self.position} = ?",
                (row.topic, row.state, position),
            )

    def insert_event(self, row: Row, aggregate: str, version: int, at: int | None = None) -> int:
        """A copy of `row`'s topic and bytes, forged as `aggregate`'s `version`."""
        stored_id = uuid.UUID(aggregate).hex if self.dialect == "sqlite" else aggregate
        columns, values = "originator_id, originator_version, topic, state", "?, ?, ?, ?"
        params: list[Any] = [stored_id, version, row.topic, row.state]
        if at is not None:
            columns, values, params = f"{self.position}, {columns}", f"?, {values}", [at, *params]
        self.run(f"INSERT INTO {self.events} ({columns}) VALUES ({values})", params)
        return at if at is not None else max(r.position for r in self.rows())

    def insert_link(self, position: int, aggregate: str, version: int, link: str) -> None:
        self.run(
            f"INSERT INTO {event_chain.TABLE} (position, originator_id, originator_version, link)"
            " VALUES (?, ?, ?, ?)",
            (position, aggregate, version, link),
        )

    def make_room_at(self, position: int) -> None:
        """Move every event and link from `position` on one place up."""
        for table, column in ((self.events, self.position), (event_chain.TABLE, "position")):
            for shift in (1_000_000, -999_999):  # in two steps: each position stays unique
                self.run(
                    f"UPDATE {table} SET {column} = {column} + ? WHERE {column} >= ?",
                    (shift, position if shift > 0 else position + 1_000_000),
                )

    def close(self) -> None:
        self.connection.close()


class _Fetched:
    def __init__(self, rows: list[Any] | None) -> None:
        self.rows = rows or []

    def fetchall(self) -> list[Any]:
        return self.rows

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None


def problems_of(store: Store) -> list[str]:
    report = verify(store, None, lambda _: None)
    return report.problems


def named(problems: list[str], *parts: str) -> bool:
    return any(all(part in problem for part in parts) for problem in problems)


def run_cli(stores: StoreFactory, *arguments: str) -> subprocess.CompletedProcess[str]:
    """The real `casino` command, in a process of its own, on the test's store."""
    env = {
        **os.environ,
        "CASINO_DATABASE_URL": stores.url,
        "CASINO_POSTGRES_SCHEMA": stores.schema,
    }
    return subprocess.run(
        [sys.executable, "-m", "infra.cli", *arguments],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# An honest store.


def test_every_event_is_chained_in_the_transaction_that_stores_it(store: Store) -> None:
    play_some_rounds(store)
    assert store.projector.position() == 0  # No projector has run.
    notifications = store.app.recorder.select_notifications(start=1, limit=10_000)
    with store.database.read() as cursor:
        chain = event_chain.stored_links(cursor, 0, 10_000)
    assert [row.position for row in chain] == [n.id for n in notifications]
    previous = event_chain.GENESIS
    for notification, row in zip(notifications, chain, strict=True):
        previous = event_chain.link(previous, notification)
        assert (row.originator_id, row.originator_version, row.link) == (
            str(notification.originator_id),
            notification.originator_version,
            previous,
        )
    report = verify(store, None, lambda _: None)
    assert report.problems == []
    assert (report.events, report.rounds) == (len(notifications), 3)
    assert (report.head_position, report.head_link) == (notifications[-1].id, previous)


def test_concurrent_writers_keep_one_whole_chain(stores: StoreFactory, store: Store) -> None:
    other = stores.open()  # a second application on the same store, as a second process
    players = [f"p{n}" for n in range(4)]
    for player in players:
        store.app.register_player(player, player)

    def deposits(app: Any, player: str) -> None:
        for _ in range(15):
            app.deposit(player, "real", 100)

    threads = [
        threading.Thread(target=deposits, args=(app, player))
        for app, player in zip((store.app, other.app) * 2, players, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = verify(store, None, lambda _: None)
    assert report.problems == []
    assert report.events == len(players) * (3 + 15)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE event_chain SET link = 'forged'",
        "DELETE FROM event_chain WHERE position = 1",
        "UPDATE {events} SET state = state WHERE {position} = 1",
        "DELETE FROM {events} WHERE {position} = 1",
        "TRUNCATE event_chain",  # SQLite has none: its whole-table DELETE instead
    ],
)
def test_the_normal_path_refuses_to_change_events_or_their_chain(
    stores: StoreFactory, store: Store, statement: str
) -> None:
    play_some_rounds(store)
    if stores.backend == "sqlite":
        sql = statement.format(events="stored_events", position="rowid")
        sql = sql.replace("TRUNCATE", "DELETE FROM")
        with (
            pytest.raises(sqlite3.DatabaseError, match="immutable"),
            sqlite3.connect(stores.url.removeprefix("sqlite:///")) as connection,
        ):
            connection.execute(sql)
    else:
        sql = statement.format(events="casino_events", position="notification_id")
        with (
            pytest.raises(psycopg.Error, match="immutable"),
            psycopg.connect(POSTGRES_URL, autocommit=True) as connection,
        ):
            connection.execute(f"SET search_path TO {stores.schema}")  # type: ignore[arg-type]
            connection.execute(sql)  # type: ignore[arg-type]
    assert problems_of(store) == []


# One byte changed.


def test_one_changed_byte_is_named_by_verify_and_by_the_cli(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    round_id = play_some_rounds(store)
    payout = attacker.row("casino:Coup.PayoutMade")
    offset = payout.state.index(b'"net_cents":1000') + len(b'"net_cents":')
    state = bytearray(payout.state)
    state[offset] = ord("9")  # 1000 -> 9000: one byte
    attacker.set_state(payout.position, bytes(state))

    problems = problems_of(store)
    assert named(problems, f"event at position {payout.position} ({payout.name})", "altered")
    assert named(problems, f"round {round_id}: player paid 9000, due 1000")
    chain_problems = [p for p in problems if "link" in p or "chain" in p]
    assert len(chain_problems) == 1  # only that event: the rest of the chain still holds

    answer = run_cli(stores, "audit", "verify")
    assert answer.returncode == 1, answer.stdout + answer.stderr
    assert f"DISCREPANCY: event at position {payout.position} ({payout.name})" in answer.stdout
    assert "head of the event chain" in answer.stdout


def test_a_byte_that_breaks_an_event_is_named_not_a_crash(store: Store, attacker: Attacker) -> None:
    play_some_rounds(store)
    target = attacker.row("casino:Coup.CardDealt", 2)
    attacker.set_state(target.position, b"x" + target.state[1:])
    problems = problems_of(store)
    assert named(problems, f"event at position {target.position} ({target.name})", "altered")
    assert named(problems, f"event at position {target.position}", "cannot be read")


def test_a_round_id_changed_to_a_list_is_named_not_a_crash(
    store: Store, attacker: Attacker
) -> None:
    round_id = play_some_rounds(store)
    settled = attacker.row("casino:Wallet.RoundSettled")
    spelt = f'"round_id":"{round_id}"'.encode()
    assert spelt in settled.state
    attacker.set_state(
        settled.position, settled.state.replace(spelt, f'"round_id":["{round_id}"]'.encode())
    )
    problems = problems_of(store)
    assert named(problems, f"event at position {settled.position} ({settled.name})", "altered")
    assert named(problems, f"for round ['{round_id}'], which is not in the store")


# Removed.


def test_a_removed_event_is_named(store: Store, attacker: Attacker) -> None:
    play_some_rounds(store)
    store.projector.catch_up()  # as the server's worker does within a second
    removed = attacker.row("casino:Wallet.CommissionCharged")
    attacker.delete_event(removed.position)
    problems = problems_of(store)
    assert named(
        problems, f"event at position {removed.position} ({removed.name}) has been removed"
    )
    assert named(problems, f"version {removed.version + 1}) follows version {removed.version - 1}")
    assert named(problems, "read model disagrees with the events")
    assert named(problems, "CommissionCharged None, the round says")


def test_an_event_removed_with_its_link_breaks_the_chain_just_after_it(
    store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    removed = attacker.row("casino:Wallet.Deposited", 1)
    attacker.delete_event(removed.position)
    attacker.delete_link(removed.position)
    after = next(row for row in attacker.rows() if row.position > removed.position)
    problems = problems_of(store)
    assert named(
        problems,
        f"event at position {after.position} ({after.name}) does not match its link",
        f"cut or rewritten between positions {removed.position - 1} and {after.position}",
    )


def test_sqlite_and_postgres_refuse_to_chain_over_a_removed_last_event(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    last = attacker.rows()[-1]
    attacker.delete_event(last.position)
    if stores.backend == "postgres":  # Its ids never come back unless the sequence is reset.
        attacker.run(
            "SELECT setval(pg_get_serial_sequence('casino_events', 'notification_id'), ?)",
            (last.position - 1,),
        )
    with pytest.raises(PersistenceError, match="chain already reaches position"):
        store.app.deposit("pat", "real", 100)  # refused: nothing is chained over a removal
    assert named(problems_of(store), f"event at position {last.position} ({last.name}) has been")


# Swapped.


def test_two_events_swapped_in_place_are_named(store: Store, attacker: Attacker) -> None:
    play_some_rounds(store)
    first = attacker.row("casino:Wallet.Deposited", 0)
    second = attacker.row("casino:Coup.PayoutMade", 0)
    attacker.swap_positions(first.position, second.position)
    problems = problems_of(store)
    for here, there in ((first, second), (second, first)):
        assert named(
            problems,
            f"position {here.position} holds {there.name}, but the chain recorded {here.name}",
        )


def test_two_events_swapped_in_content_are_named(store: Store, attacker: Attacker) -> None:
    play_some_rounds(store)
    first = attacker.row("casino:Wallet.Deposited", 1)
    second = attacker.row("casino:Coup.CardDealt", 0)
    attacker.swap_contents(first, second)
    problems = problems_of(store)
    for row in (first, second):
        assert named(problems, f"event at position {row.position} ({row.name}) does not match")
    # The deposit's postings now ride on a round: the books notice too.
    assert named(problems, f"({second.name}) carries postings", "no wallet")


# Inserted.


def test_a_forged_event_without_a_link_is_named(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    deposit = attacker.row("casino:Wallet.Deposited", 0)
    last_version = max(r.version for r in attacker.rows() if r.aggregate == deposit.aggregate)
    forged = attacker.insert_event(deposit, deposit.aggregate, last_version + 1)
    with pytest.raises(PersistenceError, match="in no seal"):
        store.app.register_player("honest", "Honest")  # nothing is saved on top of it
    problems = problems_of(store)
    assert problems[0] == (
        f"event at position {forged} ({deposit.aggregate} version {last_version + 1}) is not "
        "in the chain: it was inserted behind the store's back"
    )
    assert named(problems, f"event at position {forged} (", "is in no seal")  # its seal too
    assert named(problems, "dan's real wallet does not replay", "ledger out of step")
    answer = run_cli(stores, "audit", "verify")
    assert answer.returncode == 1, answer.stdout + answer.stderr
    assert f"event at position {forged} ({deposit.aggregate} version" in answer.stdout


def test_a_forged_event_with_a_forged_link_breaks_the_chain_after_it(
    store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    registered = attacker.row("casino:Player.Registered", 1)
    at = registered.position + 3
    evil = attacker
    evil.make_room_at(at)
    stranger = str(uuid.uuid4())
    evil.insert_event(registered, stranger, 1, at=at)
    forged = next(row for row in evil.rows() if row.position == at)
    evil.insert_link(at, stranger, 1, forged.link(evil.link_at(at - 1)))
    problems = problems_of(store)
    assert named(
        problems,
        f"event at position {at} ({stranger} version 1) was inserted with a forged link",
        f"the link at position {at + 1} was made without it",
    )


# A chain rewritten from the tampered event on: only a link noted elsewhere shows it.


def test_a_rewritten_chain_is_caught_by_a_link_noted_earlier(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    honest = verify(store, None, lambda _: None)
    evil = attacker
    registered = evil.row("casino:Player.Registered", 0)
    evil.set_state(registered.position, registered.state.replace(b'"dan"', b'"Don"', 1))
    evil.run(f"DELETE FROM {event_chain.TABLE} WHERE position >= ?", (registered.position,))
    previous = evil.link_at(registered.position - 1) if registered.position > 1 else None
    previous = previous or event_chain.GENESIS
    for row in evil.rows():
        if row.position >= registered.position:
            previous = row.link(previous)
            evil.insert_link(row.position, row.aggregate, row.version, previous)

    rewritten: AuditReport = verify(store, None, lambda _: None)
    # The chain is consistent, as far as the store alone can tell (the seals are not:
    # tests/infra/audit/test_seals.py)
    assert not named(rewritten.problems, "chain")
    assert rewritten.head_link != honest.head_link
    anchors = {honest.head_position: honest.head_link}
    caught = verify(store, None, lambda _: None, anchors).problems
    assert named(
        caught,
        f"the chain's link at position {honest.head_position} is now {rewritten.head_link}, "
        f"not {honest.head_link} as noted: events up to it were changed and the chain rewritten",
    )
    noted = f"{honest.head_position}:{honest.head_link}"
    answer = run_cli(stores, "audit", "verify", "--anchor", noted)
    assert answer.returncode == 1, answer.stdout + answer.stderr
    assert f"link at position {honest.head_position} is now" in answer.stdout


# The command line.


def test_the_cli_verifies_one_round_and_replays_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'casino.sqlite'}"
    store = open_store(url, games=GameSettings(test_mode=True), seal_key=SEAL_KEY)
    round_id = play_some_rounds(store)
    store.close()
    runner = CliRunner()
    env = {"CASINO_DATABASE_URL": url}
    verified = runner.invoke(cli, ["audit", "verify", "--round", round_id], env=env)
    assert verified.exit_code == 0, verified.output
    assert "checked" in verified.output and "1 rounds: all holds" in verified.output
    head = verified.output.splitlines()[-1].rsplit(" ", 1)[-1]
    anchored = runner.invoke(cli, ["audit", "verify", "--anchor", head], env=env)
    assert anchored.exit_code == 0, anchored.output
    wrong = head[:-1] + ("0" if head[-1] != "0" else "1")
    mismatch = runner.invoke(cli, ["audit", "verify", "--anchor", wrong], env=env)
    assert mismatch.exit_code == 1 and "as noted" in mismatch.output
    malformed = runner.invoke(cli, ["audit", "verify", "--anchor", "12:nothex"], env=env)
    assert malformed.exit_code == 2
    replayed = runner.invoke(cli, ["audit", "replay", round_id], env=env)
    assert replayed.exit_code == 0, replayed.output
    kinds = [line.split()[3] for line in replayed.output.splitlines()]
    assert kinds[0] == "Opened" and kinds[-1] == "Settled"
    missing = runner.invoke(cli, ["audit", "replay", "nope"], env=env)
    assert missing.exit_code == 2


def test_a_read_model_that_disagrees_with_a_rebuild_is_named(store: Store) -> None:
    play_some_rounds(store)
    store.projector.catch_up()
    with store.database.write() as cursor:  # The events hold; a read model went wrong.
        cursor.execute(
            "UPDATE wallet_balances SET held_cents = 7 WHERE player_id = 'pat' AND mode = 'real'"
        )
        cursor.execute(  # each round's last event, gone from its trail
            "DELETE FROM round_trail WHERE position IN"
            " (SELECT MAX(position) FROM round_trail GROUP BY round_id)"
        )
    problems = problems_of(store)
    assert named(problems, "the read model wallet_balances: 1 rows that differ", "'pat'")
    assert named(problems, "the read model round_trail: 3 rows only in the rebuild")


def test_no_chain_link_that_depends_on_a_hidden_card_is_printed(store: Store) -> None:
    play_some_rounds(store)
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 10_000)
    shoe = ["10", "9", "8", "7"]  # Ann 18 against the dealer's 9 and, face down, a 7.
    round_ = store.app.open_blackjack_round("ann", "real", "2", shoe).result
    assert round_ is not None
    opened_at = store.projector.head()
    store.app.place_bet(round_.round_id, "1", 1000)
    store.app.deal(round_.round_id)
    in_play = verify(store, None, lambda _: None)
    assert in_play.problems == []
    assert (in_play.hidden_from, in_play.head_position) == (opened_at, opened_at - 1)
    store.app.act(round_.round_id, 1, 0, "stand")
    over = verify(store, None, lambda _: None)
    assert over.hidden_from is None and over.head_position == store.projector.head()


def test_a_round_dealt_past_the_read_models_counts_as_hidden(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    play_some_rounds(store)
    store.projector.catch_up()
    included = store.projector.position()
    monkeypatch.setattr(store.projector, "catch_up", lambda *_: 0)  # The read models lag.
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 10_000)
    round_ = store.app.open_blackjack_round("ann", "real", "2", ["10", "9", "8", "7"]).result
    assert round_ is not None
    store.app.place_bet(round_.round_id, "1", 1000)
    store.app.deal(round_.round_id)  # Unknown to the read models: perhaps a round in play.
    report = verify(store, None, lambda _: None)
    assert (report.hidden_from, report.head_position) == (included + 1, included)


def test_a_round_not_over_is_checked_without_showing_its_cards(
    store: Store, attacker: Attacker
) -> None:
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 10_000)
    round_ = store.app.open_blackjack_round("ann", "real", "2", ["10", "9", "8", "7"]).result
    assert round_ is not None
    store.app.place_bet(round_.round_id, "1", 1000)
    store.app.deal(round_.round_id)  # In play: the 7 lies face down.
    dealt = attacker.row("casino:BlackjackRound.CardDealt")
    attacker.set_state(dealt.position, dealt.state.replace(b'"10', b'"J'))
    problems = problems_of(store)
    # Its seed is sealed until it is over, so its cards cannot be checked yet; the chain
    # names the altered event, and nothing shows the card face down.
    assert named(problems, f"event at position {dealt.position} ", "does not match its link")
    assert not any("shoe" in problem or "'7" in problem for problem in problems), problems
