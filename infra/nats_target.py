"""A JetStream stream named by a URL, `nats://user:password@host:port/STREAM` (or
`tls://`): the witness's (CASINO_WITNESS) and the event feed's (CASINO_FEED).

Read at start-up by the configuration, so a bad value stops the server naming the
setting; nothing here connects. Each use publishes to one subject, its prefix and
the stream's name (`casino.witness.CASINO`, `casino.events.CASINO`), which the
stream the deployment creates takes and nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

NATS_SCHEMES = ("nats", "tls")
# JetStream's stream names are subject tokens too: no dots, spaces, wildcards.
STREAM_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
EXAMPLE = "nats://user:password@host:4222/STREAM"


@dataclass(frozen=True)
class NatsTarget:
    url: str  # the server's, with the credentials, without the stream
    user: str
    stream: str
    subject_prefix: str

    @property
    def subject(self) -> str:
        return self.subject_prefix + self.stream

    @property
    def shown(self) -> str:
        """The URL as logs, messages and readiness show it: never the password."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{self.user}:***@{parts.hostname}:{parts.port}/{self.stream}"


def is_nats(text: str) -> bool:
    return "://" in text and text.split("://", 1)[0] in NATS_SCHEMES


def parse_nats(text: str, subject_prefix: str) -> NatsTarget:
    """The stream a URL names; ValueError says what is wrong (never the password)."""
    parts = urlsplit(text.strip())
    try:
        port = parts.port
    except ValueError:
        raise ValueError("the port is not a number from 0 to 65535") from None
    if parts.scheme not in NATS_SCHEMES or not parts.hostname or port is None:
        raise ValueError(f"is not nats://user:password@host:port/STREAM (such as {EXAMPLE})")
    if not parts.username or parts.password is None:
        raise ValueError("names no user and password (nats://user:password@host:port/STREAM)")
    stream = parts.path.strip("/")
    if not STREAM_NAME.fullmatch(stream):
        raise ValueError("the stream (the URL's path) is not 1-64 letters, digits, - or _")
    if parts.query or parts.fragment:
        raise ValueError("has a query or fragment: only nats://user:password@host:port/STREAM")
    server = f"{parts.scheme}://{parts.netloc}"
    return NatsTarget(server, unquote(parts.username), stream, subject_prefix)
