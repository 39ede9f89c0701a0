"""The service checks before money leaves (rules.md 5): a withdrawal from a wallet
whose stored events the seals do not vouch for is refused, 503 `log_tampered`
naming the position, and pays nothing. On both stores, against the insider of
tests/infra/audit/test_verify.py (the owner's rights, the chain recomputed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from domain.errors import SeedNotSealed
from domain.shoe import commitment
from infra.store.seal import LogTampered
from infra.store.store import Store
from tests.conftest import StoreFactory
from tests.infra.audit.test_seals import rechain_from
from tests.infra.audit.test_verify import Attacker

HONEST_CENTS = 500_000


def funded(store: Store) -> None:
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 100)
    store.app.deposit("ann", "real", HONEST_CENTS)  # balance after: 500100


def test_a_deposit_altered_in_place_pays_nothing_out(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given ann's $5,000.00 deposit rewritten to $9,000.00 (its amount, postings and
    # balance after, so that it replays), the chain recomputed
    funded(store)
    deposit = attacker.row("casino:Wallet.Deposited", 1)
    altered = deposit.state.replace(b"500000", b"900000").replace(b"500100", b"900100")
    attacker.set_state(deposit.position, altered)
    rechain_from(attacker, deposit.position)
    # When a server started afresh (it reads the altered deposit) is asked to pay
    restarted = stores.open()
    assert restarted.app.wallet("ann", "real").balance_cents == 900_100
    top = restarted.app.recorder.max_notification_id()
    with pytest.raises(LogTampered, match=f"the event at position {deposit.position}"):
        restarted.app.withdraw("ann", "real", 800_000)
    # Then nothing was paid, and deposits still land
    assert restarted.app.recorder.max_notification_id() == top
    restarted.app.deposit("ann", "real", 100)


def test_a_deposit_forged_mid_log_pays_nothing_out(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given a $10,000.00 deposit made as the service makes one, as ann's wallet's next
    # version, slotted into the middle of the log with the chain recomputed after it
    funded(store)
    wallet: Any = store.app.wallet("ann", "real")
    wallet.deposit("forged-1", 1_000_000)
    forged = store.app.mapper.to_stored_event(wallet.collect_events()[-1])
    middle = attacker.row("casino:Wallet.Deposited", 0).position + 1
    attacker.make_room_at(middle)
    attacker.run(
        f"INSERT INTO {attacker.events} ({attacker.position}, originator_id, originator_version,"
        " topic, state) VALUES (?, ?, ?, ?, ?)",
        (middle, stored_id(attacker, forged.originator_id), forged.originator_version,
         forged.topic, forged.state),
    )  # fmt: skip
    rechain_from(attacker, middle)
    # When a server started afresh is asked to pay the forged money out
    restarted = stores.open()
    assert restarted.app.wallet("ann", "real").balance_cents == 1_500_100
    with pytest.raises(LogTampered, match="in no seal of the service's, or not as sealed"):
        restarted.app.withdraw("ann", "real", 800_000)


def stored_id(attacker: Attacker, originator_id: Any) -> str:
    return originator_id.hex if attacker.dialect == "sqlite" else str(originator_id)


def test_an_honest_wallet_pays_out_and_its_checked_events_are_not_read_again(
    store: Store,
) -> None:
    funded(store)
    reads: Any = store.commands.sealed
    looked: list[int] = []
    first_unsealed = reads.first_unsealed
    reads.first_unsealed = lambda *args: looked.append(1) or first_unsealed(*args)
    store.app.withdraw("ann", "real", 100)
    store.app.withdraw("ann", "real", 100)  # only the first withdrawal's own event is new
    assert store.app.wallet("ann", "real").balance_cents == HONEST_CENTS - 100
    assert len(looked) == 2
    store.app.withdraw("ann", "real", 100)
    assert len(looked) == 3


def test_an_open_round_whose_seed_was_put_in_clear_is_neither_dealt_nor_paid(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given ann's tie bet on an open house round, then its Opened event rewritten
    # (the owner's rights, the chain recomputed) to a seed in clear the insider chose
    funded(store)
    round_ = store.app.open_house_round("ann", "real").result
    assert round_ is not None
    store.app.place_bet(str(round_.id), "tie", 100)
    opened = attacker.row("casino:Coup.Opened")
    state = json.loads(opened.state)
    chosen = "00" * 32
    state |= {"seed": chosen, "seed_commitment": commitment(chosen), "sealed_secrets": None,
              "shoe_prefix": []}  # fmt: skip
    attacker.set_state(opened.position, json.dumps(state).encode())
    rechain_from(attacker, opened.position)
    # When a server started afresh is asked to deal it
    restarted = stores.open()
    balance = restarted.app.wallet("ann", "real").balance_cents
    with pytest.raises(SeedNotSealed, match="its seed is stored in clear"):
        restarted.app.deal(str(round_.id))
    # Then nothing was dealt or paid
    assert restarted.app.wallet("ann", "real").balance_cents == balance
