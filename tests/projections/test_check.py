"""The compare of the live read models with a rebuild names every kind of difference,
with its count and its first keys, in the same words on both stores (the one
compare, page by page: projections/check.py), and cannot be fooled by what an
insider puts in the live schema."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from infra.audit.rebuild import NotPlainTables, compare_with_rebuild
from infra.audit.verify import verify
from infra.cli import app
from infra.store.store import Store
from projections.runner import TABLES, TRACKING
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


def test_a_live_table_altered_behind_the_store_is_still_compared(
    postgres_stores: StoreFactory,
) -> None:
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


def forged_balances(store: Store) -> Store:
    """Two players' real-money balances in the live read model set to a million."""
    for player in PLAYERS[:2]:
        store.app.register_player(player, player.title())
        store.app.deposit(player, "real", 500)
    store.projector.catch_up()
    with store.database.write() as cursor:
        cursor.execute("UPDATE wallet_balances SET balance_cents = 1000000 WHERE mode = 'real'")
    return store


FORGED_BALANCES = ["wallet_balances: 2 rows that differ, e.g. [('ann', 'real'), ('bob', 'real')]"]


def test_an_equality_of_the_insiders_own_does_not_hide_a_forgery(
    postgres_stores: StoreFactory,
) -> None:
    """A domain over BIGINT, with an `=` against BIGINT that is always true, in the
    live schema: the server's row comparison would choose it over BIGINT's own."""
    store = forged_balances(postgres_stores.open())
    schema = store.postgres_schema
    with store.database.write() as cursor:
        cursor.execute(f"CREATE DOMAIN {schema}.cents AS BIGINT")
        cursor.execute(
            f"CREATE FUNCTION {schema}.same(a {schema}.cents, b BIGINT) RETURNS BOOLEAN"
            " LANGUAGE sql IMMUTABLE AS 'SELECT true'"
        )
        cursor.execute(
            f"CREATE OPERATOR {schema}.= (LEFTARG = {schema}.cents, RIGHTARG = BIGINT,"
            f" FUNCTION = {schema}.same)"
        )
        cursor.execute(f"ALTER TABLE wallet_balances ALTER balance_cents TYPE {schema}.cents")
    assert compare_with_rebuild(store, lambda _: None).differences == FORGED_BALANCES


def test_a_view_of_the_insiders_cannot_rewrite_the_rebuild(
    postgres_stores: StoreFactory,
) -> None:
    """The read models' position behind a view whose function copies the forged live
    rows over the rebuild's, in whatever transaction reads it: the live store is only
    read in transactions that cannot write."""
    store = forged_balances(postgres_stores.open())
    schema = store.postgres_schema
    with store.database.write() as cursor:
        cursor.execute("ALTER TABLE projection_tracking RENAME TO projection_tracking_real")
        cursor.execute(
            f"""CREATE FUNCTION {schema}.fool() RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
            DECLARE s TEXT;
            BEGIN
              FOR s IN SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rebuild_%%' LOOP
                EXECUTE format('UPDATE %%I.wallet_balances r SET balance_cents = l.balance_cents'
                  ' FROM {schema}.wallet_balances l'
                  ' WHERE r.player_id = l.player_id AND r.mode = l.mode', s);
              END LOOP;
              RETURN true;
            END $$"""
        )
        cursor.execute(
            "CREATE VIEW projection_tracking AS SELECT * FROM projection_tracking_real WHERE fool()"
        )
    scratch = "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rebuild_%%'"
    with store.database.read() as cursor:  # a run killed elsewhere may have left one
        cursor.execute(scratch)
        before = cursor.fetchone()
    with pytest.raises(NotPlainTables):
        compare_with_rebuild(store, lambda _: None)
    with store.database.read() as cursor:  # and the view's function never ran
        cursor.execute(scratch)
        assert cursor.fetchone() == before


def test_a_view_of_the_insiders_cannot_move_the_compare_to_a_decoy_schema(
    postgres_stores: StoreFactory,
) -> None:
    """A view on the tracking table whose function, in read-only transactions only,
    moves the session's search path to a schema of honest copies: the live store's
    tables are read by their schema's name, and never through a view."""
    store = forged_balances(postgres_stores.open())
    schema = store.postgres_schema
    with store.database.write() as cursor:
        cursor.execute(f"CREATE SCHEMA {schema}_decoy")
        for table in (*TABLES, TRACKING):
            cursor.execute(f"CREATE TABLE {schema}_decoy.{table} (LIKE {table} INCLUDING ALL)")
            cursor.execute(f"INSERT INTO {schema}_decoy.{table} SELECT * FROM {table}")
        cursor.execute(f"UPDATE {schema}_decoy.wallet_balances SET balance_cents = 500")
        cursor.execute("ALTER TABLE projection_tracking RENAME TO projection_tracking_real")
        cursor.execute(
            f"CREATE FUNCTION {schema}.poison() RETURNS BOOLEAN LANGUAGE sql VOLATILE AS"
            " $$ SELECT CASE WHEN current_setting('transaction_read_only') = 'on' THEN"
            f" pg_catalog.set_config('search_path', '{schema}_decoy', false) IS NOT NULL"
            " ELSE true END $$"
        )
        cursor.execute(
            "CREATE VIEW projection_tracking AS"
            f" SELECT * FROM {schema}.projection_tracking_real WHERE {schema}.poison()"
        )
    try:
        with pytest.raises(NotPlainTables):
            compare_with_rebuild(store, lambda _: None)
    finally:
        with store.database.write() as cursor:
            cursor.execute(f"DROP SCHEMA {schema}_decoy CASCADE")


def test_verify_and_the_rebuild_command_name_a_read_model_behind_a_view(
    postgres_stores: StoreFactory,
) -> None:
    store = forged_balances(postgres_stores.open())
    with store.database.write() as cursor:
        cursor.execute("ALTER TABLE wallet_balances RENAME TO wallet_balances_real")
        cursor.execute("CREATE VIEW wallet_balances AS SELECT * FROM wallet_balances_real")
    report = verify(store, None, lambda _: None)
    assert any("not all plain tables" in problem for problem in report.problems), report.problems
    env = {"CASINO_DATABASE_URL": store.url, "CASINO_POSTGRES_SCHEMA": store.postgres_schema}
    result = CliRunner().invoke(app, ["projections", "rebuild", "--check"], env=env)
    assert result.exit_code == 1
    assert "cannot rebuild: the read models in schema" in result.output
