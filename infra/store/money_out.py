"""The service checks before money leaves (rules.md 5): a withdrawal is saved only
once the wallet's events are each in a seal signed by the service.

An insider with the owner's rights can alter an event in place, or forge one
mid-log with the chain recomputed; verify names it, but only when it runs, and
the service would pay out on the forged balance before then. So before a
withdrawal is saved, the wallet's events since its last signed snapshot (whose
signature vouches for what came before it) are checked against their seals
(infra/store/sealed_reads.py: `first_unsealed`). What has been checked is kept
per wallet and version, so a wallet's events are checked once per process: a
withdrawal usually checks the few events since the last one.

A wallet that fails the check refuses the withdrawal with LogTampered (503
`log_tampered`), naming the position, and nothing is paid.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any
from uuid import UUID

from infra.store.seal import LogTampered
from infra.store.sealed_reads import SealedReads

WALLETS_KEPT_MAX = 100_000  # wallets whose checked version is remembered


class MoneyOutCheck:
    def __init__(self, reads: SealedReads, snapshots: Any) -> None:
        self.reads = reads
        self.snapshots = snapshots  # the signed snapshots' recorder (SealedSnapshots)
        self._checked: OrderedDict[UUID, int] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, wallet: Any) -> None:
        """Refuse (LogTampered) a wallet whose stored events are not all sealed."""
        # The version stored: what the command has applied and not yet saved is its own.
        wallet_id = wallet.id
        version = int(wallet.version) - len(wallet.pending_events)
        with self._lock:
            after = self._checked.get(wallet_id)
        if after is None:
            after = self._signed_snapshot_version(wallet_id, version)
        if after < version:
            position = self.reads.first_unsealed(wallet_id, after, version)
            if position is not None:
                raise LogTampered(self._refusal(wallet_id, position))
        self._remember(wallet_id, version)

    def _signed_snapshot_version(self, wallet_id: UUID, version: int) -> int:
        """The version of the wallet's newest snapshot whose signature holds (the
        snapshots' recorder reads only those), or 0."""
        found = self.snapshots.select_events(wallet_id, lte=version, desc=True, limit=1)
        return int(found[0].originator_version) if found else 0

    def _remember(self, wallet_id: UUID, version: int) -> None:
        with self._lock:
            if self._checked.get(wallet_id, -1) < version:
                self._checked[wallet_id] = version
            self._checked.move_to_end(wallet_id)
            if len(self._checked) > WALLETS_KEPT_MAX:
                self._checked.popitem(last=False)

    @staticmethod
    def _refusal(wallet_id: UUID, position: int) -> str:
        where = f"the event at position {position}" if position else "an event it lacks"
        return (
            f"wallet {wallet_id}: {where} is in no seal of the service's, or not as sealed: "
            "the log was changed behind the service's back (run `casino audit verify`); "
            "nothing was paid"
        )
