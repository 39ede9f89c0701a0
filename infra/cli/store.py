"""What the `casino` commands share: the settings, the configured store (opened only as
far as a command may: the read-only ones never create one), JSON output and the
progress bar. Exit status 2 is a usage or configuration error, 1 a discrepancy."""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.progress import MofNCompleteColumn, Progress, ProgressColumn, Task
from rich.text import Text

from infra.config import ConfigError, Settings, load_settings
from infra.logs import get_logger
from infra.secrets import AesGcmBox, SecretKeyError
from infra.store import reach
from infra.store.database import PostgresDatabase
from infra.store.faults import StoreTimeouts
from infra.store.key_chain import SealKeyOutsideChain
from infra.store.privileges import refusals
from infra.store.store import Store, open_store
from infra.tenants import DEFAULT, Tenant, load_tenants, tenant_settings

USAGE_ERROR = 2
DISCREPANCY = 1


# The tenant `casino --tenant NAME` names (infra/tenants.py); None: the only one.
chosen_tenant: str | None = None


def settings_or_exit() -> Settings:
    """The settings a command runs with: with tenants configured (CASINO_TENANTS), those
    of the tenant `--tenant` names (by default `default`, when there is one)."""
    try:
        settings = load_settings()
        if not settings.tenants.strip() and chosen_tenant in (None, DEFAULT):
            return settings
        return tenant_settings(settings, chosen_tenant or DEFAULT)
    except ConfigError as error:
        typer.echo(f"configuration error: {error}", err=True)
        raise typer.Exit(2) from None


def base_settings_or_exit() -> Settings:
    """The process's settings, whatever the tenants."""
    try:
        return load_settings()
    except ConfigError as error:
        typer.echo(f"configuration error: {error}", err=True)
        raise typer.Exit(2) from None


def serves_tenants() -> bool:
    """`casino serve` serves every tenant of CASINO_TENANTS unless --tenant names one."""
    return chosen_tenant is None and bool(base_settings_or_exit().tenants.strip())


def tenants_or_exit() -> dict[str, Tenant]:
    """Every tenant (one, `default`, without CASINO_TENANTS); exit 2 on a bad directory."""
    try:
        return load_tenants(load_settings())
    except ConfigError as error:
        typer.echo(f"configuration error: {error}", err=True)
        raise typer.Exit(2) from None


def open_configured_store(
    settings: Settings,
    *,
    existing: bool = False,
    sealed: bool = False,
    serving: bool = False,
    name: str = "casino-cli",
) -> Store:
    """The configured store; with `existing`, only one that is there already (the
    audit and projection commands never create one); `sealed` for one that saves (it
    seals the log with CASINO_SEAL_KEY and round seeds with CASINO_SECRET_KEY); without,
    a store that saves nothing at all (infra/store/seal.py: UnsealedWrite). `serving`:
    a server's, whose store timeouts follow CASINO_REQUEST_DEADLINE_SECONDS. `name`
    names the process's connections. Exits 2, in one line naming the setting, when the
    database cannot be reached or the store is not there."""
    problem = _store_problem(settings, existing)
    if problem is not None:
        typer.echo(problem, err=True)
        raise typer.Exit(USAGE_ERROR)
    seal_key = _seal_key_or_exit(settings) if sealed else None
    box = _secret_box(settings) if sealed else None
    try:
        store = open_store(
            settings.database_url,
            postgres_schema=settings.postgres_schema,
            pool_size=settings.db_pool_size,
            games=settings.games(),
            group_commit=settings.group_commit(),
            seal_key=seal_key,
            # Only a store that saves is made, migrated or granted: a command that
            # reads changes nothing, whichever role it runs as.
            owner_url=(settings.database_owner_url or None) if sealed else None,
            create=sealed,
            box=box,
            timeouts=StoreTimeouts.within(settings.request_deadline_seconds) if serving else None,
            application_name=name,
        )
    except SealKeyOutsideChain as outside:
        typer.echo(str(outside), err=True)
        raise typer.Exit(USAGE_ERROR) from None
    except Exception as error:  # Whatever the driver raises: the store is not to be had.
        where = reach.shown_url(settings.database_url)
        typer.echo(
            f"CASINO_DATABASE_URL: cannot open the store at {where}: {reach.first_line(error)}",
            err=True,
        )
        raise typer.Exit(USAGE_ERROR) from None
    _refuse_a_role_that_could_change_the_log(settings, store, sealed)
    store.commands.receipt_retention_days = settings.receipt_retention_days
    store.app.recorder.read_only = not sealed  # type: ignore[attr-defined]
    runs = settings.projector_runs
    store.projector_inside = runs == "inside"
    store.reads_wait_for_head = runs == "beside"
    return store


def _refuse_a_role_that_could_change_the_log(
    settings: Settings, store: Store, sealed: bool
) -> None:
    """In production the service runs only on a role that cannot change the log
    (infra/store/privileges.py): exit 2, in one line, otherwise."""
    database = store.database
    if not (sealed and settings.env == "production" and isinstance(database, PostgresDatabase)):
        return
    found = refusals(database)
    if found:
        store.close()
        typer.echo(f"CASINO_DATABASE_URL: refused in production: {'; '.join(found)}", err=True)
        raise typer.Exit(USAGE_ERROR)


def _seal_key_or_exit(settings: Settings) -> Any:
    from infra.keys import seal_key_for

    try:
        return seal_key_for(settings)
    except ConfigError as error:
        typer.echo(f"configuration error: {error}", err=True)
        raise typer.Exit(USAGE_ERROR) from None


def _store_problem(settings: Settings, existing: bool) -> str | None:
    """Why the command cannot go on with the configured store, in one line, or None."""
    problem = reach.unreachable(settings.database_url)
    if problem is not None or not existing:
        return problem
    try:
        missing = reach.missing(settings.database_url, settings.postgres_schema)
    except Exception as error:  # It went away since it answered.
        return f"CASINO_DATABASE_URL: {reach.first_line(error)}"
    if missing is None:
        return None
    return f"no store: {missing} (this command creates none)"


def _secret_box(settings: Settings) -> AesGcmBox:
    try:
        box, warning = settings.secret_box()
    except (ConfigError, SecretKeyError) as error:
        typer.echo(f"configuration error: {error}", err=True)
        raise typer.Exit(USAGE_ERROR) from None
    if warning is not None:
        get_logger("casino.secrets").warning("development_secret_key", detail=warning)
    return box


def print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=_plain))


def _plain(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return str(value)


@contextmanager
def progress(
    description: str, total: int, *, quiet: bool = False
) -> Iterator[Callable[[int], None]]:
    """A progress bar on a terminal's stderr (events done, rate, time left); nothing
    when output is not a terminal, or `quiet` (--json: a script reads the output)."""
    columns = (*Progress.get_default_columns(), MofNCompleteColumn(), EventRate())
    disabled = quiet or not sys.stderr.isatty()
    with Progress(*columns, transient=True, disable=disabled) as progress:
        task = progress.add_task(description, total=total)
        yield lambda done: progress.advance(task, done)


class EventRate(ProgressColumn):
    """Events per second, as the task has gone so far."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} events/s", style="progress.data.speed")
