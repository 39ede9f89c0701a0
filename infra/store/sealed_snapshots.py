"""Snapshots, signed as they are written and trusted only when their signature holds
(infra/store/seal.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import StoredEvent

from infra.logs import get_logger
from infra.store import seal as seals
from infra.store.seal import Sealer

log = get_logger("casino.store")


class SealedSnapshots:
    """The snapshot store's recorder, wrapped: each snapshot written is signed, and one
    read whose signature fails (forged, or written before sealing) is ignored and
    logged, so the aggregate loads from its events. Without a sealer no snapshot is
    written or trusted: they only ever speed loading up."""

    def __init__(self, recorder: Any, sealer: Sealer | None) -> None:
        self.recorder = recorder
        self.sealer = sealer

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Any:
        if self.sealer is None:
            return None
        signed = [self.sealer.sign_snapshot(stored) for stored in stored_events]
        return self.recorder.insert_events(signed, **kwargs)

    def select_events(self, originator_id: Any, **kwargs: Any) -> list[StoredEvent]:
        if self.sealer is None:
            return []
        found = []
        for stored in self.recorder.select_events(originator_id, **kwargs):
            snapshot = seals.snapshot_signed(self.sealer.chain_keys, stored)
            if snapshot is None:
                log.warning(
                    "snapshot_ignored",
                    originator_id=str(stored.originator_id),
                    originator_version=stored.originator_version,
                    reason="its seal does not verify: forged, or written before sealing",
                )
                continue
            found.append(snapshot)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.recorder, name)
