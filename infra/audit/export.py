"""`casino audit export`: every event in a range, one record per event, for an outside
auditor, as JSON lines or CSV.

The range. The log is read in order of position (the notification id, which is commit
order). `--from-position`/`--to-position` bound it, both inclusive; `--from`/`--to`
select by the event's time in UTC: a date `YYYY-MM-DD` (`--from` from its first instant,
`--to` to its last, so the whole day is in) or an ISO timestamp (an instant, inclusive;
UTC unless it carries an offset). Every bound is optional and they combine: an event is
exported when it is within all of them. Without `--to-position` the export ends at the
newest event when it starts, so an event saved meanwhile is left for the next export,
which can start where this one ended (the summary names the position): exports made
by position are contiguous and never overlap. An event's time is taken when its command
runs, a moment before the save that gives it its position, so times follow positions
only closely, not strictly: a time range is checked on every event of the position
range (the whole log by default), never guessed from positions.

A record holds `position`, `aggregate_id`, `version`, `topic`, `type` (the topic's
last part, as in the round audit trail), `timestamp` (ISO 8601, UTC), `data` (every
field of the event as stored, without the envelope; money stays integer cents),
`redacted` (the names of the fields withheld, see below), `sha256` (of the event's
bytes exactly as stored: the digest the event chain is built over) and `link` (the
event chain's stored link at that position: SHA-256 over the previous link and
`aggregate_id|version|topic|sha256`, so an auditor can recompute it).
CSV has a header row and those columns; `data` is a JSON string, `redacted` the names
separated by spaces, a missing value an empty cell.

Secrets. While a round is neither settled nor voided (when the export reads it) its
seed, its certification shoe and a blackjack hole card (`SECRET_FIELDS`) are exported as
null and named in `redacted`. The record of such an event carries no `sha256` and no
`link` either: a hole card is one of 52, so its digest would give it away to anyone who
tried each card. For the same reason the chain's links stop at the first event of the
oldest round not over (every later link depends on the hidden one) and resume in an
export made once it is over. Export the range again then to see everything.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import os
import re
import sqlite3
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import psycopg
import typer
from rich.console import Console
from rich.progress import Progress

from domain.rounds import SECRET_FIELDS
from infra.audit.records import utc, write
from infra.store import chain as event_chain
from infra.store.store import Store
from projections.base import Database
from projections.round_trail import ENDED, event_data  # Secrets show once a round is over.

FORMATS = ("jsonl", "csv")
BATCH = 1000
ROUNDS_REMEMBERED = 10_000  # Whether a round is over: asked once per round, kept a while.
DATABASE_ERRORS = (sqlite3.Error, psycopg.Error)
UTC = datetime.UTC
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\S+")
_TIME_FORMS = (
    "a date YYYY-MM-DD or an ISO timestamp YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|+HH:MM]"
    " (UTC when it has no offset)"
)


class ExportArgumentError(ValueError):
    """A bad --from, --to, position or format: the command exits with status 2."""


@dataclass(frozen=True)
class Selection:
    """What to export: positions from `first` to `last` (inclusive), times from `since`
    (inclusive) to `before` (exclusive)."""

    first: int = 1
    last: int | None = None
    since: datetime.datetime | None = None
    before: datetime.datetime | None = None

    def takes(self, at: datetime.datetime) -> bool:
        return (self.since is None or at >= self.since) and (
            self.before is None or at < self.before
        )


def selection(
    since: str | None = None,
    until: str | None = None,
    from_position: int | None = None,
    to_position: int | None = None,
) -> Selection:
    """The options as given on the command line, checked."""
    start = parse_time(since, "--from", end=False) if since is not None else None
    end = parse_time(until, "--to", end=True) if until is not None else None
    if start is not None and end is not None and start >= end:
        raise ExportArgumentError(f"--from {since} is after --to {until}")
    for option, value in (("--from-position", from_position), ("--to-position", to_position)):
        if value is not None and value < 1:
            raise ExportArgumentError(f"{option} must be a position of 1 or more, not {value}")
    first = 1 if from_position is None else from_position
    if to_position is not None and to_position < first:
        raise ExportArgumentError(f"--from-position {first} is after --to-position {to_position}")
    return Selection(first, to_position, start, end)


def parse_time(text: str, option: str, *, end: bool) -> datetime.datetime:
    """A date or an ISO timestamp, in UTC. As an end (exclusive), a date stands for the
    whole day and a timestamp for its instant included."""
    given = text.strip()
    try:
        if _DATE.fullmatch(given):
            day = datetime.datetime.combine(datetime.date.fromisoformat(given), datetime.time())
            return day.replace(tzinfo=UTC) + datetime.timedelta(days=1 if end else 0)
        if _DATE_TIME.fullmatch(given):
            moment = utc(datetime.datetime.fromisoformat(given))
            return moment + datetime.timedelta(microseconds=1 if end else 0)
    except (ValueError, OverflowError):
        pass
    raise ExportArgumentError(f"{option} {text!r} is not {_TIME_FORMS}")


def check_format(name: str) -> str:
    if name not in FORMATS:
        raise ExportArgumentError(f"unknown format {name!r}: use jsonl or csv")
    return name


class Export:
    """One export: the position range it reads is fixed when it is made."""

    def __init__(self, store: Store, chosen: Selection) -> None:
        self.store, self.selection = store, chosen
        self.head = store.projector.head()
        self.start = chosen.first
        self.stop = self.head if chosen.last is None else min(chosen.last, self.head)
        self.exported = self.redacted = self.linked = 0
        self.oldest_open: int | None = None  # Set once reading starts.

    @property
    def total(self) -> int:
        """How many positions the export reads."""
        return max(0, self.stop - self.start + 1)

    def records(self, progress: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
        """Every selected event as a record, in order, read a batch at a time."""
        if self.total == 0:
            return
        chain = _Chain(self.store)
        self.oldest_open = chain.oldest_open
        secrets = _Secrets(self.store.app.recorder)
        position = self.start - 1
        while position < self.stop and (
            batch := self.store.app.recorder.select_notifications(
                start=position, limit=BATCH, stop=self.stop, inclusive_of_start=False
            )
        ):
            yield from self._records(batch, chain, secrets)
            if progress is not None:
                progress(batch[-1].id - position)
            position = batch[-1].id

    def _records(
        self, batch: Sequence[Any], chain: _Chain, secrets: _Secrets
    ) -> Iterator[dict[str, Any]]:
        to_event = self.store.app.mapper.to_domain_event
        chosen = []
        for notification in batch:
            event: Any = to_event(notification)
            if self.selection.takes(utc(event.timestamp)):
                chosen.append((notification, event))
        if not chosen:
            return
        ended_here = {str(n.originator_id) for n in batch if n.topic in ENDED}
        links = chain.links(chosen[0][0].id, chosen[-1][0].id)
        for notification, event in chosen:
            aggregate_id = str(notification.originator_id)
            data = event_data(event)
            hidden = [name for name in SECRET_FIELDS if name in data]
            if hidden and secrets.kept(aggregate_id, notification.originator_id, ended_here):
                data.update(dict.fromkeys(hidden, None))
                self.redacted += 1
            else:
                hidden = []
            link = None if hidden else links.get(notification.id)
            self.exported += 1
            self.linked += link is not None
            yield {
                "position": notification.id,
                "aggregate_id": aggregate_id,
                "version": notification.originator_version,
                "topic": notification.topic,
                "type": type_name(notification.topic),
                "timestamp": utc(event.timestamp).isoformat(),
                "data": data,
                "redacted": hidden,
                "sha256": None if hidden else hashlib.sha256(bytes(notification.state)).hexdigest(),
                "link": link,
            }


def type_name(topic: str) -> str:
    """`casino:Wallet.Deposited` -> `Deposited`."""
    return topic.rsplit(":", 1)[-1].rsplit(".", 1)[-1]


class _Secrets:
    """Whether a round's secrets stay hidden: until it is over, as the event store says
    when asked (once per round, unless its end is in the batch at hand)."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.over: OrderedDict[str, bool] = OrderedDict()

    def kept(self, aggregate_id: str, originator_id: Any, ended_here: set[str]) -> bool:
        if aggregate_id in ended_here:
            return False
        over = self.over.get(aggregate_id)
        if over is None:
            stored = self.recorder.select_events(originator_id)
            over = any(event.topic in ENDED for event in stored)
            self.over[aggregate_id] = over
            if len(self.over) > ROUNDS_REMEMBERED:
                self.over.popitem(last=False)
        return not over


