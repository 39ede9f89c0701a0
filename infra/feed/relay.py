"""The relay: every sealed event, in log order, onto the feed's JetStream stream
(docs/feed.md), for downstream services (CRM, BI, fraud) that follow the log
without polling GET /v1/events.

Each message is one event exactly as GET /v1/events shows it, read by the same
code (infra/http/routes/events.py: read_page), so an open round's secrets are
withheld alike and receipts left out; its header Nats-Msg-Id is its log position.

Exactly once and in order, without a table of its own:
- each pass starts after the stream's own last message, so a restarted relay, or
  another server process's relay, goes on where the stream stops;
- each publish waits for the stream's acknowledgement before the next is sent, so
  the stream never holds an event without all the earlier ones;
- the stream drops a Nats-Msg-Id it has seen within its duplicate window (an ack
  lost, two processes' relays racing), and refuses a message whose
  Nats-Expected-Last-Msg-Id is not its last (a relay stalled past that window):
  that pass ends, and the next starts after the stream's last;
- never past the last seal: an event no seal covers may yet be named tampering.

Every server process runs a relay (`casino serve --workers N` runs N): they are
redundant, not harmful, and one of them keeps the feed going while another's
process is down. A NATS server that cannot be reached fails the pass: logged once,
then a minute apart, and at its end (infra/fault_log.py), tried again after
RETRY_SECONDS_MIN doubling to RETRY_SECONDS_MAX, and readiness lists the feed as a
failing check (inside a 200) meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from typing import Any

import orjson
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from infra.feed.stream import FeedRaced, FeedStream, FeedUnavailable
from infra.feed.target import FeedTarget, parse_feed
from infra.http.routes.events import read_page
from infra.logs import get_logger
from infra.store.reach import first_line
from infra.store.store import Store
from infra.witness import latest_seal
from infra.workers import PeriodicWorker

POLL_SECONDS = 0.25  # between passes: how long an event waits at most to be relayed
PASS_SECONDS = 1.0  # of publishing in one pass, so readiness hears of it that often
PAGE_EVENTS = 200  # events read from the log at once
RETRY_SECONDS_MIN = 0.5
RETRY_SECONDS_MAX = 5.0
LAG_EVENTS_MAX = 10_000  # readiness: further behind the last seal than this fails
SILENT_SECONDS_MAX = 30.0  # readiness: no pass done for this long fails

log = get_logger("casino.feed")


class FeedRelay(PeriodicWorker):
    name = "feed"

    def __init__(self, store: Store, target: FeedTarget) -> None:
        self.store = store
        self.target = target
        self.stream = FeedStream(target)
        self.position = 0  # the last log position the stream holds, or that was skipped
        self.sealed = 0  # the last seal's position, read at the start of the last pass
        self.published = 0  # events the stream stored from this relay
        self.problem: str | None = None
        self.passed_at: float | None = None  # when a pass last ended well
        self._failures_in_row = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        super().__init__(POLL_SECONDS)

    @property
    def lag(self) -> int:
        """Positions between the last one relayed and the last seal."""
        return max(0, self.sealed - self.position)

    def tick(self) -> None:
        if self._failures_in_row:  # NATS down: try again soon, not four times a second
            self._stopping.wait(self._retry_seconds())
        if self._loop is None:
            self._loop = asyncio.new_event_loop()  # this thread's alone
        try:
            self._loop.run_until_complete(self._pass())
        except Exception as error:
            self._failures_in_row += 1
            self.problem = str(error) if isinstance(error, FeedUnavailable) else first_line(error)
            raise  # to PeriodicWorker: logged once, a minute apart, and at its end
        if self._failures_in_row or self.passed_at is None:
            log.info(
                "feed_relaying", to=self.target.shown, position=self.position, sealed=self.sealed
            )
        self._failures_in_row, self.problem = 0, None
        self.passed_at = time.monotonic()

    def _run(self) -> None:
        try:
            super()._run()
        finally:
            self.close()  # in the thread whose loop it is, whoever stopped it

    def close(self) -> None:
        """Let go of the connection and the loop (a relay whose passes are run by hand
        closes itself; a started one, when its thread ends)."""
        if self._loop is None:
            return
        loop, self._loop = self._loop, None
        loop.run_until_complete(self.stream.close())
        # What the client leaves running (its reader, pinger, flusher) ends with the
        # loop, as asyncio.run ends what is left: cancelled and awaited.
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.close()

    def health(self) -> tuple[bool, str]:
        """Readiness's `feed` check: whether it is fine, and what it says."""
        if not self.alive:
            return False, "the feed relay has stopped"
        if self.problem is not None:
            return False, self.problem
        if self.passed_at is None:
            return False, f"the feed relay has not reached {self.target.shown} yet"
        silent = time.monotonic() - self.passed_at
        if silent > SILENT_SECONDS_MAX:
            return False, f"the feed relay has not finished a pass for {silent:.0f} s"
        if self.lag > LAG_EVENTS_MAX:
            return False, f"the feed is {self.lag} positions behind the last seal"
        return True, f"{self.target.shown}, {self.lag} positions behind the last seal"

    def _retry_seconds(self) -> float:
        return min(RETRY_SECONDS_MAX, RETRY_SECONDS_MIN * 2.0 ** (self._failures_in_row - 1))

    async def _pass(self) -> None:
        self.sealed = self._sealed()  # before NATS: the lag grows while it is down
        last = await self.stream.last_position()
        if last is not None and last > self.sealed:
            self.sealed = self._sealed()  # another process's relay may have read a newer seal
            if last > self.sealed:
                raise FeedUnavailable(
                    f"the stream {self.target.stream} holds position {last}, past this log's "
                    f"last seal ({self.sealed}): it is the feed of another log"
                )
        self.position = max(self.position, last or 0)
        deadline = time.monotonic() + PASS_SECONDS
        try:
            while self.position < self.sealed:
                before = self.position
                last = await self._relay_page(last)
                if self.position == before:
                    break  # nothing in the log up to its seal: cut, which the store watch names
                if time.monotonic() >= deadline:
                    break  # a page at least each pass; the rest next pass
        except FeedRaced as raced:
            log.info("feed_raced", after=self.position, stream_said=str(raced))

    def _sealed(self) -> int:
        latest = latest_seal(self.store)
        return latest.position if latest is not None else 0

    async def _relay_page(self, last: int | None) -> int | None:
        """Publish the next page of sealed events; the position published last."""
        limit = min(PAGE_EVENTS, self.sealed - self.position)
        page, read_to = read_page(self.store.app, self.position, limit)
        for event in page:
            if event["position"] > self.sealed:
                break  # not sealed yet: the next pass
            stored = await self.stream.publish(event["position"], orjson.dumps(event), last)
            last = self.position = event["position"]
            self.published += stored
        # What the page read past its last event was left out (receipts): skip it too.
        self.position = max(self.position, min(read_to, self.sealed))
        return last


def feed_relays(store: Store, feed: str) -> list[FeedRelay]:
    """The server's relay when CASINO_FEED names a stream; none when it is empty."""
    return [FeedRelay(store, parse_feed(feed))] if feed.strip() else []


class FeedCollector(Collector):
    """The relay's figures at each scrape (docs/operations.md, Metrics), from the workers of
    the server: none while it runs none."""

    def __init__(self, workers: Sequence[Any]) -> None:
        self.workers = workers

    def collect(self) -> Iterator[Metric]:
        for relay in (w for w in self.workers if isinstance(w, FeedRelay)):
            yield GaugeMetricFamily(
                "casino_feed_lag", "Positions the event feed is behind the last seal",
                value=relay.lag,
            )  # fmt: skip
            yield CounterMetricFamily(
                "casino_feed_published", "Events the feed's stream stored from this "
                "process's relay (duplicates it dropped not counted)", value=relay.published,
            )  # fmt: skip
