"""The compare of the live read models with a rebuild names every kind of difference,
with its count and its first keys, in the same words on both stores; on PostgreSQL
the server compares (projections/check.py: compared_in_the_database), and says
exactly what the page-by-page compare in Python says."""

from __future__ import annotations

from infra.audit.rebuild import compare_with_rebuild, scratch_projector
from infra.store.database import PostgresDatabase
from infra.store.store import Store
from projections.check import compared_in_the_database, differences
from projections.runner import TABLES
from tests.conftest import StoreFactory

PLAYERS = ("ann", "bob", "cat", "dan", "eve")


def tampered(store: Store) -> Store:
    """Five players' deposits, then a live read model gone wrong in every way: rows
    lost, rows added and rows changed, more of each than are named as examples."""
    for player in PLAYERS:
        store.app.register_player(player, player.title())
        store.app.deposit(player, "real", 500)
    store.projector.catch_up()
    with store.database.write() as cursor:
        cursor.execute("UPDATE wallet_balances SET balance_cents = 1 WHERE mode = 'real'")
        cursor.execute("DELETE FROM ledger_entries WHERE player_id <> 'ann'")
        for player in PLAYERS:
            cursor.execute(
                "INSERT INTO wallet_index (wallet_id, player_id, mode) VALUES (?, ?, 'real')",
                (f"forged-{player}", player),
            )
    return store


def test_every_kind_of_difference_is_counted_and_named_by_its_first_keys(store: Store) -> None:
    found = compare_with_rebuild(tampered(store), lambda _: None).differences
    assert found == [
        "wallet_index: 5 rows only in the live read model, e.g. "
        "[('forged-ann',), ('forged-bob',), ('forged-cat',)]",
        "wallet_balances: 5 rows that differ, e.g. [('ann', 'real'), ('bob', 'real'), "
        "('cat', 'real')]",
        "ledger_entries: 4 rows only in the rebuild, e.g. [('bob', 'real', 2), "
        "('cat', 'real', 2), ('dan', 'real', 2)]",
    ]


def test_the_server_names_what_the_compare_in_python_names(
    postgres_stores: StoreFactory,
) -> None:
    store = tampered(postgres_stores.open())
    with scratch_projector(store) as scratch:
        scratch.catch_up(up_to=store.projector.position())
        assert isinstance(scratch.database, PostgresDatabase)
        with store.database.snapshot() as live, scratch.database.read() as rebuilt:
            in_python = differences(live, rebuilt, TABLES)
            on_the_server = compared_in_the_database(live, scratch.database.schema, TABLES)
    assert len(in_python) == 3
    assert on_the_server == in_python


def test_a_live_table_altered_behind_the_store_is_still_compared(
    postgres_stores: StoreFactory,
) -> None:
    """The server cannot compare rows of different columns: Python does, as before."""
    store = postgres_stores.open()
    store.app.register_player("ann", "Ann")
    store.projector.catch_up()
    with store.database.write() as cursor:
        cursor.execute("ALTER TABLE wallet_index ADD COLUMN note TEXT DEFAULT 'forged'")
    with store.database.read() as cursor:
        cursor.execute("SELECT wallet_id FROM wallet_index ORDER BY wallet_id")
        wallets = [tuple(row) for row in cursor.fetchall()]
    found = compare_with_rebuild(store, lambda _: None).differences
    assert len(wallets) == 2  # her real and play wallets
    assert found == [f"wallet_index: 2 rows that differ, e.g. {wallets}"]


def test_a_live_column_made_blind_to_a_forgery_still_shows_it(
    postgres_stores: StoreFactory,
) -> None:
    """An insider gives a live column a collation under which 'ANN' equals 'ann', then
    rewrites the value: the server would find the rows equal, Python does not."""
    store = postgres_stores.open()
    store.app.register_player("ann", "Ann")
    store.projector.catch_up()
    schema = store.postgres_schema
    with store.database.write() as cursor:
        cursor.execute(
            f"CREATE COLLATION IF NOT EXISTS {schema}.blind"
            " (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"
        )
        cursor.execute(
            f"ALTER TABLE wallet_index ALTER COLUMN player_id TYPE TEXT COLLATE {schema}.blind"
        )
        cursor.execute("UPDATE wallet_index SET player_id = 'ANN'")
        cursor.execute("SELECT count(*) FROM wallet_index WHERE player_id = 'ann'")
        assert cursor.fetchone() == (2,)  # equal to the true value, under that collation
    found = compare_with_rebuild(store, lambda _: None).differences
    assert len(found) == 1 and found[0].startswith("wallet_index: 2 rows that differ")
