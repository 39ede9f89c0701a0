"""`casino audit`: verify the whole store, replay one round, export a range of the log,
acknowledge a tail found changed behind the service's back."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import typer

from infra.cli.store import (
    DISCREPANCY,
    USAGE_ERROR,
    open_configured_store,
    print_json,
    progress,
    settings_or_exit,
)

audit_app = typer.Typer(rich_markup_mode="markdown", help="Verify and replay what the store holds.")


@audit_app.command("verify")
def audit_verify(
    round_id: str | None = typer.Option(None, "--round", help="check this round only"),
    anchor: list[str] = typer.Option(
        [], help="POSITION:LINK, a chain link noted earlier (repeatable): must still hold"
    ),
    public_key: str | None = typer.Option(
        None,
        "--public-key",
        envvar=["CASINO_AUDITOR_PUBLIC_KEY", "CASINO_SEAL_PUBLIC_KEY"],
        help="the auditor's pinned public key (base64 or PEM): every seal must be signed "
        "by it or by a key it handed over to; never read from the service's "
        "CASINO_SEAL_KEY. In development, without one, the development key under var/",
    ),
    witness: str | None = typer.Option(
        None,
        "--witness",
        help="the witness: a file, or nats://user:password@host:port/STREAM; its "
        "checkpoints must count up, chain, be signed, and each be a seal the store "
        "holds; default CASINO_WITNESS (a file only if it is there)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as one JSON object"),
    since: Path | None = typer.Option(
        None,
        "--since",
        help="STATE: check only what was added after the state an earlier verify wrote "
        "(--state-out), once its anchor still holds; a state malformed or of another "
        "log exits 2",
    ),
    state_out: Path | None = typer.Option(
        None,
        "--state-out",
        help="FILE (the auditor's own, nothing the service writes): where the state for "
        "the next --since goes, when everything holds",
    ),
) -> None:
    """Replay the store: seals, chain, versions, books, snapshots, every round's cards
    and payouts; or, with --since, only what was added after an earlier verify."""
    from infra.audit.chain_check import parse_anchor
    from infra.audit.resume import StateRefused, read_state_file
    from infra.audit.verify import verify
    from infra.checkpoints.check import WitnessNotReadable, witness_to_verify
    from infra.store.seal import SealKeyError, parse_public_key

    settings = settings_or_exit()
    try:
        anchors = dict(parse_anchor(text) for text in anchor)
        key = parse_public_key(public_key) if public_key else None
    except (ValueError, SealKeyError) as error:
        typer.echo(f"--public-key: {error}" if public_key else str(error), err=True)
        raise typer.Exit(USAGE_ERROR) from None
    if key is None and settings.env == "production":
        _refuse_without_a_pinned_key()
    if since is not None and round_id is not None:
        typer.echo("--since checks the whole store after its state: not with --round", err=True)
        raise typer.Exit(USAGE_ERROR)
    try:
        state = read_state_file(since) if since is not None else None
    except StateRefused as refused:
        _refuse_the_state(since, refused)
    witness_key = settings.witness_public_key.strip()
    try:
        checked, unchecked = witness_to_verify(witness, settings.witness)
    except WitnessNotReadable as error:
        typer.echo(str(error), err=True)
        raise typer.Exit(USAGE_ERROR) from None
    store = open_configured_store(settings, existing=True)
    if key is None:
        key = _development_key_or_exit(settings, store)
    checkpoint_key = parse_public_key(witness_key) if witness_key else key
    # The log is read once: the rebuild aside it is compared with is fed from that pass.
    total = store.projector.head()
    with progress("verifying events", total, quiet=as_json) as advance:
        try:
            report = verify(store, round_id, advance, anchors, key, checked, checkpoint_key, state)
        except StateRefused as refused:
            store.close()
            _refuse_the_state(since, refused)
    store.close()
    if checked is not None:
        checked.close()
    report.notes += [unchecked] if unchecked else []
    if state_out is not None:
        report.notes.append(_state_written(state_out, report.state))
    if as_json:
        print_json(_report_json(report))
    else:
        _print_verdict(report, signed=key is not None)
    raise typer.Exit(DISCREPANCY if report.problems else 0)


def _refuse_the_state(since: Any, refused: Exception) -> NoReturn:
    typer.echo(f"--since {since}: {refused}; nothing was checked", err=True)
    raise typer.Exit(USAGE_ERROR)


def _state_written(path: Path, state: Any) -> str:
    """Write the state for the next --since, if verify found everything holding."""
    from infra.audit.resume import write_state_file

    if state is None:
        return f"no state written to {path}: only a verify of the whole store that holds writes one"
    write_state_file(path, state)
    return f"state written to {path}: `verify --since` it takes up after position {state.position}"


def _refuse_without_a_pinned_key() -> None:
    typer.echo(
        "--public-key: production verifies only with the auditor's pinned key "
        "(--public-key or CASINO_AUDITOR_PUBLIC_KEY), never with the service's own",
        err=True,
    )
    raise typer.Exit(USAGE_ERROR)


def _development_key_or_exit(settings: Any, store: Any) -> Any:
    """Without a pinned key: in production exit 2 (a key read from the service's own
    configuration proves nothing against whoever configures the service); in
    development the development key under var/, if there is one, said so."""
    from infra.keys import DEV_SEAL_KEY_PATH
    from infra.store.seal import parse_private_key

    if settings.env == "production":
        store.close()
        _refuse_without_a_pinned_key()
    if not DEV_SEAL_KEY_PATH.is_file():
        return None
    typer.echo(
        f"note: no pinned key: signatures checked with the development key {DEV_SEAL_KEY_PATH}, "
        "which proves nothing against whoever can read it",
        err=True,
    )
    return parse_private_key(DEV_SEAL_KEY_PATH.read_text()).public_key()


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
        "acknowledged": [ack.record() for ack in report.acknowledged],
        "notes": report.notes,
        "head": f"{report.head_position}:{report.head_link}",
        "hidden_from": report.hidden_from,
        "since": report.since,
        "unseen": report.unseen,
    }


def _print_verdict(report: Any, signed: bool) -> None:
    for ack in report.acknowledged:
        _print_acknowledgment(ack.record())
    for problem in report.problems:
        typer.echo(f"DISCREPANCY: {problem}")
    for note in report.notes:
        typer.echo(f"note: {note}")
    problems = report.problems
    verdict = "all holds" if not problems else f"{len(problems)} discrepancies"
    since = "" if report.since is None else f" after position {report.since}"
    typer.echo(f"checked {report.events} events{since} and {report.rounds} rounds: {verdict}")
    for unseen in report.unseen:
        typer.echo(f"not seen by an incremental verify (a full verify sees it): {unseen}")
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


def _print_acknowledgment(ack: dict[str, Any]) -> None:
    from infra.audit.acknowledge import found_lines

    who = " as ".join(str(name) for name in (ack["os_user"], ack["database_role"]) if name)
    typer.echo(
        f"ACKNOWLEDGED at position {ack['position']} ({ack['at']}, by {who or 'an operator'}):"
        f" {ack['reason']!r}"
    )
    for line in found_lines(ack["found"]):
        typer.echo(f"  found: {line}")
    for finding in ack["covered"]:
        typer.echo(f"  covered: {finding}")
    if not ack["signature_checked"]:
        typer.echo(
            "  (its signature is not checked without --public-key: it covers nothing, and "
            "what it found is listed as discrepancies)"
        )


@audit_app.command("acknowledge")
def audit_acknowledge(
    reason: str = typer.Option(
        ...,
        "--reason",
        help="why the log is taken as found (1-500 characters): recorded for ever",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as one JSON object"),
) -> None:
    """Seal a tail changed behind the service's back as found, with your reason, so that
    the service saves again; recorded as a significant event that verify names for
    ever. Runs with CASINO_DATABASE_OWNER_URL (else CASINO_DATABASE_URL) and
    CASINO_SEAL_KEY."""
    from infra.audit.acknowledge import BadReason, Unchained, acknowledge, check_reason
    from infra.audit.tail import NoSealOfTheKey, UnreadableEvent

    settings = settings_or_exit()
    try:
        check_reason(reason)
    except BadReason as error:
        typer.echo(str(error), err=True)
        raise typer.Exit(USAGE_ERROR) from None
    key = _acknowledging_key_or_exit(settings)
    store = open_configured_store(settings, existing=True)
    database = _writer_or_exit(settings, store)
    try:
        done = acknowledge(store, database, key, reason)
    except (NoSealOfTheKey, UnreadableEvent, Unchained) as error:
        typer.echo(f"nothing acknowledged: {error}", err=True)
        raise typer.Exit(USAGE_ERROR) from None
    finally:
        database.close()
        store.close()
    _print_acknowledged(done, as_json)


def _writer_or_exit(settings: Any, store: Any) -> Any:
    """The owner's connection (else the service's), or exit 2 naming the setting."""
    from infra.audit.acknowledge import writer
    from infra.store import reach

    setting = "CASINO_DATABASE_OWNER_URL" if settings.database_owner_url else "CASINO_DATABASE_URL"
    url = settings.database_owner_url or settings.database_url
    try:
        return writer(url, settings.postgres_schema)
    except Exception as error:  # Whatever the driver raises: no connection to be had.
        store.close()
        typer.echo(
            f"{setting}: cannot connect to {reach.shown_url(url)}: {reach.first_line(error)}",
            err=True,
        )
        raise typer.Exit(USAGE_ERROR) from None


def _acknowledging_key_or_exit(settings: Any) -> Any:
    """The service's seal key: CASINO_SEAL_KEY, or in development the key under var/
    if there is one (never a new one: it would sign none of the store's seals)."""
    from infra.config import ConfigError
    from infra.keys import DEV_SEAL_KEY_PATH, seal_key_for

    if not settings.seal_key.strip() and (
        settings.env == "production" or not DEV_SEAL_KEY_PATH.is_file()
    ):
        typer.echo(
            "configuration error: CASINO_SEAL_KEY: acknowledging needs the service's seal key"
            f" (none configured, and no development key at {DEV_SEAL_KEY_PATH})",
            err=True,
        )
        raise typer.Exit(USAGE_ERROR)
    try:
        return seal_key_for(settings)
    except ConfigError as error:
        typer.echo(f"configuration error: {error}", err=True)
        raise typer.Exit(USAGE_ERROR) from None


def _print_acknowledged(done: Any, as_json: bool) -> None:
    from infra.audit.acknowledge import found_lines, next_steps

    if as_json:
        print_json(
            {
                "acknowledged": done.seal is not None,
                "position": done.tail.position if done.seal is not None else None,
                "event_id": done.event_id,
                "found": done.details,
            }
        )
        return
    if done.seal is None:
        head = "no seal yet" if done.tail.head is None else "its last seal signed by the key"
        typer.echo(
            f"the log is sound: nothing past its last event (position {done.tail.top}), and "
            f"{head}; nothing written"
        )
        return
    for line in found_lines(done.details):
        typer.echo(f"found: {line}")
    typer.echo(
        f"acknowledged at position {done.tail.position}: significant event log_acknowledged "
        f"{done.event_id}, sealed with positions {done.seal.first_position}.."
        f"{done.seal.last_position} by the service's key; the service saves again"
    )
    for line in next_steps(done.details):
        typer.echo(line)


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
