"""The `casino` command line (API.md, CLI).

Every command exits 0 when all holds, 1 on a discrepancy (`audit verify`,
`projections rebuild --check`) and 2 on a usage or configuration error: a bad
option or setting, a store that cannot be opened, and, for the commands that
only read (`audit verify`, `audit replay`, `audit export`, `projections rebuild
--check`, `reports`), a store that does not exist - they never create one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import typer

from infra.cli import store as cli_store
from infra.cli.audit import audit_app
from infra.cli.reports import reports_app
from infra.cli.rules import rules_app
from infra.cli.store import (
    DISCREPANCY,
    USAGE_ERROR,
    open_configured_store,
    print_json,
    progress,
    settings_or_exit,
    tenants_or_exit,
)
from infra.cli.tenants import tenants_app
from infra.logs import configure_logging, get_logger
from projections.failure import ProjectionFailed

app = typer.Typer(rich_markup_mode="markdown")  # its help: main_options' docstring
projections_app = typer.Typer(
    rich_markup_mode="markdown", help="Read models built from the event log."
)
app.add_typer(projections_app, name="projections")
app.add_typer(audit_app, name="audit")
app.add_typer(rules_app, name="rules")
app.add_typer(reports_app, name="reports")
app.add_typer(tenants_app, name="tenants")
keys_app = typer.Typer(
    rich_markup_mode="markdown", help="The seal key pair, and the key that seals round seeds."
)
app.add_typer(keys_app, name="keys")


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"casino {version('casino-ledger')}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    show_version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="print the version"
    ),
    tenant: str = typer.Option(
        "",
        "--tenant",
        help="the tenant the command runs on (CASINO_TENANTS); by default `default`",
    ),
) -> None:
    """Casino accounting: serve the API, check rules, audit the store.

    Exit status: 0 all holds, 1 a discrepancy, 2 a usage or configuration error.
    """
    cli_store.chosen_tenant = tenant or None


WORKERS_MAX = 32  # server processes; beyond the cores they only contend
SERVE_PID_VARIABLE = "CASINO_SERVE_PID"  # set by `casino serve` for its server processes
SERVE_TENANT_VARIABLE = "CASINO_SERVE_TENANT"  # and the tenant `--tenant` named, if any


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

    if cli_store.serves_tenants():
        configure_logging(cli_store.base_settings_or_exit().log_level)
        _serve_tenants(host, port, workers)
        return
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
    store = open_configured_store(settings, sealed=True, serving=True, name="casino-serve")
    log.info(
        "starting",
        store=settings.database_url.split("@")[-1],
        host=host,
        port=port,
        workers=workers,
        projector=settings.projector_runs,
    )
    chosen = cli_store.chosen_tenant  # `casino --tenant NAME serve`: that tenant alone
    beside = ProjectorBeside(chosen) if settings.projector_runs == "beside" else None
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

            uvicorn.run(create_app(store, settings, tenant=chosen), **options)
        else:
            store.close()
            # Each server process checks that this one still runs once it has started:
            # one started just before this was killed would otherwise serve on alone.
            os.environ[SERVE_PID_VARIABLE] = str(os.getpid())
            if chosen is not None:
                os.environ[SERVE_TENANT_VARIABLE] = chosen
            uvicorn.run("infra.cli:served_app", factory=True, workers=workers, **options)
    finally:
        if beside is not None:
            beside.stop()


def uvicorn_options(host: str, port: int) -> dict[str, Any]:
    # The event loop and HTTP parser in C (uvloop, httptools); no log config of
    # uvicorn's own: its lines go through ours, as JSON (infra/logs.py).
    return {"host": host, "port": port, "access_log": False, "log_config": None,
            "loop": "uvloop", "http": "httptools"}  # fmt: skip


def _serve_tenants(host: str, port: int, workers: int) -> None:
    """Every tenant of CASINO_TENANTS served by this process (infra/http/tenants.py),
    each with its store, workers and (on PostgreSQL) projector beside the server."""
    import uvicorn

    tenants = tenants_or_exit()
    if workers > 1 and not all(tenant.on_postgres for tenant in tenants.values()):
        typer.echo("--workers above 1 needs every tenant on PostgreSQL", err=True)
        raise typer.Exit(USAGE_ERROR)
    served = tenant_apps(tenants)  # each store made or migrated once, here, first
    for tenant, listed in tenants.items():
        get_logger("casino.serve").info(
            "tenant", tenant=tenant, store=listed.location, projector=listed.settings.projector_runs
        )
    beside = [
        ProjectorBeside(name)
        for name, t in tenants.items()
        if t.settings.projector_runs == "beside"
    ]
    try:
        if workers == 1:
            uvicorn.run(served, **uvicorn_options(host, port))
        else:
            for app in served.apps.values():
                app.state.store.close()
            os.environ[SERVE_PID_VARIABLE] = str(os.getpid())
            uvicorn.run("infra.cli:served_app", factory=True, workers=workers,
                        **uvicorn_options(host, port))  # fmt: skip
    finally:
        for projector in beside:
            projector.stop()


def tenant_apps(tenants: dict[str, Any]) -> Any:
    """One app per tenant, over its own store, behind the key that chooses it."""
    from infra.http.app import create_app
    from infra.http.tenants import DuplicateKey, TenantApps
    from infra.store import reach
    from infra.store.faults import StoreNotOpened, is_store_fault
    from infra.tenants import load_tenants

    def opener(name: str, tenant: Any) -> Any:
        """The tenant's app over its store; StoreNotOpened while its database is down
        (a fault, tried again: TenantApps), else what stops a start."""
        url = tenant.settings.database_url
        if (problem := reach.down(url)) is not None:
            raise StoreNotOpened(problem)
        try:
            store = open_configured_store(
                tenant.settings, sealed=True, serving=True, name=f"casino-serve-{name}"
            )
        except typer.Exit:
            if (problem := reach.down(url)) is not None:  # it went down as it opened
                raise StoreNotOpened(problem) from None
            raise
        try:
            return create_app(store, tenant.settings, tenant=name)
        except BaseException:
            store.close()
            raise

    base = cli_store.base_settings_or_exit()
    listed = Path(base.tenants.strip())
    directory = None if base.tenants.strip().startswith("{") else listed  # a file: watched
    apps, waiting = {}, {}
    for name, tenant in tenants.items():
        try:
            apps[name] = opener(name, tenant)
        except Exception as error:
            # One brand's database down must not keep the others shut: it is tried again
            # in the background, its requests answered 503 until it opens. Anything else
            # (a wrong setting, a log changed behind the service's back) stops the start.
            if not is_store_fault(error):
                raise
            why = type(error).__name__
            log = get_logger("casino.serve")
            log.error("tenant_not_opened", tenant=name, error=why, detail=reach.first_line(error))
            waiting[name] = (tenant, why)
    if not apps:
        typer.echo("no tenant's database can be reached: nothing to serve", err=True)
        raise typer.Exit(USAGE_ERROR)
    try:
        return TenantApps(
            apps, waiting=waiting, directory=directory, reload=lambda: load_tenants(base),
            opener=opener,
        )  # fmt: skip
    except DuplicateKey as error:
        typer.echo(f"configuration error: CASINO_TENANTS: {error}", err=True)
        raise typer.Exit(USAGE_ERROR) from None


def served_app() -> Any:
    """The app of one of several server processes (`serve --workers`), each with its
    own store and connections."""
    from infra.http.app import create_app

    # A killed `casino serve` leaves no server process serving behind it, not even one
    # still starting when it was killed (its parent is then init, not the server).
    _end_with_parent(int(os.environ.get(SERVE_PID_VARIABLE) or os.getppid()))
    cli_store.chosen_tenant = os.environ.get(SERVE_TENANT_VARIABLE) or None
    if cli_store.serves_tenants():
        configure_logging(cli_store.base_settings_or_exit().log_level)
        return tenant_apps(tenants_or_exit())
    settings = settings_or_exit()
    configure_logging(settings.log_level)
    store = open_configured_store(settings, sealed=True, serving=True, name="casino-serve")
    return create_app(store, settings, tenant=cli_store.chosen_tenant)


class ProjectorBeside:
    """`casino projections run` in a process of its own, ended with the server (the
    kernel ends it even when the server is killed, so none is left behind; each of
    several server processes is ended so too, in `served_app`), and started again
    when it ends on its own (killed, or stopped at an event it cannot apply), after
    a wait that doubles up to RESTART_SECONDS_MAX: a process of ours that dies is a
    fault the service comes back from without a restart (rules.md 8)."""

    RESTART_SECONDS_FIRST = 1.0
    RESTART_SECONDS_MAX = 60.0
    STEADY_SECONDS = 60.0  # a process that ran this long starts the next wait afresh

    def __init__(self, tenant: str | None = None) -> None:
        import threading

        self.tenant = tenant  # one tenant's (`casino --tenant NAME projections run`)
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # no new process once stop has begun
        self._process = self._start()
        self._keeper = threading.Thread(target=self._keep, name="projector-beside", daemon=True)
        self._keeper.start()

    def _start(self) -> subprocess.Popen[bytes]:
        chosen = ["--tenant", self.tenant] if self.tenant else []
        command = [sys.executable, "-m", "infra.cli", *chosen, "projections", "run"]
        return subprocess.Popen(command, preexec_fn=_end_with_parent)

    def _keep(self) -> None:
        import time

        wait = self.RESTART_SECONDS_FIRST
        while not self._stopping.is_set():
            started = time.monotonic()
            code = self._process.wait()
            if self._stopping.is_set():
                return
            if time.monotonic() - started > self.STEADY_SECONDS:
                wait = self.RESTART_SECONDS_FIRST
            get_logger("casino.serve").warning("projector_ended", exit_code=code, restart_in=wait)
            if self._stopping.wait(wait):
                return
            wait = min(self.RESTART_SECONDS_MAX, wait * 2)
            with self._lock:
                if self._stopping.is_set():
                    return
                self._process = self._start()

    def stop(self) -> None:
        with self._lock:
            self._stopping.set()
        self._process.terminate()
        self._process.wait(timeout=30)


def _end_with_parent(parent: int | None = None) -> None:
    """Have the kernel kill this process when its parent (`parent`, by default the one
    it has now) dies (Linux). SIGKILL, not SIGTERM: a server worker told to shut down
    gracefully after its supervisor had died could hang in that shutdown for good,
    holding its database connections; a parent killed is a crash, and nothing here
    needs more than crash safety."""
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1  # <sys/prctl.h>
    parent = os.getppid() if parent is None else parent
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # died before the request was made: nothing will tell us
        os.kill(os.getpid(), signal.SIGKILL)


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
    # Sealed: its failures are significant events, saved like any other (rules.md 5).
    store = open_configured_store(settings, existing=True, sealed=True, name="casino-projections")
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
    from infra.audit.rebuild import NotPlainTables
    from infra.audit.rebuild import rebuild as rebuild_read_models

    store = open_configured_store(settings_or_exit(), existing=True)
    try:
        with progress("rebuilding aside", store.projector.head(), quiet=as_json) as advance:
            comparison = rebuild_read_models(store, advance, replace=not check)
    except ProjectionFailed as failed:
        typer.echo(f"cannot rebuild: {failed.detail}", err=True)
        raise typer.Exit(DISCREPANCY) from None
    except NotPlainTables as tampered:  # a discrepancy: never compared, never replaced
        typer.echo(f"cannot rebuild: {tampered}", err=True)
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


@keys_app.command("rotate")
def keys_rotate(
    next_public_key: str = typer.Option(
        ..., "--next-public-key", help="the next key's public half (`casino keys new`)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as one JSON object"),
) -> None:
    """Hand the log's seals over to the next key: recorded in the log, sealed by the
    key that signs now (CASINO_SEAL_KEY). Then configure the next private key as
    CASINO_SEAL_KEY and restart every server; an auditor keeps the pinned key, and
    verify follows the chain from it."""
    from infra.store.key_chain import fingerprint
    from infra.store.seal import SealKeyError, parse_public_key, public_key_text

    try:
        next_key = parse_public_key(next_public_key)
    except SealKeyError as error:
        typer.echo(f"--next-public-key: {error}", err=True)
        raise typer.Exit(USAGE_ERROR) from None
    settings = settings_or_exit()
    store = open_configured_store(settings, existing=True, sealed=True, name="casino-cli")
    from domain.errors import DomainError

    try:
        current = store.app.recorder.sealer.public_key  # type: ignore[attr-defined]
        outcome = store.app.rotate_seal_key(public_key_text(current), public_key_text(next_key))
    except DomainError as refused:
        typer.echo(f"--next-public-key: {refused.detail}", err=True)
        raise typer.Exit(USAGE_ERROR) from None
    finally:
        store.close()
    handed = {"from": fingerprint(current), "to": fingerprint(next_key),
              "position": outcome.position}  # fmt: skip
    if as_json:
        print_json(handed)
        return
    typer.echo(
        f"the log is handed over from {handed['from']} to {handed['to']} at position "
        f"{handed['position']}: configure the next private key as CASINO_SEAL_KEY and "
        "restart every server"
    )


@keys_app.command("secret")
def new_secret_key() -> None:
    """Print a new CASINO_SECRET_KEY: the AES-256 key that seals each round's seed until
    the round is over. Keep it outside the database; losing it strands open rounds."""
    from infra.secrets import new_key

    typer.echo(new_key())


def main() -> None:
    app()
