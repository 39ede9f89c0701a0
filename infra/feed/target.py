"""CASINO_FEED: where the event feed goes, `nats://user:password@host:port/STREAM`.

Read by the configuration at start-up, so a bad value stops the server naming the
setting; nothing here connects. The relay publishes to the subject SUBJECT_PREFIX +
STREAM (`casino.events.CASINO` for the stream `CASINO`): one subject, which the
stream the deployment creates takes and nothing else (docs/feed.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

SUBJECT_PREFIX = "casino.events."
SCHEMES = ("nats", "tls")
# JetStream's stream names are subject tokens too: no dots, spaces, wildcards.
STREAM_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
EXAMPLE = "nats://user:password@host:4222/STREAM"


@dataclass(frozen=True)
class FeedTarget:
    server: str  # the URL the client connects to: scheme, credentials, host and port
    user: str
    stream: str

    @property
    def subject(self) -> str:
        return SUBJECT_PREFIX + self.stream

    @property
    def shown(self) -> str:
        """The setting as logs and readiness show it: never the password."""
        parts = urlsplit(self.server)
        return f"{parts.scheme}://{self.user}:***@{parts.hostname}:{parts.port}/{self.stream}"


def parse_feed(text: str) -> FeedTarget:
    """The stream CASINO_FEED names; ValueError says what is wrong, never the password."""
    parts = urlsplit(text.strip())
    try:
        port = parts.port
    except ValueError:
        raise ValueError("the port is not a number from 0 to 65535") from None
    if parts.scheme not in SCHEMES or not parts.hostname or port is None:
        raise ValueError(f"is not nats://user:password@host:port/STREAM (such as {EXAMPLE})")
    if not parts.username or parts.password is None:
        raise ValueError("names no user and password (nats://user:password@host:port/STREAM)")
    stream = parts.path.removeprefix("/")
    if not STREAM_NAME.fullmatch(stream):
        raise ValueError("the stream (the URL's path) is not 1-64 letters, digits, - or _")
    if parts.query or parts.fragment:
        raise ValueError("has a query or fragment: only nats://user:password@host:port/STREAM")
    return FeedTarget(f"{parts.scheme}://{parts.netloc}", unquote(parts.username), stream)
