"""The log's events decoded for the audit tools: what the library's mapper makes, faster.

verify decodes every event (twice when the rebuild aside runs in a process of its
own) and a rebuild once. The mapper parses each event's JSON with the standard
library, calling its transcoder's object hook on every object, then finds the
event's class and id convertor by topic: about 38,000 instructions an event (the
log of benchmarks/bench_audit.py, counted with callgrind). `EventDecoder` parses
with orjson, revives the one transcoded value nearly every event holds (its
timestamp) directly, and keeps each topic's class: about 22,000.

orjson does not read every text as the standard library does (an integer past 64
bits becomes a float; NaN and 1e400 are refused; escapes and spacing may differ),
so its reading is taken only when orjson writes the value back as exactly the
stored bytes - what it does for every event this casino writes (compact, keys in
order, no floats). Then both parsers read the same values: every token is then
orjson's own canonical spelling of the value it read, which the standard library
reads as that value too. Anything else (a state that does not come back the same,
no object, an unknown topic or transcoding, an upcast that fails) is handed to the
mapper, which decodes it, or fails, exactly as before: the same events, the same
errors, the same words in verify's report. (The standard library's own scanner
without the hook, tried first, saved a sixth: measured.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import (
    JSONTranscoder,
    Mapper,
    Notification,
    find_id_convertor,
    pass_through_convertor,
)
from eventsourcing.utils import resolve_topic

CONTAINERS = (dict, list)
TRANSCODED = b"_type_"
Kind = tuple[type, Callable[[Any], Any], int]  # class, id convertor, class version


class EventDecoder:
    """`decode(position, aggregate id, version, topic, state)`: the domain event."""

    def __init__(self, mapper: Mapper[Any]) -> None:
        self.mapper = mapper
        transcoder = mapper.transcoder
        # Only the plain JSON mapper is read here; any other configuration, the mapper.
        self.plain = (
            type(transcoder) is JSONTranscoder and mapper.cipher is None and not mapper.compressor
        )
        self.names = transcoder.names if isinstance(transcoder, JSONTranscoder) else {}
        self.kinds: dict[tuple[str, type], Kind] = {}  # by topic and the id's type

    def decode(
        self, position: int, originator_id: Any, version: int, topic: str, state: bytes
    ) -> Any:
        event = self._fast(originator_id, version, topic, state) if self.plain else None
        if event is None:
            notification = Notification(
                id=position,
                originator_id=originator_id,
                originator_version=version,
                topic=topic,
                state=state,
            )
            event = self.mapper.to_domain_event(notification)
        return event

    def of(self, notification: Any) -> Any:
        """The event of a notification (or anything shaped like one)."""
        return self.decode(
            notification.id,
            notification.originator_id,
            notification.originator_version,
            notification.topic,
            notification.state,
        )

    def _fast(self, originator_id: Any, version: int, topic: str, state: bytes) -> Any:
        try:
            kind = self.kinds.get((topic, type(originator_id))) or self._kind(topic, originator_id)
            values = self._values(state)
            if values is None:
                return None
            cls, convertor, class_version = kind
            values["originator_id"] = (
                originator_id if convertor is pass_through_convertor else convertor(originator_id)
            )
            values["originator_version"] = version
            from_version = values.pop("class_version", 1)
            while from_version < class_version:
                getattr(cls, f"upcast_v{from_version}_v{from_version + 1}")(values)
                from_version += 1
        except Exception:  # The mapper meets it again, and says what it is.
            return None
        event: Any = object.__new__(cls)
        object.__setattr__(event, "__dict__", values)
        return event

    def _kind(self, topic: str, originator_id: Any) -> Kind:
        cls = resolve_topic(topic)
        convertor = find_id_convertor(cls, type(originator_id))  # type: ignore[arg-type]
        kind = (cls, convertor, getattr(cls, "class_version", 1))
        self.kinds[(topic, type(originator_id))] = kind
        return kind

    def _values(self, state: bytes) -> dict[str, Any] | None:
        """The event's values as the transcoder decodes them, or None for the mapper."""
        values = orjson.loads(state)
        if type(values) is not dict or orjson.dumps(values) != state:
            return None  # not read alike by both parsers, or no event's state
        transcoded = state.count(TRANSCODED)
        if transcoded == 1:
            # One object at most is transcoded: usually the timestamp, at the top.
            stamp = values.get("timestamp")
            if type(stamp) is dict and len(stamp) == 2 and "_type_" in stamp and "_data_" in stamp:
                values["timestamp"] = self.names[stamp["_type_"]].decode(stamp["_data_"])
                return values
        if transcoded and _revive(values, self.names) is not values:
            return None  # the whole object is a transcoded value: no event's state
        return values


@functools.lru_cache(maxsize=8)
def stored_event_decoder(mapper: Mapper[Any]) -> Callable[[int, Any, int, str, bytes], Any]:
    """`decode` for a row as either store's events table gives it: the aggregate id a
    UUID (PostgreSQL) or its text (SQLite), the state bytes or a memoryview. One per
    mapper, so each topic's class is found once."""
    decode = EventDecoder(mapper).decode

    def stored(position: int, originator_id: Any, version: int, topic: str, state: Any) -> Any:
        if not isinstance(originator_id, UUID):
            originator_id = UUID(str(originator_id))
        return decode(position, originator_id, version, topic, bytes(state))

    return stored


def _revive(value: Any, names: dict[str, Any]) -> Any:
    """The value with each {"_type_": name, "_data_": data} object decoded by its
    transcoding, innermost first: what the transcoder's object hook does."""
    if type(value) is list:
        for index, item in enumerate(value):
            if type(item) in CONTAINERS:
                value[index] = _revive(item, names)
        return value
    if type(value) is dict:
        for key, item in value.items():
            if type(item) in CONTAINERS:
                value[key] = _revive(item, names)
        if len(value) == 2 and "_type_" in value and "_data_" in value:
            return names[value["_type_"]].decode(value["_data_"])
    return value
