"""The compare of the live read models with a rebuild names every kind of difference,
with its count and its first keys, in the same words on both stores; on PostgreSQL
the server compares (projections/check.py: compared_in_the_database), and says
exactly what the page-by-page compare in Python says."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from infra.audit import rebuild as rebuild_module
from infra.audit.rebuild import NotPlainTables, compare_with_rebuild, scratch_projector
from infra.audit.verify import verify
from infra.cli import app
from infra.store.database import PostgresDatabase
from infra.store.store import Store, open_store
from projections.check import (
    comparable_in_the_database,
    compared_in_the_database,
    differences,
    quoted,
)
from projections.runner import TABLES, TRACKING
from tests.conftest import POSTGRES_URL, StoreFactory

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


def tampered_on_postgres(postgres_stores: StoreFactory) -> tuple[Store, PostgresDatabase]:
    """`tampered` on a new PostgreSQL store, and that store's database."""
    store = tampered(postgres_stores.open())
    assert isinstance(store.database, PostgresDatabase)
    return store, store.database


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
        schema = scratch.database.schema
        with store.database.snapshot() as live, scratch.database.read() as rebuilt:
            in_python = differences(live, rebuilt, TABLES)
            live_schema = store.database.schema
            assert comparable_in_the_database(live, live_schema, schema, (*TABLES, TRACKING))
            on_the_server = compared_in_the_database(
                live, quoted(live_schema), quoted(schema), TABLES
            )
    assert len(in_python) == 3
    assert on_the_server == in_python


def test_tables_compared_beside_in_the_same_snapshot_are_named_as_by_one_connection(
    postgres_stores: StoreFactory,
) -> None:
    store, database = tampered_on_postgres(postgres_stores)
    with scratch_projector(store) as scratch:
        scratch.catch_up(up_to=store.projector.position())
        assert isinstance(scratch.database, PostgresDatabase)
        names = (quoted(database.schema), quoted(scratch.database.schema))
        with store.database.snapshot() as live:
            assert comparable_in_the_database(
                live, database.schema, scratch.database.schema, (*TABLES, TRACKING)
            )
            alone = compared_in_the_database(live, *names, TABLES)
            exported = database.exported_snapshot(live)
            # A deposit committed after the snapshot: neither connection sees it.
            store.app.deposit("ann", "real", 100)
            store.projector.catch_up()
            opened = []

            def beside() -> Any:
                opened.append(exported)
                return database.in_snapshot(exported)

            shared = compared_in_the_database(live, *names, TABLES, beside=beside)
    assert len(alone) == 3
    assert shared == alone
    assert opened == [exported]  # the larger tables went to the other connection


def test_a_transaction_in_an_exported_snapshot_sees_nothing_committed_after_it(
    postgres_stores: StoreFactory,
) -> None:
    store, database = tampered_on_postgres(postgres_stores)

    def deposits(cursor: Any) -> int:
        cursor.execute("SELECT count(*) FROM ledger_entries WHERE player_id = 'ann'")
        return int(cursor.fetchone()[0])

    with database.snapshot() as exporting:
        before = deposits(exporting)
        exported = database.exported_snapshot(exporting)
        store.app.deposit("ann", "real", 100)
        store.projector.catch_up()
        with database.in_snapshot(exported) as beside:
            assert deposits(beside) == before
    with database.read() as now:
        assert deposits(now) == before + 1


def test_a_snapshot_id_that_is_not_one_is_refused_before_any_sql(
    postgres_stores: StoreFactory,
) -> None:
    database = postgres_stores.open().database
    assert isinstance(database, PostgresDatabase)
    with (
        pytest.raises(ValueError, match="not a snapshot id"),
        database.in_snapshot("1'; DROP SCHEMA public CASCADE; --"),
    ):
        pass


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


def _server_compared(store: Store, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], int]:
    """A rebuild's compare, and how often it fell back to the compare in Python."""
    in_python = []

    def counted(*arguments: Any) -> list[str]:
        in_python.append(1)
        return differences(*arguments)

    monkeypatch.setattr(rebuild_module, "differences", counted)
    return compare_with_rebuild(store, lambda _: None).differences, len(in_python)


def test_a_store_with_a_pool_of_one_connection_is_still_compared_by_the_server(
    postgres_stores: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered(postgres_stores.open())
    one = open_store(
        postgres_stores.url,
        postgres_schema=postgres_stores.schema,
        pool_size=1,
        group_commit=None,
        opened_elsewhere=True,
    )
    opening, opened = PostgresDatabase.in_snapshot, []

    @contextmanager
    def counted(self: PostgresDatabase, snapshot_id: str) -> Iterator[Any]:
        with opening(self, snapshot_id) as cursor:
            opened.append(snapshot_id)
            yield cursor

    monkeypatch.setattr(PostgresDatabase, "in_snapshot", counted)
    try:
        found, fallbacks = _server_compared(one, monkeypatch)
    finally:
        one.close()
    assert len(found) == 3
    assert fallbacks == 0
    assert len(opened) == 1  # the second connection was had, beside the pool's one


def test_a_change_queued_on_a_table_leaves_its_compare_to_the_first_connection(
    postgres_stores: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, database = tampered_on_postgres(postgres_stores)
    expected = compare_with_rebuild(store, lambda _: None).differences
    opening = PostgresDatabase.in_snapshot
    maintenance: list[threading.Thread] = []

    def after_a_vacuum_full_queued(self: PostgresDatabase, snapshot_id: str) -> Any:
        # A DBA's VACUUM FULL of every read model waits on the compare's locks; any
        # new lock on those tables then queues behind it.
        def vacuum() -> None:
            with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
                tables = ", ".join(f'"{database.schema}".{table}' for table in TABLES)
                connection.execute(f"VACUUM FULL {tables}".encode())

        maintenance.append(threading.Thread(target=vacuum))
        maintenance[0].start()
        _until_waiting(database.schema)
        return opening(self, snapshot_id)

    monkeypatch.setattr(PostgresDatabase, "in_snapshot", after_a_vacuum_full_queued)
    found, fallbacks = _server_compared(store, monkeypatch)
    maintenance[0].join(timeout=30)
    assert found == expected
    assert fallbacks == 0


def _until_waiting(schema: str) -> None:
    """Until a session waits on a lock (the VACUUM FULL, behind the compare)."""
    with psycopg.connect(POSTGRES_URL, autocommit=True) as watcher:
        for _ in range(200):
            waiting = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE 'VACUUM FULL%'"
            ).fetchone()
            if waiting and waiting[0]:
                return
            time.sleep(0.01)
    raise AssertionError(f"no VACUUM FULL waited on the read models of {schema}")
