"""The command machinery: what runs the application's commands and answers its queries
without being the model. The seam (seam.py: retries, receipts, one atomic save) and
its parts: receipt and receipt_answers (idempotency), cache (the commands' cache),
fresh_reads (what queries load), unit (the unit of work), save, observer.

The application is not their subclass: the store builds a `CommandSeam(app)`, which
hands itself over as `app.commands` (domain/commands.py). `with_commands` builds
both, for tests and tools on the in-memory store.
"""

from __future__ import annotations

from eventsourcing.utils import EnvType

from domain.application import CasinoApplication
from domain.queries import Clock
from domain.settings import GameSettings
from domain.unit import SecretBox
from infra.commands.seam import CommandSeam, Sleep


def with_commands(
    env: EnvType | None = None,
    games: GameSettings | None = None,
    sleep: Sleep | None = None,
    clock: Clock | None = None,
    box: SecretBox | None = None,
) -> CasinoApplication:
    """An application and the seam that runs its commands (`app.commands`)."""
    app = CasinoApplication(env, games, clock)
    CommandSeam(app, sleep=sleep, box=box)
    return app
