"""`casino reports revenue|rtp`: the operators' reports for auditors without HTTP.

The same figures as GET /v1/reports/revenue and /v1/reports/rtp (infra/reports.py).
It only reads: a store that does not exist is a usage error (exit 2), never created.
With the projector inside the server (the default) the read models are first brought
up to the log's head, as an HTTP read would; with CASINO_PROJECTOR=separate they are
read as they stand, and the position they include is printed with them.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import typer

from infra import reports

reports_app = typer.Typer(
    rich_markup_mode="markdown", help="Revenue and return to player, from the read models."
)
MODES, GROUPS, GAMES = ("real", "play"), ("day", "month"), ("baccarat", "blackjack")
USAGE_ERROR = 2

MODE = typer.Option("real", help="real or play")
FIRST = typer.Option(None, "--from", help="first UTC day, YYYY-MM-DD (inclusive)")
LAST = typer.Option(None, "--to", help="last UTC day, YYYY-MM-DD (inclusive)")
AS_JSON = typer.Option(False, "--json", help="print the report as one JSON object")
AS_CSV = typer.Option(False, "--csv", help="print the report as CSV")


@reports_app.command("revenue")
def revenue(
    mode: str = MODE,
    first: str | None = FIRST,
    last: str | None = LAST,
    group: str = typer.Option("day", help="day or month"),
    as_json: bool = AS_JSON,
    as_csv: bool = AS_CSV,
) -> None:
    """Stakes, returns, GGR and commission per day or month, game and variant, with
    totals over the days and month, year and life to date (to `--to`, default today)."""
    _check(mode, MODES, "--mode")
    _check(group, GROUPS, "--group")
    since, until = (
        _day(first, "--from"),
        _day(last, "--to") or datetime.datetime.now(datetime.UTC).date(),
    )
    _check_order(since, until)

    def read(cursor: Any) -> dict[str, Any]:
        return reports.revenue_report(cursor, mode, since, until, group)

    report = _read(read)
    if as_csv:
        typer.echo(reports.revenue_csv(report), nl=False)
    elif as_json:
        _print_json(report)
    else:
        _print_revenue(report)


@reports_app.command("rtp")
def rtp(
    game: str = typer.Option(..., help="baccarat or blackjack"),
    variant: str | None = typer.Option(None, help="the game's variant (blackjack: the hall)"),
    mode: str = MODE,
    first: str | None = FIRST,
    last: str | None = LAST,
    as_json: bool = AS_JSON,
    as_csv: bool = AS_CSV,
) -> None:
    """A game's actual return to player beside the theoretical one, and a 95% interval
    of the difference."""
    _check(mode, MODES, "--mode")
    _check(game, GAMES, "--game")
    since, until = _day(first, "--from"), _day(last, "--to")
    _check_order(since, until)

    def read(cursor: Any) -> dict[str, Any]:
        return reports.rtp_report(cursor, mode, game, variant, since, until)

    report = _read(read)
    if as_csv:
        typer.echo(reports.rtp_csv(report), nl=False)
    elif as_json:
        _print_json(report)
    else:
        interval = report["difference_ci95"]
        shown = {
            **report,
            "difference_ci95": interval and f"{interval['low']} to {interval['high']}",
        }
        for key, value in shown.items():
            typer.echo(f"{key}: {'-' if value is None else value}")


def _read(read: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    from infra.cli.store import open_configured_store, settings_or_exit

    store = open_configured_store(settings_or_exit(), existing=True)
    try:
        if store.projector_inside:
            store.projector.catch_up()
        with store.database.read() as cursor:
            report = read(cursor)
        return {**report, "position": store.projector.position()}
    except reports.ReportTooLarge as error:
        typer.echo(str(error), err=True)
        raise typer.Exit(USAGE_ERROR) from None
    finally:
        store.close()


def _print_json(report: dict[str, Any]) -> None:
    from infra.cli.store import print_json

    print_json(report)


def _print_revenue(report: dict[str, Any]) -> None:
    columns = reports.ROW_COLUMNS
    lines = [[str(row[c]) for c in columns] for row in report["rows"]]
    for name, totals in report["totals"].items():
        lines.append([name, "all", "all", *(str(totals[c]) for c in reports.FIGURES)])
    widths = [max(len(c), *(len(line[i]) for line in lines)) for i, c in enumerate(columns)]
    for line in [list(columns), *lines]:
        typer.echo("  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)))
    typer.echo(f"mode {report['mode']}, read models at position {report['position']}")


def _check(value: str, allowed: tuple[str, ...], option: str) -> None:
    if value not in allowed:
        typer.echo(f"{option} must be one of {', '.join(allowed)}, not {value[:40]!r}", err=True)
        raise typer.Exit(USAGE_ERROR)


def _day(text: str | None, option: str) -> datetime.date | None:
    if text is None:
        return None
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        typer.echo(f"{option} must be a day, YYYY-MM-DD, not {text[:40]!r}", err=True)
        raise typer.Exit(USAGE_ERROR) from None


def _check_order(first: datetime.date | None, last: datetime.date | None) -> None:
    if first is not None and last is not None and first > last:
        typer.echo(f"--from ({first}) is after --to ({last}): no day is in between", err=True)
        raise typer.Exit(USAGE_ERROR)
