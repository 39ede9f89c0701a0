"""The feed's JetStream stream, as the relay uses it: read the position of its last
message, and publish one event, waiting for the stream's acknowledgement.

The relay's NATS user needs to publish only to the feed's subject and to
`$JS.API.STREAM.MSG.GET.<STREAM>` and `$JS.API.STREAM.INFO.<STREAM>`, and to
receive the answers on `_INBOX.>` (docs/feed.md gives the permissions). It never
creates, changes, purges or deletes the stream.

nats-py is asyncio; these calls run on the relay's own event loop, in its thread.
The connection does not reconnect by itself: a call that finds it closed connects
afresh, so a NATS server that is down costs a pass at most CONNECT_SECONDS, and
nothing is queued in the client meanwhile to be sent later, out of turn.
"""

from __future__ import annotations

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client

from infra.feed.target import FeedTarget

CONNECT_SECONDS = 2
ACK_SECONDS = 5.0  # for the stream to acknowledge one publish, or answer one read
# JetStream's error codes (nats-server's errors.json).
NO_MESSAGE = 10037
STREAM_NOT_FOUND = 10059
WRONG_LAST_MSG_ID = 10070


class FeedUnavailable(Exception):
    """The NATS server or the stream cannot be had: the message says which and why."""


class FeedRaced(Exception):
    """The stream's last message is not the one this publish follows: another relay
    published meanwhile. Nothing is wrong; the next pass starts after the stream's last."""


class FeedStream:
    def __init__(self, target: FeedTarget) -> None:
        self.target = target
        self._connection: Client | None = None
        self._server_said = ""  # why the server refused us, told to the error callback

    async def last_position(self) -> int | None:
        """The log position of the stream's last message (its Nats-Msg-Id); None for a
        stream that never had one."""
        stream = (await self._connected()).jetstream(timeout=ACK_SECONDS)
        try:
            message = await stream.get_last_msg(self.target.stream, self.target.subject)
        except nats.js.errors.NotFoundError as error:
            if error.err_code != NO_MESSAGE:
                raise self._failure(error) from None
            await self._refuse_if_emptied()
            return None
        except nats.errors.Error as error:
            raise self._failure(error) from None
        msg_id = (message.headers or {}).get("Nats-Msg-Id", "")
        if not msg_id.isdigit():
            raise FeedUnavailable(
                f"the last message of {self.target.subject} (sequence {message.seq}) has "
                f"no log position as its Nats-Msg-Id: the subject is not the relay's alone"
            )
        return int(msg_id)

    async def publish(self, position: int, body: bytes, previous: int | None) -> bool:
        """Publish the event at `position`, to follow the stream's message of position
        `previous` (None: the stream's first); True once stored, False if the stream
        holds it already (a duplicate it dropped)."""
        stream = (await self._connected()).jetstream(timeout=ACK_SECONDS)
        headers = {"Nats-Msg-Id": str(position)}
        if previous is not None:
            headers["Nats-Expected-Last-Msg-Id"] = str(previous)
        try:
            ack = await stream.publish(
                self.target.subject,
                body,
                timeout=ACK_SECONDS,
                stream=self.target.stream,  # refused by any other stream taking the subject
                headers=headers,
            )
        except nats.js.errors.APIError as error:
            if error.err_code == WRONG_LAST_MSG_ID:
                raise FeedRaced(error.description or "wrong last message id") from None
            raise self._failure(error) from None
        except nats.errors.Error as error:
            raise self._failure(error) from None
        return not ack.duplicate

    async def close(self) -> None:
        if self._connection is not None and not self._connection.is_closed:
            await self._connection.close()
        self._connection = None

    async def _refuse_if_emptied(self) -> None:
        """Nothing for a stream never written to. A stream whose messages are all gone
        (expired by its max_age) no longer says where the relay stopped: publishing
        from the log's start would repeat it all, so the relay stops and says why."""
        stream = (await self._connected()).jetstream(timeout=ACK_SECONDS)
        try:
            info = await stream.stream_info(self.target.stream)
        except nats.errors.Error as error:
            raise self._failure(error) from None
        if info.state.last_seq:
            raise FeedUnavailable(
                f"the stream {self.target.stream} has held {info.state.last_seq} messages "
                "and holds none now: where the feed stopped is lost (docs/feed.md)"
            )

    async def _connected(self) -> Client:
        if self._connection is not None and self._connection.is_connected:
            return self._connection
        await self.close()
        self._server_said = ""
        try:
            self._connection = await nats.connect(
                self.target.url,
                name="casino-feed",
                connect_timeout=CONNECT_SECONDS,
                allow_reconnect=False,  # the next pass connects again
                max_reconnect_attempts=1,
                error_cb=self._said,
            )
        except (TimeoutError, OSError, nats.errors.Error) as error:
            reason = self._server_said or _reason(error)
            where = self.target.shown
            raise FeedUnavailable(f"NATS at {where} cannot be reached: {reason}") from None
        return self._connection

    async def _said(self, error: Exception) -> None:
        """The server's complaints come here rather than with the call: a permission
        refused shows only as a request never answered. Kept for the failure's
        message (the worker logs that, throttled), never logged here."""
        self._server_said = _reason(error)

    def _failure(self, error: nats.errors.Error) -> FeedUnavailable:
        where = f"the stream {self.target.stream} at {self.target.shown}"
        if isinstance(error, nats.js.errors.APIError):
            if error.err_code == STREAM_NOT_FOUND:
                return FeedUnavailable(f"{where} is not there: create it (docs/feed.md)")
            return FeedUnavailable(f"{where} refused: {error.description or error.err_code}")
        if isinstance(error, nats.js.errors.NoStreamResponseError):
            return FeedUnavailable(f"no stream at {self.target.shown} takes {self.target.subject}")
        said = f" (the server said: {self._server_said})" if self._server_said else ""
        return FeedUnavailable(f"{where} failed: {_reason(error)}{said}")


def _reason(error: BaseException) -> str:
    return (str(error) or type(error).__name__).removeprefix("nats: ")[:300]
