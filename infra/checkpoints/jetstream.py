"""The NATS JetStream witness: one checkpoint a message, on a stream that denies
deleting and purging, run by someone the casino's staff are not (docs/witness.md).

The service connects with the user and password of CASINO_WITNESS and uses three
things of JetStream, all of which its user's permissions allow and nothing more:

- publish to `casino.witness.STREAM` and wait for the stream's acknowledgement (a
  JetStream publish is a request; its answer is the ack). `note` returns once the
  stream has acknowledged, or raises after ACK_SECONDS. Each message carries
  `Nats-Msg-Id: <counter>` (a publish retried after a lost ack is not stored
  twice), `Nats-Expected-Stream: STREAM`, and `Nats-Expected-Last-Subject-Sequence`
  (the stream sequence of the checkpoint read last: anything else written since
  makes the stream refuse it, so the chain never forks);
- read a message by sequence or the subject's last one (`$JS.API.STREAM.MSG.GET.
  STREAM`, a request too);
- replies come to the inbox `_INBOX_<user>.>`, so the permissions can give each user
  an inbox no other user reads.

nats-py is asyncio: its connection lives on an event loop in a thread of its own,
and `last`, `note` and `entries` are synchronous calls into it, each bounded in
time, for the server's worker thread and for verify alike. The connection does not
reconnect by itself: a call that finds it closed connects afresh, so an outage
costs each call at most CONNECT_TRIES * CONNECT_SECONDS, and nothing queues up
meanwhile.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import re
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js.api import RawStreamMsg

from infra.checkpoints.format import Checkpoint
from infra.checkpoints.witnesses import (
    Entry,
    WitnessGone,
    WitnessMoved,
    WitnessUnavailable,
    entry_of,
)
from infra.nats_target import NatsTarget

CONNECT_SECONDS = 2.0  # a connection attempt; nats-py makes two at the least
CONNECT_TRIES = 2
ACK_SECONDS = 5.0  # how long `note` waits for the stream to acknowledge a checkpoint
READ_SECONDS = 5.0  # for one read (a window of them, when verify reads the stream)
READ_WINDOW = 256  # reads in flight at once when verify reads the whole stream
NO_MESSAGE = 10037  # JetStream's error codes (nats-server's errors.json)
STREAM_NOT_FOUND = 10059
WRONG_LAST_SEQUENCE = 10071
T = TypeVar("T")


class JetStreamWitness:
    def __init__(
        self,
        target: NatsTarget,
        ack_seconds: float = ACK_SECONDS,
        read_seconds: float = READ_SECONDS,
    ) -> None:
        self.target = target
        self.where = target.shown
        self.ack_seconds = ack_seconds
        self.read_seconds = read_seconds
        self._lock = threading.Lock()  # one call at a time: the sequence is shared
        self._loop: _Loop | None = None
        self._connection: Client | None = None
        self._server_said = ""  # the last error the server sent (a permission refused)
        self._last_sequence: int | None = None  # of the checkpoint read or acked last

    def last(self) -> Entry | None:
        with self._lock:
            message = self._run(self._last_message(), self.read_seconds)
            self._last_sequence = message.seq if message is not None else 0
        return self._entry(message) if message is not None else None

    def note(self, checkpoint: Checkpoint) -> str:
        with self._lock:
            expected, self._last_sequence = self._last_sequence, None  # unknown until acked
            assert expected is not None, "read the stream's last checkpoint first"
            sequence = self._run(self._publish(checkpoint, expected), self.ack_seconds)
            self._last_sequence = sequence
        return f"stream {self.target.stream} sequence {sequence}"

    def entries(self) -> Iterator[Entry]:
        with self._lock:
            last = self._run(self._last_message(), self.read_seconds)
        end = last.seq if last is not None and last.seq is not None else 0
        for start in range(1, end + 1, READ_WINDOW):
            stop = min(end, start + READ_WINDOW - 1)
            with self._lock:
                window = self._run(self._window(start, stop), self.read_seconds)
            yield from (self._entry(message) for message in window)

    def close(self) -> None:
        with self._lock:
            if self._loop is None:
                return
            if self._connection is not None:
                # A server gone silent: the loop stops all the same.
                with contextlib.suppress(WitnessUnavailable):
                    self._run(self._connection.close(), CONNECT_SECONDS)
            self._loop.stop()
            self._loop, self._connection = None, None

    def _entry(self, message: RawStreamMsg) -> Entry:
        return entry_of(f"stream sequence {message.seq}", message.data or b"")

    def _run(self, work: Coroutine[Any, Any, T], seconds: float) -> T:
        if self._loop is None:
            self._loop = _Loop()
        # Past the timeouts inside (connect, then the request), the loop itself is stuck.
        return self._loop.run(work, CONNECT_TRIES * CONNECT_SECONDS + seconds + 1, self.where)

    async def _last_message(self) -> RawStreamMsg | None:
        stream = (await self._connected()).jetstream(timeout=self.read_seconds)
        try:
            return await stream.get_last_msg(self.target.stream, self.target.subject)
        except nats.js.errors.NotFoundError as error:
            if error.err_code in (NO_MESSAGE, None):
                return None  # no checkpoint yet
            raise self._failure(error) from None
        except nats.errors.Error as error:
            raise self._failure(error) from None

    async def _publish(self, checkpoint: Checkpoint, expected: int) -> int:
        stream = (await self._connected()).jetstream(timeout=self.ack_seconds)
        headers = {
            "Nats-Msg-Id": str(checkpoint.counter),
            "Nats-Expected-Last-Subject-Sequence": str(expected),
        }
        try:
            ack = await stream.publish(
                self.target.subject,
                checkpoint.record(),
                timeout=self.ack_seconds,
                stream=self.target.stream,
                headers=headers,
            )
        except nats.errors.Error as error:
            raise self._failure(error) from None
        if ack.duplicate:  # the stream holds a checkpoint of this counter already
            raise WitnessMoved(f"the stream {self.target.stream} holds checkpoint "
                               f"{checkpoint.counter} already (sequence {ack.seq})")  # fmt: skip
        return int(ack.seq)

    async def _window(self, start: int, stop: int) -> list[RawStreamMsg]:
        stream = (await self._connected()).jetstream(timeout=self.read_seconds)
        gets = [stream.get_msg(self.target.stream, seq=seq) for seq in range(start, stop + 1)]
        found = []
        for got in await asyncio.gather(*gets, return_exceptions=True):
            if isinstance(got, nats.js.errors.NotFoundError) and got.err_code == NO_MESSAGE:
                continue  # a sequence that holds no message: the counters tell what is gone
            if isinstance(got, nats.errors.Error):
                raise self._failure(got)
            if isinstance(got, BaseException):
                raise got
            if got.subject == self.target.subject:  # a stream may hold other subjects too
                found.append(got)
        return found

    async def _connected(self) -> Client:
        if self._connection is not None and self._connection.is_connected:
            return self._connection
        if self._connection is not None:
            await _closed(self._connection)
        self._connection, self._server_said = None, ""
        try:
            self._connection = await nats.connect(
                self.target.url,
                name="casino-witness",
                connect_timeout=int(CONNECT_SECONDS),
                allow_reconnect=False,
                max_reconnect_attempts=CONNECT_TRIES - 1,  # then the next call tries again
                reconnect_time_wait=0.1,
                inbox_prefix=inbox_prefix(self.target.user),
                error_cb=self._said,
            )
        except (TimeoutError, OSError, nats.errors.Error) as error:
            reason = self._server_said or _reason(error)  # why no server was had
            raise WitnessUnavailable(
                f"the witness at {self.where} cannot be reached: {reason}"
            ) from None
        return self._connection

    async def _said(self, error: Exception) -> None:
        """The server's complaints come here, not with the request: a permission
        refused shows only as a request that is never answered. Kept for the
        failure's message (the worker logs it, throttled), never logged here."""
        self._server_said = _reason(error)

    def _failure(self, error: nats.errors.Error) -> Exception:
        if isinstance(error, nats.js.errors.APIError):
            return self._refusal(error)
        if isinstance(error, (nats.errors.NoRespondersError, nats.js.errors.NoStreamResponseError)):
            return WitnessGone(f"no stream of {self.where} takes {self.target.subject}")
        if isinstance(error, nats.errors.TimeoutError):
            said = f" (the server said: {self._server_said})" if self._server_said else ""
            return WitnessUnavailable(f"the witness at {self.where} did not answer in time{said}")
        return WitnessUnavailable(f"the witness at {self.where} failed: {_reason(error)}")

    def _refusal(self, error: nats.js.errors.APIError) -> Exception:
        said = error.description or f"error {error.err_code}"
        if error.err_code == STREAM_NOT_FOUND:
            return WitnessGone(f"the stream {self.target.stream} is not there ({self.where})")
        if error.err_code == WRONG_LAST_SEQUENCE:
            return WitnessMoved(f"the stream {self.target.stream} was written to since: {said}")
        return WitnessUnavailable(f"the witness at {self.where} refused: {said}")


def inbox_prefix(user: str) -> str:
    """The user's own inbox (docs/witness.md): `_INBOX_<user>`, the user's name made
    a subject token."""
    return "_INBOX_" + re.sub(r"[^A-Za-z0-9_-]", "_", user)


async def _closed(connection: Client) -> None:
    """A connection lost or dropped: let go of what is left of it."""
    with contextlib.suppress(OSError, nats.errors.Error):
        await connection.close()


def _reason(error: BaseException) -> str:
    return (str(error) or type(error).__name__).removeprefix("nats: ")[:300]


class _Loop:
    """An asyncio loop in a daemon thread, which synchronous callers hand work to."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="witness-nats", daemon=True
        )
        self.thread.start()

    def run(self, work: Coroutine[Any, Any, T], seconds: float, where: str) -> T:
        future = asyncio.run_coroutine_threadsafe(work, self.loop)
        try:
            return future.result(seconds)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise WitnessUnavailable(
                f"the witness at {where} did not answer in {seconds:.0f} s"
            ) from None

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=CONNECT_SECONDS)
        if not self.thread.is_alive():
            self.loop.close()
