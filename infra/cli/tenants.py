"""`casino tenants`: the tenant directory (CASINO_TENANTS, rules.md 11) seen from the
command line: each tenant's place, and moving one to another database."""

from __future__ import annotations

from typing import Any

import typer

from infra.cli.store import print_json, tenants_or_exit
from infra.store import reach
from infra.tenants import Tenant

tenants_app = typer.Typer(
    rich_markup_mode="markdown",
    help="The tenants one deployment serves (CASINO_TENANTS): list them, move one.",
)


@tenants_app.command("list")
def list_tenants(
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Each tenant: where its store is, its log's head position and how many events its
    read models are behind (or why its store cannot be read). Reads only."""
    found = [_state(name, tenant) for name, tenant in tenants_or_exit().items()]
    if as_json:
        print_json({"tenants": found})
        return
    for row in found:
        if row["reachable"]:
            typer.echo(f"{row['tenant']}\t{row['location']}\thead {row['head']}\tlag {row['lag']}")
        else:
            typer.echo(f"{row['tenant']}\t{row['location']}\tUNREACHABLE: {row['problem']}")


def _state(name: str, tenant: Tenant) -> dict[str, Any]:
    row: dict[str, Any] = {"tenant": name, "location": tenant.location}
    settings = tenant.settings
    problem = reach.unreachable(settings.database_url)
    if problem is None:
        try:
            problem = reach.missing(settings.database_url, settings.postgres_schema)
        except Exception as error:  # It went away since it answered.
            problem = reach.first_line(error)
    if problem is not None:
        return {**row, "reachable": False, "problem": problem, "head": None, "lag": None}
    head, position = _positions(tenant)
    return {**row, "reachable": True, "head": head, "lag": head - position}


def _positions(tenant: Tenant) -> tuple[int, int]:
    from infra.cli.store import open_configured_store

    store = open_configured_store(tenant.settings, existing=True, name="casino-tenants")
    try:
        return store.projector.head(), store.projector.position()
    finally:
        store.close()