class _Chain:
    """The event chain's stored links, given only below the first event of the oldest
    round not over (and below what the read models include, which is where the rounds
    not over are known). Without a readable chain, no links."""

    def __init__(self, store: Store) -> None:
        self.database: Database = store.database
        self.below = 0
        self.oldest_open: int | None = None
        # The rounds not over are known up to where the read models are. A read-only
        # login cannot bring them up to date: the links then stop there.
        with contextlib.suppress(*DATABASE_ERRORS):
            store.projector.catch_up()
        try:
            included = store.projector.position()
            with self.database.read() as cursor:
                self.oldest_open = event_chain.first_hidden_position(cursor)
        except DATABASE_ERRORS:
            return
        self.below = min(included + 1, self.oldest_open or included + 1)

    def links(self, first: int, last: int) -> dict[int, str]:
        if first >= self.below:
            return {}
        try:
            with self.database.read() as cursor:
                cursor.execute(
                    f"SELECT position, link FROM {event_chain.TABLE}"
                    " WHERE position >= ? AND position <= ?",
                    (first, min(last, self.below - 1)),
                )
                return {int(row[0]): str(row[1]) for row in cursor.fetchall()}
        except DATABASE_ERRORS:
            self.below = 0
            return {}


def run(
    open_store: Callable[[], Store],
    *,
    since: str | None,
    until: str | None,
    from_position: int | None,
    to_position: int | None,
    format_: str,
    output: Path | None,
) -> int:
    """The command: check the arguments, export with a progress bar on a terminal, print a
    summary on stderr. Returns the exit status."""
    try:
        chosen = selection(since, until, from_position, to_position)
        check_format(format_)
    except ExportArgumentError as error:
        typer.echo(f"error: {error}", err=True)
        return 2
    store = open_store()
    started = time.perf_counter()
    try:
        export = Export(store, chosen)
        if output is None:
            status = _to_stdout(export, format_)
        else:
            status = _to_file(export, format_, output)
    finally:
        store.close()
    if status == 0:
        _summary(export, output, time.perf_counter() - started)
    return status


