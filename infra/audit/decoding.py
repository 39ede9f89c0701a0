"""The log's events decoded for the audit tools: what the library's mapper makes, faster.

verify and a rebuild decode every event. The mapper parses each event's JSON with
the standard library, calling its transcoder's object hook on every object, then
finds the event's class and id convertor by topic: about 38,000 instructions an
event (the log of benchmarks/bench_audit.py, counted with callgrind).
`EventDecoder` parses with orjson, revives the one transcoded value nearly every
event holds (its timestamp) directly, and keeps each topic's class: about 22,000.
It is the audit tools' one decoder: nothing is handed to the mapper.

A state is read only when orjson writes the values it read back as exactly the
stored bytes - what it does for every event this casino writes (compact, keys in
order, no floats). Then both parsers read the same values: every token is then
orjson's own canonical spelling of the value it read, which the standard library
reads as that value too. Any other state (one orjson does not read or spells
otherwise: NaN, 1e400, an integer past 64 bits, an escape or spacing of another
writer, bytes that are not UTF-8), one that is not an object, or one holding a
transcoding the mapper does not know, is refused (`UnreadableState`): verify
names the event as one that cannot be read, where the mapper might have read it
another way. The service never writes one: the chain and the seals name it too.
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
    find_id_convertor,
    pass_through_convertor,
)
from eventsourcing.utils import resolve_topic

CONTAINERS = (dict, list)
TRANSCODED = b"_type_"
Kind = tuple[type, Callable[[Any], Any], int]  # class, id convertor, class version


class UnreadableState(ValueError):
    """An event's stored bytes that are no state the casino writes."""


class EventDecoder:
    """`decode(position, aggregate id, version, topic, state)`: the domain event."""

    def __init__(self, mapper: Mapper[Any]) -> None:
        transcoder = mapper.transcoder
        if type(transcoder) is not JSONTranscoder or mapper.cipher or mapper.compressor:
            raise ValueError("the audit tools read the events of the plain JSON mapper only")
        self.names = transcoder.names
        self.kinds: dict[tuple[str, type], Kind] = {}  # by topic and the id's type

    def decode(
        self, position: int, originator_id: Any, version: int, topic: str, state: bytes
    ) -> Any:
        cls, convertor, class_version = self.kinds.get((topic, type(originator_id))) or self._kind(
            topic, originator_id
        )
        values = self._values(state)
        values["originator_id"] = (
            originator_id if convertor is pass_through_convertor else convertor(originator_id)
        )
        values["originator_version"] = version
        from_version = values.pop("class_version", 1)
        while from_version < class_version:
            getattr(cls, f"upcast_v{from_version}_v{from_version + 1}")(values)
            from_version += 1
        event: Any = object.__new__(cls)
        object.__setattr__(event, "__dict__", values)
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

    def _kind(self, topic: str, originator_id: Any) -> Kind:
        cls = resolve_topic(topic)
        convertor = find_id_convertor(cls, type(originator_id))  # type: ignore[arg-type]
        kind = (cls, convertor, getattr(cls, "class_version", 1))
        self.kinds[(topic, type(originator_id))] = kind
        return kind

    def _values(self, state: bytes) -> dict[str, Any]:
        """The event's values as the transcoder decodes them; UnreadableState if the
        bytes are no state the casino writes."""
        try:
            values = orjson.loads(state)
        except orjson.JSONDecodeError as error:
            raise UnreadableState(f"its state is not JSON the casino writes: {error}") from None
        if type(values) is not dict:
            raise UnreadableState("its state is not a JSON object")
        if orjson.dumps(values) != state:
            # Not orjson's own spelling of what it read: the standard library might read
            # other values (an integer past 64 bits orjson makes a float, say).
            raise UnreadableState(
                "its state is not JSON as the casino writes it (compact, keys in order, "
                "integers of at most 64 bits)"
            )
        transcoded = state.count(TRANSCODED)
        if transcoded == 1:
            # One object at most is transcoded: usually the timestamp, at the top.
            stamp = values.get("timestamp")
            if type(stamp) is dict and len(stamp) == 2 and "_type_" in stamp and "_data_" in stamp:
                values["timestamp"] = self._revived(stamp)
                return values
        if transcoded:
            values = _revive(values, self._revived)
            if type(values) is not dict:
                raise UnreadableState("its state is a transcoded value, not an event's")
        return values

    def _revived(self, value: dict[str, Any]) -> Any:
        transcoding = self.names.get(value["_type_"])
        if transcoding is None:
            raise UnreadableState(f"its state holds an unknown transcoding {value['_type_']!r}")
        return transcoding.decode(value["_data_"])


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


def _revive(value: Any, revived: Callable[[dict[str, Any]], Any]) -> Any:
    """The value with each {"_type_": name, "_data_": data} object decoded by its
    transcoding, innermost first: what the transcoder's object hook does."""
    if type(value) is list:
        for index, item in enumerate(value):
            if type(item) in CONTAINERS:
                value[index] = _revive(item, revived)
        return value
    if type(value) is dict:
        for key, item in value.items():
            if type(item) in CONTAINERS:
                value[key] = _revive(item, revived)
        if len(value) == 2 and "_type_" in value and "_data_" in value:
            return revived(value)
    return value
