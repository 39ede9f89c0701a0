"""The rebuild aside of `casino audit verify` in a process of its own, on another core.

Half of a verify's time went to the rebuild aside that the read models are compared
with (decoding, the read models' views, their writes into the scratch copy, the
compare), the other half to every other check; one Python process runs one core at
a time. On a store large enough to be worth a process (`PROCESS_EVENTS_MIN`),
verify hands each page of the log it read - the very bytes its chain and seal
checks see, not a read of its own - to a second process, which decodes them as
verify does (infra/audit/decoding.py), feeds its `Aside` and compares, exactly as
the `Aside` of one process does; meanwhile verify's own process checks the same
pages.

The pages go as plain tuples (position, aggregate id as text, version, topic, stored
bytes), pickled cheaply, at most `PAGES_IN_FLIGHT` of them at a time, so
memory stays bounded whatever the log's length. At an event it cannot decode the
process stops feeding, as `Aside` does, and its compare reads on from the log and
fails the same way. What it finds comes back as the comparison, or the repr of the
error its compare raised, for verify to name as it names a failed rebuild. A
process that ends without answering, or cannot be started, or stops taking pages
(ended, or stuck for `STALL_SECONDS`), is a failed rebuild too (`RebuildFailed`):
never a pass.

The process also re-derives half the rounds (infra/audit/round_check.py: Share),
and verify's own process the other half: the round checks were half of
verify's own process, which set the pace while the other core waited on its pages
(measured in docs/performance.md). Its problems come back with the comparison,
even when the comparison fails; a process that ends without answering leaves its
rounds unchecked, and verify says so.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from infra.audit.book_check import note_owner
from infra.audit.decoding import EventDecoder
from infra.audit.pages import AggregateIds, LogEvent
from infra.audit.rebuild import Aside, Comparison, fewer_collections
from infra.audit.round_check import EVERY_ROUND, RoundCheck, RoundResults, Share
from infra.store.store import Store, open_store

# Fewer events than this are rebuilt in verify's own process: starting a process and
# importing the application there takes about half a second.
PROCESS_EVENTS_MIN = 50_000
# Pages sent but not yet taken: a second of the other process's start-up, bounded.
PAGES_IN_FLIGHT = 8
# How often a blocked send looks whether the process still runs.
SEND_WAIT_SECONDS = 1.0
# A process that runs but takes no page for this long is stuck (stopped, or waiting
# on a lock forever): a failed rebuild, not a verify that never ends. A page takes it
# milliseconds; minutes leave room for a machine under load.
STALL_SECONDS = 300.0
SCRATCH_POOL_SIZE = 2
Row = tuple[int, str, int, str, bytes]  # a LogEvent but its UUID: a plain tuple pickles fast


def cores() -> int:
    """The cores this process may run on: with one, a second process only costs."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


class RebuildFailed(Exception):
    """The process's rebuild could not be compared: why, as the error's repr (or what
    became of the process)."""


