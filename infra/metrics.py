"""Prometheus metrics of one server process, served at GET /metrics.

Every metric is documented in docs/operations.md (Metrics). They live in a registry of
the app's own, not the library's global one, so that two apps in one process
(the tests make many) never count into each other.

- HTTP: requests by method, route template and status, and their latency.
- Commands, told by the seam through its observer hook (`infra/commands/observer.py:
  CommandObserver`; the domain imports no metrics library): outcomes, retries,
  saves and events written, snapshot failures.
- The read models, read from the store at each scrape: the log's head, the
  position the read models include, the lag between them, and the projector's
  heartbeat.
- Group commit, read from the committer at each scrape: transactions, saves,
  in-batch conflicts and one-by-one fallbacks.
- Workers: each tick, failure and action (idle rounds ended, abandoned rounds
  finished), and the time of each one's last tick.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from infra.logs import get_logger
from infra.store.store import Store
from infra.witness import latest_seal

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS_SECONDS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

log = get_logger("casino.metrics")


class Metrics:
    def __init__(self, store: Store) -> None:
        self.registry = CollectorRegistry()
        self._children: dict[tuple[object, ...], Any] = {}
        r = self.registry
        self.requests = Counter(
            "casino_http_requests", "HTTP requests answered", ["method", "route", "status"],
            registry=r,
        )  # fmt: skip
        self.latency = Histogram(
            "casino_http_request_duration_seconds", "Time to answer an HTTP request",
            ["method", "route"], buckets=LATENCY_BUCKETS_SECONDS, registry=r,
        )  # fmt: skip
        self.commands = Counter(
            "casino_commands", "Commands run through the seam, by outcome",
            ["command", "outcome"], registry=r,
        )  # fmt: skip
        self.retries = Counter(
            "casino_command_retries", "Commands run again: conflict, stale or connection",
            ["command", "reason"], registry=r,
        )  # fmt: skip
        self.saves = Counter("casino_saves", "Atomic saves of a command's events", registry=r)
        self.events = Counter("casino_events_written", "Events written by saves", registry=r)
        self.snapshot_failures = Counter(
            "casino_snapshot_failures", "Snapshots that failed to be written", registry=r
        )
        self.worker_ticks = Counter(
            "casino_worker_ticks", "Passes of a background worker", ["worker"], registry=r
        )
        self.worker_failures = Counter(
            "casino_worker_failures", "Passes of a background worker that failed (the "
            "projector's among them)", ["worker"], registry=r,
        )  # fmt: skip
        self.worker_actions = Counter(
            "casino_worker_actions", "What the timeout workers did", ["worker", "action"],
            registry=r,
        )  # fmt: skip
        self.worker_last_tick = Gauge(
            "casino_worker_last_tick_timestamp_seconds", "When a worker last finished a pass",
            ["worker"], registry=r,
        )  # fmt: skip
        r.register(ProjectionCollector(store))
        r.register(GroupCommitCollector(store))
        r.register(SealCollector(store))
        # Seal and witness state (CASINO_SEAL_KEY, CASINO_WITNESS) join here once the
        # sealed ledger lands: a Collector of its own, registered like the one above.

    # The HTTP layer's hook (infra/http/middleware.py: RequestLog).

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        self._child(self.requests, method, route, status).inc()
        self._child(self.latency, method, route).observe(seconds)

    def _child(self, metric: Counter | Histogram, *labels: object) -> Any:
        """The metric's child for these labels, found once: the library's `labels()`
        checks its arguments and takes a lock on every call, three times a command
        (about 2% of a deposit's event-loop time under cProfile). The labels come from
        bounded sets (methods, route templates, statuses, command names), so does the
        cache; two threads racing to fill it get the same child from `labels()`."""
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*map(str, labels))
        return child

    # The seam's hook (infra/commands/observer.py: CommandObserver).

    def finished(self, command: str, outcome: str) -> None:
        self._child(self.commands, command, outcome).inc()

    def retried(self, command: str, reason: str) -> None:
        self.retries.labels(command, reason).inc()

    def saved(self, events: int) -> None:
        self.saves.inc()
        self.events.inc(events)

    def snapshot_failed(self) -> None:
        self.snapshot_failures.inc()

    # The workers' hooks (infra/workers.py).

    def ticked(self, worker: str, failed: bool) -> None:
        self.worker_ticks.labels(worker).inc()
        if failed:
            self.worker_failures.labels(worker).inc()
        else:
            self.worker_last_tick.labels(worker).set(time.time())

    def acted(self, worker: str, action: str) -> None:
        self.worker_actions.labels(worker, action).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class ProjectionCollector(Collector):
    """The read models' position against the log's head, read at each scrape."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        try:
            head = self.store.projector.head()
            position = self.store.projector.position()
            beat = self.store.projector.heartbeat()
        except Exception as error:  # A scrape must answer even when the store does not.
            log.warning("metrics_store_unreadable", error=repr(error)[:200])
            return
        yield _gauge("casino_projection_head", "Position of the newest event in the log", head)
        yield _gauge(
            "casino_projection_position", "Position of the newest event the read models include",
            position,
        )  # fmt: skip
        yield _gauge("casino_projection_lag", "Events the read models are behind", head - position)
        if beat is not None:
            yield _gauge(
                "casino_projector_heartbeat_timestamp_seconds",
                "When a projector last said it runs (the separate one included)", beat,
            )  # fmt: skip


class GroupCommitCollector(Collector):
    """What the group committer did (infra/store/group_commit.py: BatchCounts), read at each
    scrape: transactions against saves shows how many commands share one."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        committer = self.store.group_commit
        if committer is None:
            return
        counts = committer.counts
        for name, documentation, value in (
            ("transactions", "Transactions the group committer wrote", counts.transactions),
            ("saves", "Command saves the group committer wrote", counts.saves),
            ("conflicts_in_batch", "Saves refused for a batch-mate's change to the same "
             "aggregate (their commands ran again)", counts.conflicts_in_batch),
            ("fallbacks", "Batches written one save at a time after a conflict",
             counts.fallbacks),
        ):  # fmt: skip
            yield CounterMetricFamily(f"casino_group_commit_{name}", documentation, value=value)


class SealCollector(Collector):
    """How far the log is sealed (infra/store/seal.py), read at each scrape: a head
    past the sealed position is an event no seal covers."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        try:
            latest = latest_seal(self.store)
        except Exception as error:  # A scrape must answer even when the store does not.
            log.warning("metrics_store_unreadable", error=repr(error)[:200])
            return
        position = latest.position if latest is not None else 0
        yield _gauge("casino_seal_position", "Position of the last event sealed", position)


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


class TenantsCollector(Collector):
    """Every tenant's metrics in one scrape, each sample labelled with its tenant
    (infra/http/tenants.py): one family per name, as Prometheus wants it."""

    def __init__(self, registries: dict[str, CollectorRegistry]) -> None:
        self.registries = registries

    def collect(self) -> Iterator[Metric]:
        merged: dict[str, Metric] = {}
        for tenant, registry in self.registries.items():
            for family in registry.collect():
                into = merged.get(family.name)
                if into is None:
                    into = Metric(family.name, family.documentation, family.type, family.unit)
                    merged[family.name] = into
                into.samples.extend(
                    sample._replace(labels={**sample.labels, "tenant": tenant})
                    for sample in family.samples
                )
        yield from merged.values()


def tenants_exposition(registries: dict[str, CollectorRegistry]) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(TenantsCollector(registries))
    return generate_latest(registry)
