"""The revenue and RTP reports as the HTTP API and the CLI give them: read from the
read model (projections/revenue.py), money as decimal strings, in JSON or CSV.
"""

from __future__ import annotations

import csv
import datetime
import io
from typing import Any

from domain.money import format_cents
from domain.rtp import SOURCES, figures
from projections import bonuses, revenue
from projections.base import Cursor

EARLIEST, LATEST = datetime.date.min.isoformat(), datetime.date.max.isoformat()
FIGURES = ("rounds", "stakes", "returns", "ggr", "commission", "bonus_stakes", "bonus_returns",
           "bonus_converted", "ngr")  # fmt: skip
NO_BONUS = (0, 0, 0)
ROW_COLUMNS = ("period", "game", "variant", *FIGURES)
RTP_COLUMNS = ("mode", "game", "variant", "from", "to", "rounds", "stakes", "returns",
               "actual_rtp", "theoretical_rtp", "difference", "difference_ci95_low",
               "difference_ci95_high", "theoretical_source")  # fmt: skip


class ReportTooLarge(ValueError):
    """More rows than one report lists (projections/revenue.py: ROWS_MAX)."""


def revenue_report(
    cursor: Cursor,
    mode: str,
    first_day: datetime.date | None,
    last_day: datetime.date,
    group: str,
) -> dict[str, Any]:
    """Rows per period, game and variant from `first_day` (or the first day) to
    `last_day`, inclusive; totals over them, and month, year and life to `last_day`."""
    since = EARLIEST if first_day is None else first_day.isoformat()
    until = last_day.isoformat()
    found = revenue.revenue_rows(cursor, mode, since, until, month=group == "month")
    if len(found) > revenue.ROWS_MAX:
        raise ReportTooLarge(
            f"the report would list more than {revenue.ROWS_MAX:,} rows:"
            " narrow from and to, or group by month"
        )
    month_start, year_start = last_day.replace(day=1), last_day.replace(month=1, day=1)
    real = mode == "real"  # play money has no bonus
    bonus = bonuses.revenue_rows(cursor, since, until, group == "month") if real else {}

    def total(start: str) -> dict[str, Any]:
        money = bonuses.revenue_rows(cursor, start, until, False) if real else {}
        summed = tuple(sum(figures[i] for figures in money.values()) for i in range(3))
        return _figures(revenue.revenue_total(cursor, mode, start, until), summed)

    return {
        "mode": mode,
        "from": None if first_day is None else since,
        "to": until,
        "group": group,
        "rows": [
            {"period": p, "game": g, "variant": v, **_figures(sums, bonus.get((p, g, v), NO_BONUS))}
            for p, g, v, *sums in found
        ],
        "totals": {
            "period": total(since),
            "mtd": total(month_start.isoformat()),
            "ytd": total(year_start.isoformat()),
            "ltd": total(EARLIEST),
        },
    }


def _figures(sums: tuple[int, ...] | list[int], bonus: tuple[int, ...]) -> dict[str, Any]:
    """Stakes, returns and GGR count cash; the bonus money staked and returned stands
    beside them (only house-banked games take it), and NGR is GGR less what bonuses
    converted to cash (rules.md 9)."""
    rounds, stakes, returns, ggr, commission = sums
    staked, returned, converted = bonus
    ggr -= staked - returned
    cents = (stakes - staked, returns - returned, ggr, commission, staked, returned, converted,
             ggr - converted)  # fmt: skip
    return dict(zip(FIGURES, (rounds, *(format_cents(c) for c in cents)), strict=True))


def rtp_report(
    cursor: Cursor,
    mode: str,
    game: str,
    variant: str | None,
    first_day: datetime.date | None,
    last_day: datetime.date | None,
) -> dict[str, Any]:
    since = EARLIEST if first_day is None else first_day.isoformat()
    until = LATEST if last_day is None else last_day.isoformat()
    tally = revenue.rtp_tally(cursor, mode, game, variant, since, until)
    found = figures(tally)
    interval = found.interval
    return {
        "mode": mode,
        "game": game,
        "variant": variant,
        "from": None if first_day is None else since,
        "to": None if last_day is None else until,
        "rounds": tally.rounds,
        "stakes": format_cents(tally.stakes_cents),
        "returns": format_cents(tally.returns_cents),
        "actual_rtp": _text(found.actual),
        "theoretical_rtp": _text(found.theoretical),
        "theoretical_source": None if found.theoretical is None else SOURCES[game],
        "difference": _text(found.difference),
        "difference_ci95": None
        if interval is None
        else {"low": str(interval[0]), "high": str(interval[1])},
    }


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def revenue_csv(report: dict[str, Any]) -> str:
    """The rows, then a row per total (`period` naming it: period, mtd, ytd, ltd)."""
    lines = [[row[column] for column in ROW_COLUMNS] for row in report["rows"]]
    for name, totals in report["totals"].items():
        lines.append([name, "all", "all", *(totals[column] for column in FIGURES)])
    return _csv(ROW_COLUMNS, lines)


def rtp_csv(report: dict[str, Any]) -> str:
    interval = report["difference_ci95"] or {"low": None, "high": None}
    flat = {
        **report,
        "difference_ci95_low": interval["low"],
        "difference_ci95_high": interval["high"],
    }
    return _csv(RTP_COLUMNS, [[flat[column] for column in RTP_COLUMNS]])


def _csv(header: tuple[str, ...], lines: list[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows([["" if value is None else value for value in line] for line in lines])
    return out.getvalue()
