"""Dates and instants in a query, as api.md writes them: `YYYY-MM-DD`, or an ISO 8601
timestamp where a route documents one. Never a bare number: pydantic would read
`to=0` as the Unix epoch, a report of 1970 for a client's typo."""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any

from pydantic import BeforeValidator

DAY_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")
INSTANT_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\S+")


def _day(value: Any) -> Any:
    if isinstance(value, str) and DAY_PATTERN.fullmatch(value) is None:
        raise ValueError("a date is written YYYY-MM-DD")
    return value


def _instant(value: Any) -> Any:
    if isinstance(value, str) and INSTANT_PATTERN.fullmatch(value) is None:
        raise ValueError("an instant is an ISO 8601 timestamp with a zone: 2026-01-31T12:00Z")
    return value


Day = Annotated[datetime.date, BeforeValidator(_day)]
Instant = Annotated[datetime.datetime, BeforeValidator(_instant)]
