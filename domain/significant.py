"""Significant events (GLI-19 s2.8.8, rules.md 7): what an operator or auditor must be
able to list later. Each is its own one-event aggregate, saved in the same atomic
save as the command it reports (a limit change, an exclusion, an operator's points
adjustment), or on its own (start-up, shutdown, refused authentication, a failing
worker). They sit in the one sealed log, verified and exported with the rest.

The configuration seen at each start-up is kept in one `Configuration` aggregate,
so that a start-up can say what changed since the last one.
"""

from __future__ import annotations

import datetime
import json
import re
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.copying import FastCopy
from domain.errors import InvalidSignificantEvent
from domain.ids import NAMESPACE

KIND_PATTERN = re.compile(r"^[a-z][a-z_]{0,39}$")
DETAILS_CHARACTERS_MAX = 8_000  # as JSON: a few dozen settings, old and new
# Kinds recorded by this code; others may be added (seal and witness failures).
LIMIT_CHANGED = "limit_changed"
PLAYER_EXCLUDED = "player_excluded"
EXCLUSION_ENDED = "exclusion_ended"
POINTS_ADJUSTED = "points_adjusted"
CONFIGURATION_CHANGED = "configuration_changed"
STARTED = "started"
STOPPED = "stopped"
AUTHENTICATION_REFUSED = "authentication_refused"
PROJECTOR_FAILED = "projector_failed"
WORKER_FAILED = "worker_failed"
SEAL_KEY_ROTATED = "seal_key_rotated"
# An operator's acceptance of a log changed behind the service's back, as found
# (`casino audit acknowledge`): saved with its own seal, outside the commands.
LOG_ACKNOWLEDGED = "log_acknowledged"


class SignificantEvent(FastCopy, Aggregate):
    TOPIC = "casino:SignificantEvent"

    class Created(Aggregate.Created):
        TOPIC = "casino:SignificantEvent.Recorded"
        event_id: str
        kind: str
        at: str
        actor: str
        details: dict[str, Any]

    @staticmethod
    def create_id(event_id: str, kind: str, at: str, actor: str, details: dict[str, Any]) -> UUID:
        return UUID(event_id)

    @event(Created)
    def __init__(
        self, event_id: str, kind: str, at: str, actor: str, details: dict[str, Any]
    ) -> None:
        self.event_id = event_id
        self.kind = kind
        self.at = at
        self.actor = actor  # the role that asked for it, or "system"
        self.details = details


def stamp(moment: datetime.datetime) -> str:
    """A moment in one fixed form (UTC, microseconds), so stored times compare as text."""
    return moment.astimezone(datetime.UTC).isoformat(timespec="microseconds")


def significant(
    event_id: str, kind: str, at: str, actor: str, details: dict[str, Any]
) -> SignificantEvent:
    """A significant event, checked: a short lowercase kind and actor, bounded details."""
    check_kind(kind)
    check_kind(actor)
    try:
        size = len(json.dumps(details, sort_keys=True))
    except (TypeError, ValueError):
        raise InvalidSignificantEvent("details must be plain JSON") from None
    if size > DETAILS_CHARACTERS_MAX:
        raise InvalidSignificantEvent(
            f"details of {size} characters pass the limit of {DETAILS_CHARACTERS_MAX}"
        )
    return SignificantEvent(event_id, kind, at, actor, details)


def check_kind(kind: str) -> str:
    if not KIND_PATTERN.fullmatch(kind):
        raise InvalidSignificantEvent(
            f"kind {kind[:40]!r} must be 1-40 lowercase letters or '_', a letter first"
        )
    return kind


class Configuration(FastCopy, Aggregate):
    """The configuration as the last start-up saw it, secrets already masked."""

    TOPIC = "casino:Configuration"

    class Created(Aggregate.Created):
        TOPIC = "casino:Configuration.Created"

    @staticmethod
    def create_id() -> UUID:
        return configuration_uuid()

    @event(Created)
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def see(self, values: dict[str, str]) -> dict[str, dict[str, str | None]]:
        """Keep `values`; returns what changed, each with its old and new value."""
        changed: dict[str, dict[str, str | None]] = {
            key: {"old": self.values.get(key), "new": values.get(key)}
            for key in sorted(set(self.values) | set(values))
            if self.values.get(key) != values.get(key)
        }
        if changed:
            self._seen(values)
        return changed

    @event("Seen", topic="casino:Configuration.Seen")
    def _seen(self, values: dict[str, str]) -> None:
        self.values = dict(values)


def configuration_uuid() -> UUID:
    return uuid5(NAMESPACE, "configuration")
