"""The round trail writes each event's fields as the standard library's JSON encoder
did (projections/round_trail.py: json_text): the audit trail of an old round, and the
rebuild compare of the live read models, see the same text."""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.round_trail import json_text

STANDARD = json.JSONEncoder(default=str, separators=(",", ":"))
TEXT = st.text(alphabet=st.characters(max_codepoint=300))  # ASCII, DEL and beyond
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)  # past what orjson writes
    | st.floats(allow_nan=True, allow_infinity=True)
    | TEXT
    | st.uuids()
    | st.datetimes(timezones=st.just(datetime.UTC))
    | st.decimals(allow_nan=False)
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=500)
@given(st.dictionaries(TEXT, VALUES, max_size=6))
def test_an_event_s_fields_are_written_as_the_standard_library_writes_them(
    data: dict[str, Any],
) -> None:
    assert json_text(data) == STANDARD.encode(data)


def test_the_fields_of_a_card_are_written_compact_and_in_order() -> None:
    data = {"hand": "player", "card": "QC", "position": 2, "chips": [[500, 2]], "by": None}
    assert (
        json_text(data) == '{"hand":"player","card":"QC","position":2,"chips":[[500,2]],"by":null}'
    )
    assert json_text({"name": "Zoë\x7f"}) == STANDARD.encode({"name": "Zoë\x7f"})
    assert json_text({"amount": decimal.Decimal("1.50")}) == '{"amount":"1.50"}'
