"""The audit tools' reading of the log (infra/audit/pages.py, infra/audit/decoding.py):
every event the casino writes exactly as the library's mapper makes it; a state it
does not write either so too, or refused - never read otherwise than the mapper
reads it; and ids that name aggregates as plain UUIDs do."""

from __future__ import annotations

import copy
import pickle
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import Notification

from infra.audit.decoding import EventDecoder
from infra.audit.pages import AggregateIds, SpeltUUID, log_pages
from infra.store.store import Store
from tests.infra.audit.test_verify import play_some_rounds

CARD = b'{"timestamp":{"_type_":"datetime_iso","_data_":"2026-01-02T03:04:05.000006+00:00"},'


def _as_the_mapper_makes_it(store: Store, event: Any) -> tuple[Any, ...]:
    """An event's class and values, or the error, the types of the values included
    (1, 1.0 and True are equal, their reprs not)."""
    try:
        made = event()
    except Exception as error:
        return ("error", repr(error))
    return (type(made), repr(sorted(vars(made).items())))


def _both(store: Store, topic: str, state: bytes, originator_id: Any = None) -> list[Any]:
    originator_id = originator_id or UUID(int=7)
    decoder = EventDecoder(store.app.mapper)
    notification = Notification(
        id=1, originator_id=originator_id, originator_version=3, topic=topic, state=state
    )
    return [
        _as_the_mapper_makes_it(store, lambda: store.app.mapper.to_domain_event(notification)),
        _as_the_mapper_makes_it(store, lambda: decoder.of(notification)),
    ]


def test_every_event_of_a_store_decodes_as_the_mapper_decodes_it(store: Store) -> None:
    play_some_rounds(store)
    events = [event for page in log_pages(store, store.projector.head()) for event in page]
    assert len(events) > 20
    for event in events:
        mapped, decoded = _both(store, event.topic, event.state, event.originator_id)
        assert decoded == mapped
        assert decoded[0] != "error"


@pytest.mark.parametrize(
    "rest",
    [
        b'"hand":"player","card":"QC","position":2}',
        b'"hand":"player","card":"QC","position":99999999999999999999}',  # past 64 bits
        b'"hand":"player","card":"QC","position":-9223372036854775809}',
        b'"hand":"player","card":"QC","position":2.0}',
        b'"hand":"player","card":"QC","position":1e400}',
        b'"hand":"player","card":"QC","position":NaN}',
        b'"hand":"\\ud800","card":"QC","position":2}',  # a lone surrogate
        b'"hand":"caf\\u00e9","card":"QC","position":2}',  # an escape orjson does not write
        b'"hand":"player","card":"QC","position":2} ',  # spacing
        b'"hand":"player","hand":"banker","card":"QC","position":2}',  # a key twice
        b'"\\u0068and":"player","card":"QC","position":2}',  # a key spelt with an escape
        b'"hand":{"_type_":"decimal_str","_data_":"1.5"},"card":"QC","position":2}',
        b'"hand":[{"_type_":"uuid_hex","_data_":"' + b"a" * 32 + b'"}],"card":"QC"}',
        b'"hand":{"_type_":"nothing","_data_":1},"card":"QC","position":2}',
        b'"hand":"player","card":"QC","position":2,"class_version":5}',
        b'"hand":"player","card":"QC",',  # no JSON
    ],
)
def test_a_tampered_state_decodes_as_the_mapper_has_it_or_is_refused(
    store: Store, rest: bytes
) -> None:
    mapped, decoded = _both(store, "casino:BaccaratRound.CardDealt", CARD + rest)
    assert decoded == mapped or (decoded[0] == "error" and "UnreadableState" in decoded[1])


@pytest.mark.parametrize(
    "rest",
    [
        b'"hand":"player","card":"QC","position":99999999999999999999}',  # past 64 bits
        b'"hand":"player","card":"QC","position":1e400}',
        b'"hand":"player","card":"QC","position":NaN}',
        b'"hand":"\\ud800","card":"QC","position":2}',  # a lone surrogate
        b'"hand":{"_type_":"nothing","_data_":1},"card":"QC","position":2}',
    ],
)
def test_a_state_the_casino_never_writes_is_refused_by_name(store: Store, rest: bytes) -> None:
    decoded = _both(store, "casino:BaccaratRound.CardDealt", CARD + rest)[1]
    assert decoded[0] == "error" and "UnreadableState" in decoded[1]


@pytest.mark.parametrize(
    ("topic", "state"),
    [
        ("casino:BaccaratRound.CardDealt", b'{"_type_":"decimal_str","_data_":"1"}'),
        ("casino:BaccaratRound.CardDealt", b"[1, 2]"),
        ("casino:BaccaratRound.CardDealt", b"\xff"),
        ("casino:BaccaratRound.CardDealt", b'{"timestamp":{"_type_":"datetime_iso","_data_":7}}'),
        ("casino:NoSuchThing.Happened", CARD + b'"hand":"player"}'),
    ],
)
def test_a_state_no_event_has_fails_as_with_the_mapper(
    store: Store, topic: str, state: bytes
) -> None:
    mapped, decoded = _both(store, topic, state)
    assert mapped[0] == decoded[0] == "error"


def test_an_id_read_from_the_log_is_the_plain_uuid_in_all_but_its_type() -> None:
    plain = UUID("e2f8cd65-d1e9-4d70-8257-fcb2421a7e88")
    spelt, text = AggregateIds().of("E2F8CD65D1E94D708257FCB2421A7E88")  # SQLite may spell it so
    assert isinstance(spelt, SpeltUUID)
    assert (spelt == plain, plain == spelt, hash(spelt) == hash(plain)) == (True, True, True)
    assert str(spelt) == text == str(plain) and f"{spelt}" == f"{plain}"
    assert repr(spelt) == repr(plain)  # errors that show ids read alike
    assert {plain: 1}[spelt] == 1 and not spelt < plain
    assert copy.deepcopy(spelt) == plain and copy.copy(spelt) == plain
    assert type(pickle.loads(pickle.dumps(spelt))) is UUID
