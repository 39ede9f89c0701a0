"""The event store itself: immutable rows, a schema the project creates, restarts."""

import sqlite3

import psycopg
import pytest

from infra.store.store import Store
from tests.conftest import POSTGRES_URL, StoreFactory, every_store_event


def _tamper(stores: StoreFactory, statement: str) -> None:
    if stores.backend == "sqlite":
        path = stores.url.removeprefix("sqlite:///")
        with sqlite3.connect(path) as connection:
            connection.execute(statement.format(events="stored_events"))
    else:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(statement.format(events=f"{stores.schema}.casino_events"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE {events} SET topic = 'forged'",
        "DELETE FROM {events}",
    ],
)
def test_the_store_refuses_to_update_or_delete_stored_events(
    stores: StoreFactory, store: Store, statement: str
) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 1000)
    before = [(e.originator_id, e.originator_version, type(e)) for e in every_store_event(store)]
    with pytest.raises((sqlite3.DatabaseError, psycopg.Error), match="immutable"):
        _tamper(stores, statement)
    after = [(e.originator_id, e.originator_version, type(e)) for e in every_store_event(store)]
    assert after == before
    assert store.app.wallet("alice", "real").balance_cents == 1000


def test_emptying_the_event_table_at_once_is_refused(stores: StoreFactory, store: Store) -> None:
    store.app.register_player("alice", "Alice")
    # SQLite has no TRUNCATE; its whole-table DELETE is the same shortcut, and triggers stop it.
    statement = "TRUNCATE {events}" if stores.backend == "postgres" else "DELETE FROM {events}"
    with pytest.raises((sqlite3.DatabaseError, psycopg.Error), match="immutable"):
        _tamper(stores, statement)
    assert store.app.player("alice").display_name == "Alice"


def test_opening_the_store_again_keeps_everything(stores: StoreFactory, store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "play", 2500)
    restarted = stores.open()
    assert restarted.app.wallet("alice", "play").balance_cents == 2500
    assert len(every_store_event(restarted)) == len(every_store_event(store))


def test_a_new_sqlite_store_is_a_file_created_on_first_start(tmp_path: object) -> None:
    from pathlib import Path

    from infra.store.store import open_store

    path = Path(str(tmp_path)) / "nested" / "dir" / "casino.sqlite"
    opened = open_store(f"sqlite:///{path}")
    opened.app.register_player("bob", "Bob")
    opened.close()
    assert path.exists()


def test_players_are_snapshotted_every_200_events(store: Store) -> None:
    app = store.app
    app.register_player("alice", "Alice")
    for _ in range(110):
        app.disconnect("alice")
        app.reconnect("alice")
    player = app.player("alice")
    assert player.version == 221 and player.connected
    snapshots = list(app.snapshots.get(player.id)) if app.snapshots is not None else []
    assert [snapshot.originator_version for snapshot in snapshots] == [200]
