"""Reading a read model: catch the projector up first, so every answer includes
every acknowledged command (read-your-writes), then query in one transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import Request

from projections.base import Cursor


@contextmanager
def projected(request: Request) -> Iterator[Cursor]:
    store = request.app.state.store
    store.projector.catch_up()
    with store.database.read() as cursor:
        yield cursor
