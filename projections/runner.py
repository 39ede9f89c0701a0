"""The projector: feeds every read model from the event log, exactly once.

Each batch of events and the new tracking position commit in one transaction
under the read models' write lock, so a crash mid-batch replays the batch and
two projectors never apply the same event twice. A batch's changes are gathered
in memory and written with a few multi-row statements per read model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from projections import (
    balances,
    bonuses,
    commission,
    dealer_points,
    exclusions,
    failure,
    game_history,
    interrupted_rounds,
    ledger,
    open_rounds,
    pending_choices,
    provider_transactions,
    revenue,
    round_index,
    round_trail,
    significant_events,
)
from projections.base import Cursor, Database, View
from projections.failure import ProjectionFailed

# The read models' tracking name, with their version: bumped whenever a read model
# changes what it holds, so a store made before is rebuilt on opening (`start`).
# @3: old events read through their upcasts (a blackjack round's ruleset, a receipt's
# body), so the audit trail of an old round shows them as a rebuild would.
# @4: coups at multi-player tables: who plays in them, and the choices they owe.
# @5: the round index (every round with its players and roles).
# @6: a banco's caller is among a coup's players, its banker among those of it open.
# @7: revenue and return to player per day (projections/revenue.py).
# @8: significant events, and the exclusions still running (rules.md 7).
# @9: the round trail holds where each event is in the log, not a copy of it.
# @10: bonus money per day, and the bonuses still running (rules.md 9); providers'
# rounds and calls (rules.md 10), in the round index, trail, revenue and game history.
# @11: a provider's late win is in the return-to-player interval's moments too (an
# observation of its own); a provider's round's bonus part counts on the day it ends, a
# rollback's off its stake (as its cash part in revenue.py).
NAME = "read_models@11"
BATCH_SIZE = 1000
SCHEMA = """
CREATE TABLE IF NOT EXISTS projection_tracking (
    projection TEXT PRIMARY KEY,
    position BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS projector_heartbeat (
    projector TEXT PRIMARY KEY,
    beat_at DOUBLE PRECISION NOT NULL
);
"""
READ_MODELS = (
    balances,
    ledger,
    dealer_points,
    commission,
    game_history,
    round_trail,
    open_rounds,
    interrupted_rounds,
    pending_choices,
    round_index,
    significant_events,
    exclusions,
    revenue,
    bonuses,
    provider_transactions,
)
# The tables a rebuild empties, each with its primary key.
TABLES: dict[str, tuple[str, ...]] = {
    table: key for model in READ_MODELS for table, key in model.TABLES.items()
}


def all_schemas() -> str:
    return SCHEMA + failure.SCHEMA + "".join(model.SCHEMA for model in READ_MODELS)


# Reads the notifications after a position (up to a stop), at most a limit of them.
NotificationReader = Callable[[Cursor, int, int, int | None], Sequence[Any]]


class Projector:
    def __init__(
        self,
        database: Database,
        recorder: Any,
        to_event: Callable[[Any], Any],
        batch_size: int = BATCH_SIZE,
        read_notifications: NotificationReader | None = None,
    ) -> None:
        """`read_notifications` reads the log inside the projector's own transaction; by
        default the recorder reads it on a connection of its own."""
        self.database = database
        self.recorder = recorder
        self.to_event = to_event
        self.batch_size = batch_size
        self.owners = balances.Owners()
        self.read_notifications = read_notifications or self._from_recorder
        # Set when a read model cannot apply an event: this projector applies nothing
        # more until it is started again (projections/failure.py).
        self.failure: ProjectionFailed | None = None
        self._failure_row_checked = False
        # Each event class's views (their places in `_views()`), found once per class.
        self.routes: dict[type, tuple[int, ...]] = {}

    def _from_recorder(
        self, cursor: Cursor, start: int, limit: int, stop: int | None
    ) -> Sequence[Any]:
        # Bounded here, not with the library's `stop`, as infra/audit/verify.py explains.
        batch = self.recorder.select_notifications(
            start=start, limit=limit, inclusive_of_start=False
        )
        return [n for n in batch if stop is None or n.id <= stop]

    def start(self) -> None:
        """Empty read models made by another version of them, so they are built again
        from the whole log; read models of this version are kept as they are."""
        with self.database.read() as cursor:
            cursor.execute("SELECT projection FROM projection_tracking")
            names = {str(row[0]) for row in cursor.fetchall()}
        if names and names != {NAME}:
            with self.database.write() as cursor:
                cursor.execute("DELETE FROM projection_tracking WHERE projection <> ?", (NAME,))
                empty(cursor)

    def head(self) -> int:
        """The position of the newest event in the log."""
        return int(self.recorder.max_notification_id() or 0)

    def position(self) -> int:
        """The position of the newest event the read models include."""
        with self.database.read() as cursor:
            return position_in(cursor)

    def beat(self, now: float) -> None:
        """Say that a projector runs, as of `now` (seconds since the epoch): readiness
        reads it, in whichever process the projector runs (infra/http/routes/health.py)."""
        with self.database.write() as cursor:
            cursor.execute(
                "INSERT INTO projector_heartbeat (projector, beat_at) VALUES (?, ?)"
                " ON CONFLICT (projector) DO UPDATE SET beat_at = excluded.beat_at",
                (NAME, now),
            )

    def heartbeat(self) -> float | None:
        """When a projector last said it runs, or None if none ever did."""
        with self.database.read() as cursor:
            cursor.execute("SELECT max(beat_at) FROM projector_heartbeat")
            row = cursor.fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def failed(self) -> ProjectionFailed | None:
        """Why the read models stopped, met here or by a projector in another process."""
        if self.failure is not None:
            return self.failure
        with self.database.read() as cursor:
            return failure.recorded(cursor, NAME)

    def catch_up(self, up_to: int | None = None) -> int:
        """Apply every event not yet applied (up to a position); return how many.
        Raises ProjectionFailed, at once and ever after, once an event cannot be applied."""
        if self.failure is not None:
            raise self.failure
        target = self.head() if up_to is None else up_to
        position = self.position()
        applied = 0
        # Batch after batch until the target, and no further: once a batch reaches it,
        # no empty batch (a write transaction under the lock) is run to find out.
        while position < target:
            count, position = self._next_batch(target)
            if not count:
                break  # Nothing more to read below the target (it was not committed yet).
            applied += count
        return applied

    def apply_next_batch(self, up_to: int | None = None) -> int:
        return self._next_batch(up_to)[0]

    def _next_batch(self, up_to: int | None) -> tuple[int, int]:
        """Apply the next batch; how many it applied, and the position reached. At an
        event a read model cannot apply, the projector stops there (ProjectionFailed)."""
        if self.failure is not None:
            raise self.failure
        try:
            try:
                return self._batch(self.batch_size, up_to)
            except ProjectionFailed as failed:
                if failed.first == failed.last:
                    raise
                # The batch failed: its events again, one a transaction, so the ones
                # before the culprit are kept and the culprit is named.
                return self._one_by_one(failed.last - failed.first, up_to)
        except ProjectionFailed as failed:
            self._stop(failed)
            raise

    def _one_by_one(self, events: int, up_to: int | None) -> tuple[int, int]:
        applied, position = 0, 0
        for _ in range(events):
            count, position = self._batch(1, up_to)
            if not count:
                break
            applied += count
        return applied, position

    def _batch(self, limit: int, up_to: int | None) -> tuple[int, int]:
        with self.database.write() as cursor:
            position = position_in(cursor)
            notifications = self.read_notifications(cursor, position, limit, up_to)
            count = self.apply(cursor, notifications, position)
            if count and not self._failure_row_checked:  # once: a failure got past
                failure.clear_passed(cursor, NAME, notifications[-1].id)
                self._failure_row_checked = True
            return count, notifications[-1].id if count else position

    def _stop(self, failed: ProjectionFailed) -> None:
        self.failure = failed
        with self.database.write() as cursor:
            failure.record(cursor, NAME, failed)

    def apply(
        self, cursor: Cursor, notifications: Sequence[Any], position: int | None = None
    ) -> int:
        """Apply the notifications not applied yet, in one transaction with the new
        position (read in that transaction, unless given, read there already); those at
        or before the position are skipped (exactly once)."""
        position = position_in(cursor) if position is None else position
        fresh = [n for n in notifications if n.id > position]
        return self._apply_events(cursor, [(n.id, self.to_event(n)) for n in fresh])

    def feed(self, events: Sequence[tuple[int, Any]]) -> int:
        """Apply events read and decoded elsewhere (`casino audit verify` reads the log
        once for every check), each with its position, in one transaction; those at or
        before the position are skipped, as in `apply`."""
        with self.database.write() as cursor:
            position = position_in(cursor)
            if events and events[0][0] <= position:  # (in log order: else all are new)
                events = [(at, e) for at, e in events if at > position]
            return self._apply_events(cursor, events)

    def _apply_events(self, cursor: Cursor, events: Sequence[tuple[int, Any]]) -> int:
        if not events:
            return 0
        self.owners.cursor = cursor
        views = self._views()
        applies = [view.apply for view in views]
        routes = self.routes
        first = events[0][0]
        for position, event in events:
            # Only the views that want the event's kind: most want a few kinds of the
            # log's, and a call of each of 13 views per event was a fifth of a rebuild.
            wanting = routes.get(type(event))
            if wanting is None:
                wanting = routes[type(event)] = _wanting(views, type(event))
            for index in wanting:
                try:
                    applies[index](event, position)
                except Exception as error:  # Whatever it is, this event is where it stops.
                    raise failure.failed_in(_name(views[index]), first, position, error) from error
        for view in views:
            _flushing(view, cursor, first, events[-1][0])
        _set_position(cursor, events[-1][0])
        self.owners.cursor = None
        return len(events)

    def _views(self) -> list[View]:
        owners = self.owners
        return [
            balances.Balances(owners),
            ledger.Ledger(owners),
            dealer_points.DealerPoints(owners),
            commission.Commission(owners),
            game_history.GameHistory(owners),
            round_trail.RoundTrail(),
            open_rounds.OpenRounds(),
            interrupted_rounds.InterruptedRounds(),
            pending_choices.PendingChoices(),
            round_index.RoundIndex(),
            significant_events.SignificantEvents(),
            exclusions.Exclusions(),
            revenue.Revenue(),
            bonuses.Bonuses(owners),
            provider_transactions.ProviderTransactions(),
        ]

    def rebuild(self, progress: Callable[[int], None] | None = None) -> int:
        """Empty every read model and apply the whole event log again, in one
        transaction: readers see the old models until the new ones commit."""
        applied = 0
        with self.database.write() as cursor:
            empty(cursor)
            while notifications := self.read_notifications(
                cursor, position_in(cursor), self.batch_size, None
            ):
                applied += self.apply(cursor, notifications)
                if progress is not None:
                    progress(len(notifications))
        return applied


def _wanting(views: Sequence[View], kind: type) -> tuple[int, ...]:
    """The places of the views that want events of this class (by its topic)."""
    topic = str(getattr(kind, "TOPIC", ""))
    return tuple(index for index, view in enumerate(views) if view.wants(topic))


def _flushing(view: View, cursor: Cursor, first: int, last: int) -> None:
    try:
        view.flush(cursor)
    except Exception as error:
        if failure.transient(error):
            raise
        raise failure.failed_in(_name(view), first, last, error) from error


def _name(view: View) -> str:
    """The read model a view feeds, as projections/ names its module."""
    return type(view).__module__.rsplit(".", 1)[-1]


def empty(cursor: Cursor) -> None:
    for table in TABLES:
        cursor.execute(f"DELETE FROM {table}")
    _set_position(cursor, 0)


TRACKING = "projection_tracking"  # the read models' position, a table of its own


def position_in(cursor: Cursor, schema: str | None = None) -> int:
    """The position the read models include, read in the transaction given (those of
    a PostgreSQL schema named, given one)."""
    table = TRACKING if schema is None else f"{schema}.{TRACKING}"
    cursor.execute(f"SELECT position FROM {table} WHERE projection = ?", (NAME,))
    row = cursor.fetchone()
    return int(row[0]) if row else 0


def _set_position(cursor: Cursor, position: int) -> None:
    cursor.execute(
        "INSERT INTO projection_tracking (projection, position) VALUES (?, ?)"
        " ON CONFLICT (projection) DO UPDATE SET position = excluded.position",
        (NAME, position),
    )
