"""What the seam tells of the commands it runs, for metrics: infra/metrics.py passes an
observer in (`CommandSeam.observe`); none is told by default."""

from __future__ import annotations

from typing import Protocol


class CommandObserver(Protocol):
    """Told what the seam does, for metrics; infra/metrics.py passes one in
    (`CommandSeam.observe`)."""

    def finished(self, command: str, outcome: str) -> None:
        """A command ended: `applied`, `replayed`, `refused` (a domain error),
        `exhausted` (lost every optimistic-concurrency race) or `failed`."""
        ...

    def retried(self, command: str, reason: str) -> None:
        """A command runs again: `conflict` (another command saved first), `stale`
        (it decided on a cached aggregate that had moved on) or `connection`."""
        ...

    def saved(self, events: int) -> None:
        """One atomic save wrote this many events (its receipt is not one of them)."""
        ...

    def snapshot_failed(self) -> None: ...


class Unobserved:
    def finished(self, command: str, outcome: str) -> None:
        pass

    def retried(self, command: str, reason: str) -> None:
        pass

    def saved(self, events: int) -> None:
        pass

    def snapshot_failed(self) -> None:
        pass