def _to_stdout(export: Export, format_: str) -> int:
    try:
        _write_with_progress(export, format_, sys.stdout, show=not sys.stdout.isatty())
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has gone; say nothing more to it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


def _to_file(export: Export, format_: str, output: Path) -> int:
    # Written beside the file and renamed when complete: a half export never looks whole.
    partial = output.with_name(output.name + ".partial")
    try:
        handle = partial.open("w", encoding="utf-8", newline="")
    except OSError as error:
        typer.echo(f"error: cannot write {output}: {error.strerror}", err=True)
        return 2
    try:
        with handle:
            _write_with_progress(export, format_, handle, show=True)
        partial.replace(output)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return 0


def _write_with_progress(export: Export, format_: str, out: TextIO, *, show: bool) -> None:
    with Progress(
        console=Console(stderr=True),
        transient=True,
        disable=not (show and sys.stderr.isatty()),
        redirect_stdout=False,
        redirect_stderr=False,
    ) as progress:
        task = progress.add_task("exporting events", total=export.total)
        write(export.records(lambda read: progress.advance(task, read)), format_, out)


def _summary(export: Export, output: Path | None, seconds: float) -> None:
    rate = export.total / seconds if seconds > 0 else 0.0
    where = f" to {output}" if output is not None else ""
    read = f"positions {export.start}-{export.stop}" if export.total else "no positions"
    lines = [
        f"exported {export.exported} events{where} ({read} read, log head {export.head})"
        f" in {seconds:.2f} s, {rate:,.0f} events/s",
        f"next export: --from-position {max(export.stop, export.start - 1) + 1}",
    ]
    if export.redacted:
        lines.append(f"{export.redacted} events of rounds not over have their secrets withheld")
    if export.linked < export.exported:
        oldest = export.oldest_open
        why = (
            f" (withheld from position {oldest}, where a round not over begins)"
            if oldest is not None and oldest <= export.stop
            else ""
        )
        lines.append(f"{export.exported - export.linked} events have no chain link{why}")
    typer.echo("\n".join(lines), err=True)
