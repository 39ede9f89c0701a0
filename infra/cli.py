"""The `casino` command line (API.md, CLI).

Every command exits 0 when all holds, 1 on a discrepancy (`audit verify`,
`projections rebuild --check`) and 2 on a usage or configuration error: a bad
option or setting, a store that cannot be opened, and, for the commands that
only read (`audit verify`, `audit replay`, `audit export`, `projections rebuild
--check`, `reports`), a store that does not exist - they never create one.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import typer
from rich.progress import MofNCompleteColumn, Progress, ProgressColumn, Task
from rich.text import Text

from infra.cli_reports import reports_app
from infra.cli_rules import rules_app
from infra.config import ConfigError, Settings, load_settings
from infra.logs import configure_logging, get_logger
from infra.secrets import AesGcmBox, SecretKeyError
from infra.store import reach
from infra.store.store import Store, open_store
from projections.failure import ProjectionFailed

app = typer.Typer(rich_markup_mode="markdown")  # its help: main_options' docstring
projections_app = typer.Typer(
    rich_markup_mode="markdown", help="Read models built from the event log."
)
app.add_typer(projections_app, name="projections")
audit_app = typer.Typer(rich_markup_mode="markdown", help="Verify and replay what the store holds.")
app.add_typer(audit_app, name="audit")
app.add_typer(rules_app, name="rules")
app.add_typer(reports_app, name="reports")
keys_app = typer.Typer(
    rich_markup_mode="markdown", help="The seal key pair, and the key that seals round seeds."
)
app.add_typer(keys_app, name="keys")


USAGE_ERROR = 2
DISCREPANCY = 1


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"casino {version('casino-ledger')}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    show_version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="print the version"
    ),
) -> None:
    """Casino accounting: serve the API, check rules, audit the store.

    Exit status: 0 all holds, 1 a discrepancy, 2 a usage or configuration error.
    """


def settings_or_exit() -> Settings:
    try:
        return load_settings()
    except ConfigError as error:
        typer.echo(f"configuration error: {error}", err=True)
        raise typer.Exit(2) from None


def open_configured_store(
    settings: Settings, *, existing: bool = False, sealed: bool = False
) -> Store:
    """The configured store; with `existing`, only one that is there already (the
    audit and projection commands never create one); `sealed` for one that saves (it
    seals the log with CASINO_SEAL_KEY and round seeds with CASINO_SECRET_KEY). Exits 2,
    in one line naming the setting, when the database cannot be reached or the store is
    not there."""
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
            owner_url=settings.database_owner_url or None,
            box=box,
        )
    except Exception as error:  # Whatever the driver raises: the store is not to be had.
        where = reach.shown_url(settings.database_url)
        typer.echo(
            f"CASINO_DATABASE_URL: cannot open the store at {where}: {reach.first_line(error)}",
            err=True,
        )
        raise typer.Exit(USAGE_ERROR) from None
    runs = settings.projector_runs
    store.projector_inside = runs == "inside"
    store.reads_wait_for_head = runs == "beside"
    return store


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


WORKERS_MAX = 32  # server processes; beyond the cores they only contend


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="interface to listen on"),
    port: int = typer.Option(8000, help="TCP port"),
    workers: int = typer.Option(
        1, min=1, max=WORKERS_MAX, help="server processes sharing the port (PostgreSQL only)"
    ),
) -> None:
    """Run the HTTP API on the configured store (embedded SQLite by default)."""
    import uvicorn

    settings = settings_or_exit()
    configure_logging(settings.log_level)
    log = get_logger("casino.serve")
    if workers > 1 and not settings.on_postgres:
        typer.echo(
            "--workers above 1 needs PostgreSQL: an SQLite store is one file written by "
            "one process; set CASINO_DATABASE_URL to a postgresql:// URL",
            err=True,
        )
        raise typer.Exit(USAGE_ERROR)
    if settings.uses_dev_keys:
        log.warning(
            "dev_keys_in_use",
            detail="no CASINO_API_KEYS configured: anyone can use dev-service, dev-operator "
            "and dev-auditor. Never run like this with real money.",
        )
    # One store opened here first, also with several workers: it makes or migrates
    # the schema (and the development seal key) once, before the workers race to.
    store = open_configured_store(settings, sealed=True)
    log.info(
        "starting",
        store=settings.database_url.split("@")[-1],
        host=host,
        port=port,
        workers=workers,
        projector=settings.projector_runs,
    )
    beside = _projector_beside() if settings.projector_runs == "beside" else None
    # The event loop and HTTP parser in C (uvloop, httptools); no log config of
    # uvicorn's own: its lines go through ours, as JSON (infra/logs.py).
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "access_log": False,
        "log_config": None,
        "loop": "uvloop",
        "http": "httptools",
    }
    try:
        if workers == 1:
            from infra.http.app import create_app

            uvicorn.run(create_app(store, settings), **options)
        else:
            store.close()
            uvicorn.run("infra.cli:served_app", factory=True, workers=workers, **options)
    finally:
        if beside is not None:
            beside.terminate()
            beside.wait(timeout=30)


def served_app() -> Any:
    """The app of one of several server processes (`serve --workers`), each with its
    own store and connections."""
    from infra.http.app import create_app

    _end_with_parent()  # a killed `casino serve` leaves no worker serving behind it
    settings = settings_or_exit()
    configure_logging(settings.log_level)
    return create_app(open_configured_store(settings, sealed=True), settings)


def _projector_beside() -> subprocess.Popen[bytes]:
    """`casino projections run` in a process of its own, ended with the server (the
    kernel ends it even when the server is killed, so none is left behind; each of
    several server processes is ended so too, in `served_app`)."""
    command = [sys.executable, "-m", "infra.cli", "projections", "run"]
    return subprocess.Popen(command, preexec_fn=_end_with_parent)


def _end_with_parent() -> None:
    """Have the kernel send this process SIGTERM when its parent dies (Linux)."""
    import ctypes
    import os
    import signal

    PR_SET_PDEATHSIG = 1  # <sys/prctl.h>
    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # died before the request was made: nothing will tell us
        os.kill(os.getpid(), signal.SIGTERM)


@projections_app.command("run")
def run_projector() -> None:
    """Keep the read models up with the event log until stopped (SIGTERM or Ctrl-C).

    `casino serve` on PostgreSQL starts one beside itself (CASINO_PROJECTOR=auto); with
    CASINO_PROJECTOR=separate, the operator runs it. Any number may run, the read
    models' lock lets one write at a time.
    """
    import signal
    import threading

    from infra.significant import Throttle
    from infra.workers import ProjectorWorker

    settings = settings_or_exit()
    configure_logging(settings.log_level)
    store = open_configured_store(settings, existing=True)
    stopping = threading.Event()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signal_number, lambda *_: stopping.set())
    worker = ProjectorWorker(store, settings.projector_debounce_ms / 1000)
    # Its failures are significant events too, counted once a minute (rules.md 7).
    worker.failures = Throttle(lambda kind, detail: store.app.record_significant(kind, detail))
    get_logger("casino.projections").info("projector_started", position=store.projector.position())
    worker.start()
    while worker.alive and not stopping.wait(1.0):
        pass  # Until told to stop, or the projector stopped at an event it cannot apply.
    worker.stop()
    worker.failures.flush()
    failed = store.projector.failure
    store.close()
    if failed is not None:
        typer.echo(f"the projector stopped: {failed.detail}", err=True)
        raise typer.Exit(DISCREPANCY)


@projections_app.command("rebuild")
def rebuild(
    check: bool = typer.Option(
        False, "--check", help="only compare; exit 1 if the live read models differ"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as one JSON object"),
) -> None:
    """Rebuild every read model from the events: first aside, to compare with the live
    ones; then, where they differ, swap the rebuild in, in one transaction."""
    from infra.audit.rebuild import rebuild as rebuild_read_models

    store = open_configured_store(settings_or_exit(), existing=True)
    try:
        with _progress("rebuilding aside", store.projector.head(), quiet=as_json) as advance:
            comparison = rebuild_read_models(store, advance, replace=not check)
    except ProjectionFailed as failed:
        typer.echo(f"cannot rebuild: {failed.detail}", err=True)
        raise typer.Exit(DISCREPANCY) from None
    finally:
        store.close()
    differs = bool(comparison.differences)
    if as_json:
        print_json(
            {
                "position": comparison.position,
                "holds": not differs,
                "differences": comparison.differences,
                "replaced": differs and not check,
            }
        )
    else:
        for difference in comparison.differences:
            typer.echo(f"DIFFERS: {difference}")
        if not differs:
            typer.echo(
                "the live read models equal a rebuild from the events up to position "
                f"{comparison.position}: nothing to replace"
            )
        elif not check:
            typer.echo("replaced the live read models with the rebuild")
    raise typer.Exit(DISCREPANCY if differs and check else 0)


@contextmanager
def _progress(
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


@audit_app.command("verify")
def audit_verify(
    round_id: str | None = typer.Option(None, "--round", help="check this round only"),
    anchor: list[str] = typer.Option(
        [], help="POSITION:LINK, a chain link noted earlier (repeatable): must still hold"
    ),
    public_key: str | None = typer.Option(
        None,
        "--public-key",
        envvar="CASINO_SEAL_PUBLIC_KEY",
        help="the seal key's public half (base64 or PEM): every seal must be signed by "
        "it; default that of CASINO_SEAL_KEY, if configured",
    ),
    witness: Path | None = typer.Option(
        None,
        "--witness",
        help="a witness file: every checkpoint in it must hold; default CASINO_WITNESS, "
        "if that file is there",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as one JSON object"),
) -> None:
    """Replay the store: seals, chain, versions, books, snapshots, every round's cards
    and payouts."""
    from infra.audit.chain_check import parse_anchor
    from infra.audit.verify import verify
    from infra.store.seal import SealKeyError, parse_private_key, parse_public_key

    settings = settings_or_exit()
    try:
        anchors = dict(parse_anchor(text) for text in anchor)
        key = parse_public_key(public_key) if public_key else None
    except (ValueError, SealKeyError) as error:
        typer.echo(f"--public-key: {error}" if public_key else str(error), err=True)
        raise typer.Exit(USAGE_ERROR) from None
    if key is None and settings.seal_key.strip():
        key = parse_private_key(settings.seal_key).public_key()
    if witness is not None and not witness.is_file():
        typer.echo(f"--witness: {witness} is no file", err=True)
        raise typer.Exit(USAGE_ERROR)
    if witness is None and Path(settings.witness).is_file():
        witness = Path(settings.witness)
    store = open_configured_store(settings, existing=True)
    # The log is read twice: once checked, once rebuilt aside and compared.
    total = store.projector.head() * (1 if round_id else 2)
    with _progress("verifying events", total, quiet=as_json) as advance:
        report = verify(store, round_id, advance, anchors, key, witness)
    store.close()
    if as_json:
        print_json(_report_json(report))
    else:
        _print_verdict(report, signed=key is not None)
    raise typer.Exit(DISCREPANCY if report.problems else 0)


def _report_json(report: Any) -> dict[str, Any]:
    return {
        "holds": not report.problems,
        "events": report.events,
        "rounds": report.rounds,
        "seals": report.seals,
        "receipts": report.receipts,
        "snapshots": report.snapshots,
        "witness_checkpoints": report.witness_checkpoints,
        "discrepancies": report.problems,
        "notes": report.notes,
        "head": f"{report.head_position}:{report.head_link}",
        "hidden_from": report.hidden_from,
    }


def _print_verdict(report: Any, signed: bool) -> None:
    for problem in report.problems:
        typer.echo(f"DISCREPANCY: {problem}")
    for note in report.notes:
        typer.echo(f"note: {note}")
    problems = report.problems
    verdict = "all holds" if not problems else f"{len(problems)} discrepancies"
    typer.echo(f"checked {report.events} events and {report.rounds} rounds: {verdict}")
    signatures = (
        "signatures checked with the public key"
        if signed
        else "signatures not checked: give --public-key"
    )
    typer.echo(
        f"seals: {report.seals} ({signatures}); they cover the {report.receipts} command "
        f"receipts too; snapshots: {report.snapshots} checked against their events"
    )
    if report.witness_checkpoints:
        typer.echo(f"witness: {report.witness_checkpoints} checkpoints checked")
    head = f"{report.head_position}:{report.head_link}"
    typer.echo(f"head of the event chain (note it elsewhere, check it later with --anchor): {head}")
    if report.hidden_from is not None:
        typer.echo(
            f"(links from position {report.hidden_from} on are not shown: they depend on "
            "the seed or hole card of a round not over yet)"
        )


@audit_app.command("replay")
def audit_replay(
    round_id: str,
    as_json: bool = typer.Option(False, "--json", help="print the timeline as one JSON object"),
) -> None:
    """Print one round's timeline, event by event."""
    from domain.errors import DomainError
    from infra.audit.replay import timeline, timeline_records

    store = open_configured_store(settings_or_exit(), existing=True)
    try:
        if as_json:
            print_json({"round_id": round_id, "events": timeline_records(store, round_id)})
        else:
            typer.echo("\n".join(timeline(store, round_id)))
    except DomainError as error:
        typer.echo(error.detail, err=True)
        raise typer.Exit(USAGE_ERROR) from None
    finally:
        store.close()


