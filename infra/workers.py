"""Background workers of the server process."""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import structlog

from domain.significant import stamp
from infra.commands.receipt_answers import DAY_SECONDS
from infra.fault_log import faults
from infra.logs import get_logger
from infra.significant import StartRecord, Throttle
from infra.store.faults import STORE, is_store_fault
from infra.store.follower import new_event_signal
from infra.store.head_check import head_problem
from infra.store.seal import LogTampered
from infra.store.store import Store
from projections import (
    bonuses,
    exclusions,
    interrupted_rounds,
    open_rounds,
    pending_choices,
    provider_transactions,
)
from projections.base import Cursor
from projections.failure import ProjectionFailed

log = get_logger("casino.worker")
SQLITE_POLL_SECONDS = 0.1
PROJECTOR_WAKE_SECONDS_MAX = 1.0  # Even without a notification, look again this often.
# CASINO_PROJECTOR_DEBOUNCE_MS's default: the least time between two catch-ups while
# commits keep coming (a read waits for the projector at most about this much longer
# under load, none after a quiet spell). Each catch-up costs a write transaction and a
# statement or two per read model whatever its size: in process, P2P commands projected
# 1 a batch cost the projector 3.8 ms and PostgreSQL 2.3 ms of CPU a command, 18 a batch
# 0.7 and 0.3 (2 cores, busy). Over HTTP at 16 clients, waiting 20 ms rather than 5 cut
# both by a third to a half (benchmarks/bench_load.py).
DEBOUNCE_SECONDS = 0.025
LAG_LOG_SECONDS = 10.0
LAG_WARN_EVENTS = 10_000
IDLE_CHECK_SECONDS_MAX = 30.0
RESUME_CHECK_SECONDS_MAX = 30.0
CHOICE_CHECK_SECONDS_MAX = 1.0
HEARTBEAT_SECONDS = 2.0  # How often a projector says it runs (readiness reads it).
EXCLUSION_CHECK_SECONDS = 30.0
TAMPERED = "log_tampered"  # the cause a changed log is logged under
RECEIPT_PRUNE_SECONDS = 3_600.0


class WorkerObserver(Protocol):
    """Told of each pass and action of a worker, for metrics (infra/metrics.py)."""

    def ticked(self, worker: str, failed: bool) -> None: ...

    def acted(self, worker: str, action: str) -> None: ...


class _Unobserved:
    def ticked(self, worker: str, failed: bool) -> None:
        pass

    def acted(self, worker: str, action: str) -> None:
        pass


class FailureRecorder(Protocol):
    """Told of each failed pass, with its error (a significant event, throttled)."""

    def note(self, kind: str, details: dict[str, Any]) -> None: ...


