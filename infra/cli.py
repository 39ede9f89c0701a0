"""The `casino` command line (API.md, CLI)."""

from __future__ import annotations

import sys

import typer
from rich.progress import Progress

from infra.cli_rules import rules_app
from infra.config import ConfigError, Settings, load_settings
from infra.logs import configure_logging, get_logger
from infra.store import Store, open_store

app = typer.Typer(help="Casino accounting: serve the API, check rules, audit the store.")
projections_app = typer.Typer(help="Read models built from the event log.")
app.add_typer(projections_app, name="projections")
audit_app = typer.Typer(help="Verify and replay what the store holds.")
app.add_typer(audit_app, name="audit")
app.add_typer(rules_app, name="rules")


def settings_or_exit() -> Settings:
    try:
        return load_settings()
    except ConfigError as error:
        typer.echo(f"configuration error: {error}", err=True)
        raise typer.Exit(2) from None


def open_configured_store(settings: Settings) -> Store:
    return open_store(
        settings.database_url,
        postgres_schema=settings.postgres_schema,
        pool_size=settings.db_pool_size,
        games=settings.games(),
    )


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="interface to listen on"),
    port: int = typer.Option(8000, help="TCP port"),
) -> None:
    """Run the HTTP API on the configured store (embedded SQLite by default)."""
    import uvicorn

    from infra.api import create_app

    settings = settings_or_exit()
    configure_logging(settings.log_level)
    log = get_logger("casino.serve")
    if settings.uses_dev_keys:
        log.warning(
            "dev_keys_in_use",
            detail="no CASINO_API_KEYS configured: anyone can use dev-service, dev-operator "
            "and dev-auditor. Never run like this with real money.",
        )
    store = open_configured_store(settings)
    log.info("starting", store=settings.database_url.split("@")[-1], host=host, port=port)
    uvicorn.run(create_app(store, settings), host=host, port=port, access_log=False)


@projections_app.command("rebuild")
def rebuild() -> None:
    """Empty every read model and rebuild it from the events."""
    settings = settings_or_exit()
    store = open_configured_store(settings)
    total = store.app.recorder.max_notification_id() or 0
    with Progress(transient=not sys.stderr.isatty()) as progress:
        task = progress.add_task("rebuilding read models", total=total)
        applied = store.projector.rebuild(lambda batch: progress.advance(task, batch))
    typer.echo(f"rebuilt read models from {applied} events")
    store.close()


@audit_app.command("verify")
def audit_verify(
    round_id: str | None = typer.Option(None, "--round", help="check this round only"),
) -> None:
    """Replay the store: chain, versions, books, every round's cards and payouts."""
    from infra.audit import verify

    store = open_configured_store(settings_or_exit())
    total = store.app.recorder.max_notification_id() or 0
    with Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
        task = progress.add_task("verifying events", total=total)
        report = verify(store, round_id, lambda batch: progress.advance(task, batch))
    store.close()
    for problem in report.problems:
        typer.echo(f"DISCREPANCY: {problem}")
    verdict = "all holds" if not report.problems else f"{len(report.problems)} discrepancies"
    typer.echo(f"checked {report.events} events and {report.rounds} rounds: {verdict}")
    typer.echo(f"head of the event chain: {report.head_link}")
    raise typer.Exit(1 if report.problems else 0)


@audit_app.command("replay")
def audit_replay(round_id: str) -> None:
    """Print one round's timeline, event by event."""
    from domain.errors import DomainError
    from infra.audit import timeline

    store = open_configured_store(settings_or_exit())
    try:
        lines = timeline(store, round_id)
    except DomainError as error:
        typer.echo(error.detail, err=True)
        raise typer.Exit(2) from None
    finally:
        store.close()
    typer.echo("\n".join(lines))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