@audit_app.command("export")
def audit_export(
    since: str | None = typer.Option(
        None, "--from", help="from this day (YYYY-MM-DD) or instant (ISO; UTC unless offset)"
    ),
    until: str | None = typer.Option(
        None, "--to", help="to this day, all of it, or instant, inclusive (as --from)"
    ),
    from_position: int | None = typer.Option(None, help="first log position, inclusive"),
    to_position: int | None = typer.Option(None, help="last log position, inclusive"),
    format_: str = typer.Option("jsonl", "--format", help="jsonl or csv"),
    output: Path | None = typer.Option(None, "--output", "-o", help="a file, not stdout"),
) -> None:
    """Every event in a range, for an outside auditor: JSON lines or CSV on stdout."""
    from infra.audit.export import run

    status = run(
        lambda: open_configured_store(settings_or_exit(), existing=True),
        since=since,
        until=until,
        from_position=from_position,
        to_position=to_position,
        format_=format_,
        output=output,
    )
    raise typer.Exit(status)


@keys_app.command("new")
def keys_new(
    as_json: bool = typer.Option(False, "--json", help="print the pair as one JSON object"),
) -> None:
    """Print a new seal key pair: the private key for CASINO_SEAL_KEY (base64 of its 32
    bytes; keep it away from the database), the public key for auditors."""
    from infra.store.seal import new_private_key, private_key_text, public_key_text

    key = new_private_key()
    private, public = private_key_text(key), public_key_text(key.public_key())
    if as_json:
        print_json({"seal_key": private, "public_key": public})
    else:
        typer.echo(f"CASINO_SEAL_KEY={private}")
        typer.echo(f"CASINO_SEAL_PUBLIC_KEY={public}")


@keys_app.command("secret")
def new_secret_key() -> None:
    """Print a new CASINO_SECRET_KEY: the AES-256 key that seals each round's seed until
    the round is over. Keep it outside the database; losing it strands open rounds."""
    from infra.secrets import new_key

    typer.echo(new_key())


def main() -> None:
    app()


if __name__ == "__main__":
    main()
