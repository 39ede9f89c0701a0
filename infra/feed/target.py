"""CASINO_FEED: where the event feed goes, `nats://user:password@host:port/STREAM`.

Read by the configuration at start-up, so a bad value stops the server naming the
setting; nothing here connects. The relay publishes to the subject SUBJECT_PREFIX +
STREAM (`casino.events.CASINO` for the stream `CASINO`): one subject, which the
stream the deployment creates takes and nothing else (docs/feed.md).
"""

from __future__ import annotations

from infra.nats_target import NatsTarget, parse_nats

SUBJECT_PREFIX = "casino.events."
FeedTarget = NatsTarget  # the feed's stream: its URL, user, stream and subject


def parse_feed(text: str) -> FeedTarget:
    """The stream CASINO_FEED names; ValueError says what is wrong, never the password."""
    return parse_nats(text, SUBJECT_PREFIX)
