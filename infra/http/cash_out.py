"""Money that leaves waits for the witness (rules.md 5, 8).

A withdrawal is answered 201 only once a checkpoint covering its save has been
acknowledged by the witness (infra/witness.py: `WitnessWorker.cover`), so no
acknowledged cash-out can be cut from the log's tail without verify naming the
cut; the upstream cashier pays out only on a 201. With the witness known to be
unreachable, a withdrawal is refused before anything is saved (503
`witness_unavailable`, the balance unchanged). If the witness fails after the
save, the answer is the same 503, the debit stands, and a retry with the same
Idempotency-Key once the witness is back returns the 201.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import Request

from domain.outcome import Outcome
from infra.checkpoints.witnesses import WitnessFailure
from infra.http.problems import Problem
from infra.store.faults import remaining
from infra.witness import WitnessWorker

ANSWER_MARGIN_SECONDS = 0.3  # of the request's deadline, kept to answer in time
NOT_WITNESSED = (
    "the withdrawal is saved (the debit stands) but the witness has not acknowledged a "
    "checkpoint covering it, so it is not to be paid out: retry with the same "
    "Idempotency-Key once the witness is back, and the answer is then 201"
)


def witness_before_cash_out(request: Request) -> WitnessWorker | None:
    """The server's witness, once it is known to answer; 503 before anything is saved
    when it is known not to. None: a server without one (tests, tools)."""
    witness: WitnessWorker | None = getattr(request.app.state, "witness", None)
    if witness is not None and witness.problem is not None:
        raise Problem(
            503,
            "witness_unavailable",
            f"the witness does not acknowledge checkpoints ({witness.problem[:200]}): no "
            "money leaves until it does; nothing was done",
        )
    return witness


async def witnessed(witness: WitnessWorker | None, outcome: Outcome[Any]) -> None:
    """Return once the witness has acknowledged a checkpoint covering the save (or, for
    a repeat, the log's head then, which is later still); 503 otherwise."""
    if witness is None:
        return
    covering = asyncio.get_running_loop().run_in_executor(None, witness.cover, outcome.position)
    # Its failure, should it come after we answered, is the witness worker's to see.
    covering.add_done_callback(lambda done: done.cancelled() or done.exception())
    budget = max(0.0, remaining() - ANSWER_MARGIN_SECONDS)
    try:
        await asyncio.wait_for(asyncio.shield(covering), budget)
    except (TimeoutError, WitnessFailure):
        raise Problem(503, "witness_unavailable", NOT_WITNESSED) from None
