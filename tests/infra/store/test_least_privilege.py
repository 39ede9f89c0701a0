"""The service's PostgreSQL role can insert and read the log, never change it (rules.md 5).

With CASINO_DATABASE_OWNER_URL the owner builds the schema and grants the service's
role (CASINO_DATABASE_URL) only what it needs. The role is a plain one made here;
the `postgres` superuser of the test database is the owner.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import typer

from domain.outcome import Receipt
from infra.cli.store import open_configured_store
from infra.config import load_settings
from infra.store import chain as event_chain
from infra.store import receipts
from infra.store import seal as seals
from infra.store.seal import private_key_text
from infra.store.store import open_store
from tests.conftest import POSTGRES_URL, SEAL_KEY, StoreFactory

pytestmark = pytest.mark.postgres
GUARDED = ("casino_events", "casino_snapshots", event_chain.TABLE, seals.TABLE)


@pytest.fixture
def service_role(postgres_up: bool) -> Iterator[str]:
    if not postgres_up:
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} is not reachable")
    role = f"casino_service_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER")  # type: ignore[arg-type]
    yield role
    with psycopg.connect(POSTGRES_URL, autocommit=True) as owner:
        owner.execute(f"DROP OWNED BY {role}")  # type: ignore[arg-type]
        owner.execute(f"DROP ROLE {role}")  # type: ignore[arg-type]


def service_url(role: str) -> str:
    host = POSTGRES_URL.split("@", 1)[1]
    return f"postgresql://{role}@{host}"


def test_the_service_role_still_saves_where_functions_are_not_executable_by_everyone(
    service_role: str, tmp_path: object
) -> None:
    # Given a store built by the owner, whose database then takes EXECUTE from PUBLIC
    factory = StoreFactory("postgres", tmp_path)  # type: ignore[arg-type]
    url = service_url(service_role)
    try:
        options = {"postgres_schema": factory.schema, "pool_size": 2, "seal_key": SEAL_KEY}
        open_store(url, owner_url=POSTGRES_URL, **options).close()  # type: ignore[arg-type]
        with psycopg.connect(POSTGRES_URL, autocommit=True) as owner:
            owner.execute(
                f"REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA {factory.schema} FROM PUBLIC"  # type: ignore[arg-type]
            )
        # When the service saves a command
        store = open_store(url, owner_url=POSTGRES_URL, **options)  # type: ignore[arg-type]
        try:
            store.app.register_player("ann", "Ann")
            store.app.deposit("ann", "real", 1_000)
            # Then it landed: the service's grant is its own
            assert store.app.wallet("ann", "real").balance_cents == 1_000
        finally:
            store.close()
    finally:
        factory.close_all()


def test_the_service_role_saves_and_reads_but_cannot_change_the_log(
    service_role: str, tmp_path: object
) -> None:
    # Given a store built by the owner, opened by the service's own role
    factory = StoreFactory("postgres", tmp_path)  # type: ignore[arg-type]
    schema = factory.schema
    url = service_url(service_role)
    try:
        store = open_store(
            url, postgres_schema=schema, pool_size=2, seal_key=SEAL_KEY, owner_url=POSTGRES_URL
        )
        try:
            # When it serves commands and keeps its read models
            store.app.register_player("ann", "Ann")
            receipt = Receipt("k1", "fingerprint", lambda movement: {"id": movement.transaction_id})
            store.app.deposit.with_receipt(receipt, "ann", "real", 1_000)
            assert store.app.deposit.with_receipt(receipt, "ann", "real", 1_000).replayed
            store.projector.catch_up()
            assert store.app.wallet("ann", "real").balance_cents == 1_000
        finally:
            store.close()
        # Then with its credentials no guard can be switched off, no row changed
        with psycopg.connect(url, autocommit=True) as service:
            service.execute(f"SET search_path TO {schema}")  # type: ignore[arg-type]
            for table in GUARDED:
                for attempt in (
                    f"ALTER TABLE {table} DISABLE TRIGGER USER",
                    f"UPDATE {table} SET originator_version = originator_version"
                    if table in GUARDED[:2]
                    else f"UPDATE {table} SET position = position"
                    if table == event_chain.TABLE
                    else f"UPDATE {table} SET digest = digest",
                    f"DELETE FROM {table}",
                    f"TRUNCATE {table}",
                    f"DROP TABLE {table}",
                ):
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        service.execute(attempt)  # type: ignore[arg-type]
            assert service.execute("SELECT COUNT(*) FROM casino_events").fetchone() == (4,)
            # And a receipt can only be pruned: its answer set to NULL, nothing else
            for attempt in (
                f"ALTER TABLE {receipts.TABLE} DISABLE TRIGGER USER",
                f"UPDATE {receipts.TABLE} SET answer = 'forged'::bytea",
                f"UPDATE {receipts.TABLE} SET fingerprint = 'other'",
                f"DELETE FROM {receipts.TABLE}",
                f"TRUNCATE {receipts.TABLE}",
                f"DROP TABLE {receipts.TABLE}",
            ):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    service.execute(attempt)  # type: ignore[arg-type]
            service.execute(f"UPDATE {receipts.TABLE} SET answer = NULL")  # type: ignore[arg-type]
    finally:
        factory.close_all()


# Least privilege, enforced in production (rules.md 5; infra/store/privileges.py).


def production(url: str, schema: str, owner_url: str = POSTGRES_URL) -> Any:
    return load_settings(
        database_url=url,
        database_owner_url=owner_url,
        postgres_schema=schema,
        env="production",
        api_keys="service=s-key,operator=o-key,auditor=a-key",
        seal_key=private_key_text(SEAL_KEY),
        secret_key="0" * 64,
        witness="nats://casino:secret@127.0.0.1:1/CASINO",  # production's kind (not dialled)
    )


def start_in_production(settings: Any) -> str | None:
    """What a production start refuses, in its one line; None when it starts."""
    try:
        store = open_configured_store(settings, sealed=True, serving=True, name="casino-serve")
    except typer.Exit as refused:
        assert refused.exit_code == 2
        return "refused"
    store.close()
    return None


@pytest.fixture
def owner_role(postgres_up: bool) -> Iterator[str]:
    """A plain role that may make schemas: an owner who is no superuser."""
    if not postgres_up:
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} is not reachable")
    role = f"casino_owner_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        database = admin.info.dbname
        admin.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER")  # type: ignore[arg-type]
        admin.execute(f"GRANT CREATE ON DATABASE {database} TO {role}")  # type: ignore[arg-type]
    yield role
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f"DROP OWNED BY {role} CASCADE")  # type: ignore[arg-type]
        admin.execute(f"DROP ROLE {role}")  # type: ignore[arg-type]


def test_production_starts_on_the_service_role_and_refuses_one_that_could_change_the_log(
    service_role: str, owner_role: str, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = f"t_{uuid.uuid4().hex[:16]}"
    owner, service = service_url(owner_role), service_url(service_role)
    # The service's own role, granted by the owner: it starts
    assert start_in_production(production(service, schema, owner)) is None
    # The owner, a superuser, a member of the owner's role: each refused, named
    assert start_in_production(production(owner, schema, owner)) == "refused"
    assert f"role {owner_role} owns schema {schema}" in capsys.readouterr().err
    assert start_in_production(production(POSTGRES_URL, schema, owner)) == "refused"
    assert "is a superuser" in capsys.readouterr().err
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f"GRANT {owner_role} TO {service_role}")  # type: ignore[arg-type]
    assert start_in_production(production(service, schema, owner)) == "refused"
    assert f"is a member of {owner_role}, the schema's owner" in capsys.readouterr().err


def test_production_refuses_a_log_whose_guard_was_switched_off(
    service_role: str, owner_role: str
) -> None:
    schema = f"t_{uuid.uuid4().hex[:16]}"
    owner, service = service_url(owner_role), service_url(service_role)
    assert start_in_production(production(service, schema, owner)) is None
    with psycopg.connect(owner, autocommit=True) as connection:
        connection.execute(
            f"ALTER TABLE {schema}.casino_events DISABLE TRIGGER casino_events_refuse_change"  # type: ignore[arg-type]
        )
    settings = production(service, schema, owner_url="")  # no migration puts it back
    try:
        store = open_configured_store(settings, sealed=True, serving=True)
    except typer.Exit as refused:
        assert refused.exit_code == 2
    else:
        store.close()
        raise AssertionError("a log without its guard was served")


def test_verify_with_the_owners_credentials_grants_and_revokes_nothing(
    service_role: str, owner_role: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store the owner made, the service's role granted
    schema = f"t_{uuid.uuid4().hex[:16]}"
    owner, service = service_url(owner_role), service_url(service_role)
    assert start_in_production(production(service, schema, owner)) is None
    before = table_privileges(schema)
    # When an auditor opens it to read, as the owner, with the owner's URL configured
    settings = load_settings(database_url=owner, database_owner_url=owner, postgres_schema=schema)
    open_configured_store(settings, existing=True).close()
    # Then nobody's rights changed
    assert table_privileges(schema) == before


def table_privileges(schema: str) -> list[tuple[str, ...]]:
    with psycopg.connect(POSTGRES_URL) as admin:
        rows = admin.execute(
            "SELECT grantee, table_name, privilege_type FROM information_schema.table_privileges"
            " WHERE table_schema = %s ORDER BY 1, 2, 3",
            (schema,),
        ).fetchall()
    return [tuple(str(value) for value in row) for row in rows]
