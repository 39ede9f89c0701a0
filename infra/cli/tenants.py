"""`casino tenants`: the tenant directory (CASINO_TENANTS, rules.md 11) seen from the
command line: each tenant's place, and moving one to another database."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
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


@tenants_app.command("move")
def move(
    name: str = typer.Argument(..., help="the tenant to move"),
    to: str = typer.Option(..., "--to", help="postgresql://... the database it moves to"),
    public_key: str = typer.Option(
        ...,
        "--public-key",
        help="the tenant's pinned public key: the copy's seals must be "
        "signed by it (or a key it handed over to)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as one JSON object"),
) -> None:
    """Move a tenant's schema to another PostgreSQL database: copy it, verify the copy,
    fence the tenant's commands, copy and verify what was saved meanwhile, switch
    the directory (CASINO_TENANTS, a file), lift the fence (docs/scaling.md)."""
    from infra.cli.store import USAGE_ERROR, base_settings_or_exit
    from infra.store.seal import SealKeyError, parse_public_key
    from infra.tenant_move import CopyNotWhole, MoveRefused, move_tenant

    base = base_settings_or_exit()
    directory = Path(base.tenants.strip())
    if not base.tenants.strip() or base.tenants.strip().startswith("{") or not directory.is_file():
        typer.echo("CASINO_TENANTS: a move rewrites the directory: it must be a file", err=True)
        raise typer.Exit(USAGE_ERROR)
    try:
        key = parse_public_key(public_key)
    except SealKeyError as error:
        typer.echo(f"--public-key: {error}", err=True)
        raise typer.Exit(USAGE_ERROR) from None
    say = (lambda _: None) if as_json else typer.echo
    try:
        report = move_tenant(directory, name, to, verifier(key), base, say)
    except MoveRefused as refused:
        typer.echo(f"not moved: {refused}", err=True)
        raise typer.Exit(USAGE_ERROR) from None
    except CopyNotWhole as wrong:
        typer.echo(f"not moved, the tenant stays where it was: {wrong}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        print_json(asdict(report))
        return
    typer.echo(
        f"moved {report.tenant} to {report.target}: {report.copied_events} events copied, "
        f"{report.tail_events} more inside a fence of {report.fence_seconds:.2f} s; the old "
        f"copy is schema {report.retired_schema} at {report.source}, to drop once you are sure"
    )


def verifier(key: Any) -> Any:
    """`casino audit verify` on a copy: the whole log (with no state) or what was added
    after `state`, every seal checked against the pinned `key`; the witness when the
    copy's settings name one that is there."""

    def run(settings: Any, state: Any) -> Any:
        from infra.audit.verify import verify
        from infra.checkpoints.check import witness_to_verify
        from infra.cli.store import open_configured_store

        checked, _ = witness_to_verify(None, settings.witness)
        store = open_configured_store(settings, existing=True, name="casino-move")
        try:
            return verify(store, None, lambda _: None, {}, key, checked, key, state)
        finally:
            store.close()
            if checked is not None:
                checked.close()

    return run