class AsideProcess:
    """An `Aside` in another process, fed the pages verify reads (`sending`); it
    checks the rounds verify's own process does not (`kept_here`)."""

    # The rounds verify's own process checks; the process, the rest (`Share.rest`).
    kept_here = Share(frozenset({0}), 2)

    def __init__(self, store: Store) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of threads and connections
        self.pages: Any = context.Queue(maxsize=PAGES_IN_FLIGHT)
        self.answers, answering = context.Pipe(duplex=False)
        self.process = context.Process(
            target=_rebuild_aside,
            args=(store.url, store.postgres_schema, self.pages, answering, self.kept_here.rest()),
            name="casino-audit-aside",
            daemon=True,
        )
        self.failure: str | None = None
        self.rounds: RoundResults | None = None  # its round checks, once it has answered
        self.started = False
        try:
            self.process.start()
            self.started = True
        except Exception as error:  # no process, no rebuild: named when compared
            self.failure = f"the rebuild's process could not start: {error!r}"
        answering.close()  # the child's end: its closing is how a dead child shows

    def rounds_here(self) -> Share:
        """The rounds verify's own process checks: every one if this never started."""
        return self.kept_here if self.started else EVERY_ROUND

    def sending(self, pages: Iterator[list[LogEvent]]) -> Iterator[list[LogEvent]]:
        """The same pages, each handed to the process first."""
        for page in pages:
            self._send([(e.id, e.aggregate, e.originator_version, e.topic, e.state) for e in page])
            yield page

    def _send(self, rows: list[Row] | None) -> None:
        waited = 0.0
        while self.failure is None:
            try:
                self.pages.put(rows, timeout=SEND_WAIT_SECONDS)
                return
            except queue.Full:
                waited += SEND_WAIT_SECONDS
                if not self.process.is_alive():
                    self.failure = _ended(self.process)
                elif waited >= STALL_SECONDS:  # killed on leaving (__exit__)
                    self.failure = f"the rebuild's process took no page for {waited:.0f} s: stuck"

    def compare(self) -> Comparison:
        """The process's comparison, once it has every page; RebuildFailed if it has none."""
        self._send(None)  # the end of the pages
        if self.failure is not None:
            raise RebuildFailed(self.failure)
        wait([self.answers, self.process.sentinel])
        try:
            answer = self.answers.recv()
        except EOFError:  # it ended without answering
            self.process.join()
            raise RebuildFailed(_ended(self.process)) from None
        self.rounds = answer[-1]
        if answer[0] == "failed":
            raise RebuildFailed(answer[1])
        return Comparison(answer[1], answer[2])

    def __enter__(self) -> AsideProcess:
        return self

    def __exit__(self, *_: object) -> None:
        if self.started:
            self.process.join(timeout=SEND_WAIT_SECONDS)  # it ends once it has answered
            if self.process.is_alive():  # verify itself failed, or the process is stuck
                self.process.kill()
                self.process.join()
        self.pages.close()
        self.pages.cancel_join_thread()  # pages nobody will take are dropped
        self.answers.close()


def _ended(process: Any) -> str:
    return f"the rebuild's process ended (exit code {process.exitcode}) without an answer"


def _rebuild_aside(url: str, schema: str, pages: Any, answers: Connection, share: Share) -> None:
    """In the other process: feed an `Aside` the pages as they come, and check the
    rounds of `share`; then compare. The round checks' results end every answer."""
    try:
        # As verify opened it (with the owner's role, perhaps): only read here.
        store = open_store(url, postgres_schema=schema, pool_size=SCRATCH_POOL_SIZE,
                           group_commit=None, opened_elsewhere=True)  # fmt: skip
    except Exception as error:
        answers.send(("failed", repr(error), None))
        return
    try:
        with fewer_collections(), Aside(store, lambda _: None) as aside:
            rounds = _feed(store, aside, pages, share)
            try:
                comparison = aside.compare()
            except Exception as error:  # verify names it, as it names its own
                answers.send(("failed", repr(error), rounds))
                return
        answers.send(("compared", comparison.position, comparison.differences, rounds))
    finally:
        store.close()


def _feed(store: Store, aside: Aside, pages: Any, share: Share) -> RoundResults:
    """Every page until the end (None), each event to the aside and to the round
    checks. Past an event it cannot decode the aside is fed no more (`compare` reads
    on from the log, and fails there); the round checks pass it by, as verify's do."""
    ids, decode = AggregateIds(), EventDecoder(store.app.mapper).decode
    wallets: dict[Any, tuple[str, str]] = {}
    # Versions, and entries for rounds never seen, are verify's own to check.
    rounds = RoundCheck(None, None, wallets, share, orphans=False)
    while (rows := pages.get()) is not None:
        for position, aggregate, version, topic, state in rows:
            try:
                event = decode(position, ids.of(aggregate)[0], version, topic, state)
            except Exception:
                aside.stop()
                continue
            aside.add(position, event)
            note_owner(wallets, event)
            rounds.add(position, event)
    return rounds.finish()
