"""When a read model cannot apply an event: the projector stops at that event, and
says so where every process can read it.

Nothing after the event is applied (the read models stay exactly as of the event
before), so no read model is ever half right. The failure is kept in memory by the
projector that met it and in `projection_failures`, which readiness and reads look
at (infra/http/routes/health.py, infra/http/reading.py); the row goes once the
read models pass that position (the read model fixed, the projector restarted).
"""

from __future__ import annotations

from projections.base import Cursor

SCHEMA = """
CREATE TABLE IF NOT EXISTS projection_failures (
    projection TEXT PRIMARY KEY,
    position BIGINT NOT NULL,
    read_model TEXT NOT NULL,
    error TEXT NOT NULL
);
"""
ERROR_LENGTH_MAX = 300
# A lost connection or a busy lock is the store's hiccup, not the event's fault: the
# batch is tried again later. Named, not imported: projections/ imports no driver.
TRANSIENT = {"OperationalError", "InterfaceError", "PoolTimeout", "ConnectionError"}


class ProjectionFailed(Exception):
    """The read model `read_model` could not apply the event at `first` (or, for a
    write of many events, one of those from `first` to `last`)."""

    def __init__(self, first: int, last: int, read_model: str, error: str) -> None:
        self.first, self.last = first, last
        self.read_model = read_model
        self.error = error[:ERROR_LENGTH_MAX]
        super().__init__(self.detail)

    @property
    def position(self) -> int:
        return self.first

    @property
    def detail(self) -> str:
        where = f"position {self.first}"
        if self.last != self.first:
            where = f"positions {self.first}-{self.last}"
        return f"read model {self.read_model} cannot apply the event at {where}: {self.error}"


def failed_in(read_model: str, first: int, last: int, error: Exception) -> ProjectionFailed:
    return ProjectionFailed(first, last, read_model, f"{type(error).__name__}: {error}")


def transient(error: Exception) -> bool:
    return any(cls.__name__ in TRANSIENT for cls in type(error).__mro__)


def record(cursor: Cursor, projection: str, failed: ProjectionFailed) -> None:
    cursor.execute(
        "INSERT INTO projection_failures (projection, position, read_model, error)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (projection) DO UPDATE SET"
        " position = excluded.position, read_model = excluded.read_model,"
        " error = excluded.error",
        (projection, failed.position, failed.read_model, failed.error),
    )


def recorded(cursor: Cursor, projection: str) -> ProjectionFailed | None:
    cursor.execute(
        "SELECT position, read_model, error FROM projection_failures WHERE projection = ?",
        (projection,),
    )
    row = cursor.fetchone()
    if row is None:
        return None
    return ProjectionFailed(int(row[0]), int(row[0]), str(row[1]), str(row[2]))


def clear_passed(cursor: Cursor, projection: str, position: int) -> None:
    """Forget a failure the read models have got past."""
    cursor.execute(
        "DELETE FROM projection_failures WHERE projection = ? AND position <= ?",
        (projection, position),
    )
