"""Background workers of the server process."""

from __future__ import annotations

import threading

from infra.logs import get_logger
from projections.runner import Projector

log = get_logger("casino.worker")
PROJECTOR_POLL_SECONDS = 1.0


class ProjectorWorker:
    """Keeps the read models close behind the event log (readers also catch up on demand).

    Polling works on both stores; SQLite has no notifications to subscribe to.
    """

    def __init__(self, projector: Projector, interval_seconds: float = PROJECTOR_POLL_SECONDS):
        self.projector = projector
        self.interval_seconds = interval_seconds
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="projector", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.projector.catch_up()
            except Exception:
                log.exception("projector_failed")
            self._stopping.wait(self.interval_seconds)