class PeriodicWorker:
    """A daemon thread that calls `tick` every interval until stopped; a failed tick is
    noted (infra/fault_log.py) and the next one still runs (a store hiccup must not
    kill the worker).
    `last_pass` is when a pass last ended (time.monotonic()), failed or not."""

    name = "worker"

    def __init__(self, interval_seconds: float) -> None:
        self.interval_seconds = interval_seconds
        self.observer: WorkerObserver = _Unobserved()
        self.failures: FailureRecorder | None = None
        self.last_pass: float | None = None
        self.started_at: float | None = None
        self.tenant: str | None = None  # one tenant's of several: named in its log lines
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def start(self) -> None:
        self.started_at = time.monotonic()
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=10)

    def tick(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        if self.tenant is not None:  # a thread starts with no context of its own
            structlog.contextvars.bind_contextvars(tenant=self.tenant)
        self._tick_safely()  # At once: a deadline missed while the server was down fires now.
        while not self._stopping.wait(self.interval_seconds):
            self._tick_safely()

    def _tick_safely(self) -> None:
        try:
            self.tick()
        except Exception as error:
            # Logged when it starts failing, then once a minute, then when it works again:
            # a database down for minutes is not a traceback a second (rules.md 8).
            faults.failed(self.name, error)
            self.observer.ticked(self.name, failed=True)
            if self.failures is not None:
                kind = "projector_failed" if self.name == "projector" else "worker_failed"
                self.failures.note(kind, {"worker": self.name, "error": repr(error)[:500]})
        else:
            faults.succeeded(self.name)
            self.observer.ticked(self.name, failed=False)
        self.last_pass = time.monotonic()


def pause_before_catch_up(
    spacing_seconds: float, caught_up_at: float, now: Callable[[], float] = time.monotonic
) -> float:
    """How long to wait before the next catch-up, so that two are at least the spacing
    apart: nothing after a quiet spell, the rest of it right after one."""
    return max(0.0, spacing_seconds - (now() - caught_up_at))


class ProjectorWorker(PeriodicWorker):
    """Keeps the read models close behind the event log, and says how far behind.

    On PostgreSQL it wakes as soon as new events commit (the recorder NOTIFYs on every
    save; the worker LISTENs). A commit after a quiet spell is projected at once; while
    commits keep coming it catches up at most once every `debounce_seconds`, gathering
    what committed meanwhile into one batch. On SQLite, which has no notifications, it
    polls. Each catch-up
    works in batches of many events per transaction, and none once up to date. Every LAG_LOG_SECONDS
    it logs its position and lag; a lag past LAG_WARN_EVENTS is a warning.
    """

    name = "projector"

    def __init__(self, store: Store, debounce_seconds: float = DEBOUNCE_SECONDS) -> None:
        self.projector = store.projector
        self.signal = new_event_signal(store)
        self.debounce_seconds = debounce_seconds
        self._caught_up_at = 0.0
        self._last_log = 0.0
        self._last_beat = 0.0
        self._applied_since_log = 0
        super().__init__(0.0 if self.signal.wakes_on_commit else SQLITE_POLL_SECONDS)

    def tick(self) -> None:
        self.signal.listen()
        try:
            applied = self.projector.catch_up()
        except ProjectionFailed as failed:
            # Loudly, once, and no more passes: readiness and reads say why from now on.
            log.error(
                "projection_failed",
                position=failed.position,
                read_model=failed.read_model,
                error=failed.error,
                detail=failed.detail,
            )
            if self.failures is not None:  # A significant event too (rules.md 7).
                self.failures.note(
                    "projector_failed", {"worker": self.name, "error": failed.detail}
                )
            self._stopping.set()
            return
        self._applied_since_log += applied
        if applied:  # a look that found nothing new does not count as a catch-up
            self._caught_up_at = time.monotonic()
        self._beat()
        self._log_lag()
        if self.signal.wait(PROJECTOR_WAKE_SECONDS_MAX):
            # Woken by a commit. Soon after the last catch-up, let the commits behind it
            # land too, so a burst costs one catch-up, not one per command.
            pause = pause_before_catch_up(self.debounce_seconds, self._caught_up_at)
            if pause:
                time.sleep(pause)
            self.signal.drain()

    def _beat(self) -> None:
        now = time.monotonic()
        if now - self._last_beat >= HEARTBEAT_SECONDS:
            self.projector.beat(time.time())
            self._last_beat = now

    def stop(self) -> None:
        super().stop()
        self.signal.close()

    def _log_lag(self) -> None:
        now = time.monotonic()
        if now - self._last_log < LAG_LOG_SECONDS:
            return
        head, position = self.projector.head(), self.projector.position()
        level = log.warning if head - position > LAG_WARN_EVENTS else log.info
        level("projection_lag", position=position, head=head, lag=head - position,
              applied=self._applied_since_log)  # fmt: skip
        self._last_log, self._applied_since_log = now, 0


class DueWorker(PeriodicWorker):
    """A worker that acts on what the read models say is due: the read models caught up
    first when the projector runs inside, then each item's command, logged and counted
    where it acted (a command that finds nothing to do, another server having acted
    first, is no action)."""

    store: Store

    def act_on_due(
        self,
        due: Callable[[Cursor], list[str]],
        act: Callable[[str], bool],
        action: str,
        key: str,
    ) -> list[str]:
        if self.store.projector_inside:
            self.store.projector.catch_up()
        with self.store.database.read() as cursor:
            candidates = due(cursor)
        done = []
        for item in candidates:
            if act(item):
                done.append(item)
                log.info(action, **{key: item})
                self.observer.acted(self.name, action)
        return done


class IdleRoundWorker(DueWorker):
    """Ends rounds left with no action for the idle timeout (rules.md 4): baccarat and
    undealt blackjack rounds are voided, blackjack rounds in play finished with the
    house defaults; interrupted ones wait for the resume window.

    Restart-safe: the open rounds and their last action live in the store, so a
    timeout still fires after a restart.
    """

    name = "idle_rounds"

    def __init__(self, store: Store, timeout_seconds: int) -> None:
        self.store = store
        self.timeout = datetime.timedelta(seconds=timeout_seconds)
        super().__init__(min(IDLE_CHECK_SECONDS_MAX, timeout_seconds / 4))

    def tick(self) -> None:
        self.void_idle_rounds(datetime.datetime.now(datetime.UTC))

    def void_idle_rounds(self, now: datetime.datetime) -> list[str]:
        """End every round idle since before now - timeout; return their ids."""
        cutoff = now - self.timeout
        return self.act_on_due(
            lambda cursor: open_rounds.idle_since(cursor, cutoff.isoformat()),
            lambda round_id: bool(self.store.app.end_idle_round(round_id, cutoff).result),
            "idle_round_ended",
            "round_id",
        )


class LapsedProviderRoundWorker(DueWorker):
    """Ends providers' rounds with no call for CASINO_PROVIDER_ROUND_SECONDS (rules.md
    10): they count as ended for wagering and the reports from then on, and show ended
    in the round index; a win that comes later still lands.

    Restart-safe: the open rounds and their last call live in the store."""

    name = "lapsed_provider_rounds"
    ROUNDS_PER_TICK = 100

    def __init__(self, store: Store, round_seconds: int) -> None:
        self.store = store
        self.round_seconds = round_seconds
        super().__init__(min(IDLE_CHECK_SECONDS_MAX, round_seconds / 4))

    def tick(self) -> None:
        self.end_lapsed_rounds(datetime.datetime.now(datetime.UTC))

    def end_lapsed_rounds(self, now: datetime.datetime) -> list[str]:
        """End every provider's round whose last call was round_seconds before now."""
        cutoff = (now - datetime.timedelta(seconds=self.round_seconds)).isoformat()
        return self.act_on_due(
            lambda cursor: provider_transactions.idle_rounds(cursor, cutoff, self.ROUNDS_PER_TICK),
            lambda round_id: bool(self.store.app.lapse_provider_round(round_id, now).result),
            "provider_round_lapsed",
            "round_id",
        )


class AbandonedRoundWorker(DueWorker):
    """Finishes blackjack rounds whose player has not come back within the resume window,
    with the house defaults (rules.md 4).

    Restart-safe: the interrupted rounds and the time of their interruption live in
    the store, so the window still closes after a restart.
    """

    name = "abandoned_rounds"

    def __init__(self, store: Store, resume_window_seconds: int) -> None:
        self.store = store
        self.window = datetime.timedelta(seconds=resume_window_seconds)
        interval = min(RESUME_CHECK_SECONDS_MAX, resume_window_seconds / 4)
        super().__init__(interval)

    def tick(self) -> None:
        self.finish_abandoned_rounds(datetime.datetime.now(datetime.UTC))

    def finish_abandoned_rounds(self, now: datetime.datetime) -> list[str]:
        """Finish every round interrupted before now - window; return their ids."""
        cutoff = now - self.window
        return self.act_on_due(
            lambda cursor: interrupted_rounds.interrupted_since(cursor, cutoff.isoformat()),
            lambda round_id: (
                self.store.app.finish_abandoned_round(round_id, cutoff).result is not None
            ),
            "round_finished_by_system",
            "round_id",
        )


class DueChoiceWorker(DueWorker):
    """Makes the choices owed in coups once their deadline has passed, as the rules
    say, recorded `by: system` (rules.md 2.3, 4).

    Restart-safe: the choices owed and their deadlines live in the store, so a
    deadline still passes after a restart.
    """

    name = "due_choices"

    def __init__(self, store: Store, decision_seconds: int) -> None:
        self.store = store
        super().__init__(min(CHOICE_CHECK_SECONDS_MAX, decision_seconds / 4))

    def tick(self) -> None:
        self.make_due_choices(datetime.datetime.now(datetime.UTC))

    def make_due_choices(self, now: datetime.datetime) -> list[str]:
        """Make every choice due by now; return the coups they were owed in."""
        return self.act_on_due(
            lambda cursor: pending_choices.due_by(cursor, now.isoformat()),
            lambda round_id: bool(self.store.app.choose_when_due(round_id, now).result),
            "choice_made_by_system",
            "round_id",
        )


class ExclusionWorker(DueWorker):
    """Ends time-outs and self-exclusions once due (rules.md 7), each a significant event.

    Restart-safe: the running exclusions and their ends live in the store, so one
    still ends after a restart; and the domain stops refusing the player at the end
    itself, even before this worker comes by.
    """

    name = "exclusions"

    def __init__(self, store: Store, interval_seconds: float = EXCLUSION_CHECK_SECONDS) -> None:
        self.store = store
        super().__init__(interval_seconds)

    def tick(self) -> None:
        self.end_due_exclusions(datetime.datetime.now(datetime.UTC))

    def end_due_exclusions(self, now: datetime.datetime) -> list[str]:
        """End every exclusion due by now; return their players."""
        return self.act_on_due(
            lambda cursor: exclusions.due_by(cursor, stamp(now)),
            lambda player_id: bool(self.store.app.end_exclusion(player_id, now).result),
            "exclusion_ended",
            "player_id",
        )


class BonusExpiryWorker(DueWorker):
    """Ends bonuses past their expiry (rules.md 9), each a significant event.

    Restart-safe: the running bonuses and their expiries live in the store (the
    `bonuses_running` read model), so one still expires after a restart; the wallet
    re-checks the expiry itself before it ends one.
    """

    name = "bonus_expiry"

    def __init__(self, store: Store, interval_seconds: float = EXCLUSION_CHECK_SECONDS) -> None:
        self.store = store
        super().__init__(interval_seconds)

    def tick(self) -> None:
        self.expire_due_bonuses(datetime.datetime.now(datetime.UTC))

    def expire_due_bonuses(self, now: datetime.datetime) -> list[str]:
        """Expire every bonus due by now; return them as `player_id bonus_id`."""

        def expire(due: str) -> bool:
            player_id, bonus_id = due.split(" ")
            return bool(self.store.app.expire_bonus(player_id, bonus_id, now).result)

        return self.act_on_due(
            lambda cursor: bonuses.due_by(cursor, now.isoformat()), expire, "bonus_expired", "bonus"
        )


class ThrottleWorker(PeriodicWorker):
    """Records the counts of refused authentication and failures once their interval
    is over, so a flood that stops is still recorded without waiting for shutdown."""

    name = "significant_events"

    def __init__(self, throttle: Throttle) -> None:
        self.throttle = throttle
        super().__init__(throttle.interval_seconds / 4)

    def tick(self) -> None:
        self.throttle.flush(only_due=True)


class StoreWatch(PeriodicWorker):
    """Every second: saves the server's start-up event until it is saved (a store down
    at start-up), and looks at the store and the log's head, so that a fault's end
    is logged when it ends, whether or not a request comes by (rules.md 8). A log
    changed behind the service's back is logged as a fault of its own."""

    name = "store_watch"

    def __init__(self, store: Store, start: StartRecord | None, interval: float = 1.0) -> None:
        self.store = store
        self.start_record = start
        super().__init__(interval)

    def tick(self) -> None:
        if self.start_record is not None:
            self.start_record.record()
        try:
            problem = head_problem(self.store)  # through the pool commands save through
            self.store.projector.position()  # and the read models' pool
        except Exception as error:
            if not is_store_fault(error):
                raise
            faults.failed(STORE, error)
            return
        faults.succeeded(STORE)
        if problem is None:
            faults.succeeded(TAMPERED)
        else:
            faults.failed(TAMPERED, LogTampered(problem))


class ReceiptPruner(PeriodicWorker):
    """Drops the answers of receipts past CASINO_RECEIPT_RETENTION_DAYS (infra/store/
    receipts.py), hourly; each keeps what proves it, and its key stays taken. Stores
    that hold receipts as events of the log (the in-memory one) have nothing to prune.
    Several servers pruning at once do no harm: pruning twice is pruning once."""

    name = "receipt_pruner"

    def __init__(self, store: Store, interval_seconds: float = RECEIPT_PRUNE_SECONDS) -> None:
        self.store = store
        super().__init__(interval_seconds)

    def tick(self) -> None:
        self.prune(datetime.datetime.now(datetime.UTC))

    def prune(self, now: datetime.datetime) -> int:
        """Prune every receipt expired by `now`; say how many."""
        prune = getattr(self.store.app.recorder, "prune_receipts", None)
        if prune is None:
            return 0
        now_ms = int(now.timestamp() * 1000)
        retention_ms = self.store.commands.receipt_retention_days * DAY_SECONDS * 1000
        pruned = int(prune(now_ms - retention_ms, now_ms))
        if pruned:
            log.info("receipts_pruned", receipts=pruned)
            self.observer.acted(self.name, "receipts_pruned")
        return pruned
