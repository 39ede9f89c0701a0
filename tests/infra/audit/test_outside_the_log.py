"""Events stored at positions the log never gives (zero, negative) against verify.

The store's positions start at 1, and verify, the projector and the chain check all
read the log from there on. An insider who inserts an event at position 0 or below
is read by the service (an aggregate loads its events by id, whatever their
position) but, unless verify looks below 1, by nothing that checks.
"""

from __future__ import annotations

import hashlib

import pytest

from domain.errors import ReceiptUnsealed
from domain.outcome import Receipt
from infra.audit.verify import verify
from infra.commands.receipt import CommandReceipt
from infra.store.store import Store
from tests.conftest import SEAL_KEY
from tests.infra.audit.test_verify import Attacker, named
from tests.infra.http.helpers import serving

PUBLIC_KEY = SEAL_KEY.public_key()


def forge_receipt(store: Store, attacker: Attacker, key: str, position: int) -> CommandReceipt:
    receipt = CommandReceipt(key, "fingerprint", {"amount": "1000000.00"})
    stored = store.app.mapper.to_stored_event(receipt.collect_events()[0])
    stored_id = receipt.id.hex if attacker.dialect == "sqlite" else str(receipt.id)
    attacker.run(
        f"INSERT INTO {attacker.events} ({attacker.position}, originator_id,"
        " originator_version, topic, state) VALUES (?, ?, ?, ?, ?)",
        (position, stored_id, 1, stored.topic, stored.state),
    )
    return receipt


def fay_with_100_dollars(store: Store) -> None:
    store.app.register_player("fay", "Fay")
    store.app.deposit("fay", "real", 10_000)


def test_a_receipt_forged_below_position_1_is_named(store: Store, attacker: Attacker) -> None:
    # Given an honest sealed store, and a receipt inserted at position -1
    fay_with_100_dollars(store)
    receipt = forge_receipt(store, attacker, "deposit/fay/key-1", -1)
    # When an auditor verifies with the public key
    report = verify(store, None, lambda _: None, public_key=PUBLIC_KEY)
    # Then verify names it by position, not "all holds"
    assert named(report.problems, "position -1", str(receipt.id))


def test_a_deposit_forged_at_position_0_is_named_as_outside_the_log(
    store: Store, attacker: Attacker
) -> None:
    # Given a wallet, and a copy of its deposit inserted at position 0 as its next version
    fay_with_100_dollars(store)
    deposit = attacker.row("casino:Wallet.Deposited", 0)
    version = max(r.version for r in attacker.rows() if r.aggregate == deposit.aggregate) + 1
    attacker.insert_event(deposit, deposit.aggregate, version, at=0)
    # When an auditor verifies
    report = verify(store, None, lambda _: None, public_key=PUBLIC_KEY)
    # Then the forged event itself is named by its position
    assert named(report.problems, "position 0", f"{deposit.aggregate} version {version}")


def test_the_service_never_answers_from_a_receipt_no_seal_covers(
    store: Store, attacker: Attacker
) -> None:
    # Given $100.00 in fay's wallet, and a receipt forged at the tail for the
    # withdrawal a cashier is about to send: "done", so the wallet is never debited
    # while the cash is paid out
    fay_with_100_dollars(store)
    tail = max(row.position for row in attacker.rows())
    forge_receipt(store, attacker, "cashier:withdrawal-7", tail + 1)
    receipt = Receipt(key="cashier:withdrawal-7", fingerprint="fingerprint", render=lambda _: {})
    # When the cashier's withdrawal comes, then it is refused, not answered from it
    with pytest.raises(ReceiptUnsealed):
        store.app.withdraw.with_receipt(receipt, "fay", "real", 10_000)
    # And nothing moved
    assert store.app.wallet("fay", "real").balance_cents == 10_000


def test_a_sealed_receipt_is_still_answered_from(store: Store) -> None:
    # Given a withdrawal made with an idempotency key
    fay_with_100_dollars(store)
    receipt = Receipt(key="cashier:w-8", fingerprint="f", render=lambda _: {"done": True})
    first = store.app.withdraw.with_receipt(receipt, "fay", "real", 2_500)
    # When it is sent again, then the first answer is replayed and nothing more moves
    again = store.app.withdraw.with_receipt(receipt, "fay", "real", 2_500)
    assert (first.replayed, again.replayed, again.answer) == (False, True, {"done": True})
    assert store.app.wallet("fay", "real").balance_cents == 7_500


def test_a_repeat_is_still_answered_while_a_tampered_log_refuses_saves(
    store: Store, attacker: Attacker
) -> None:
    # Given a withdrawal made with a key, then a receipt forged at the tail for another
    fay_with_100_dollars(store)
    receipt = Receipt(key="cashier:w-9", fingerprint="f", render=lambda _: {"done": True})
    first = store.app.withdraw.with_receipt(receipt, "fay", "real", 2_500)
    tail = max(row.position for row in attacker.rows())
    forge_receipt(store, attacker, "cashier:withdrawal-7", tail + 1)
    # When the withdrawal is sent again, then its first answer comes, as before the forgery
    again = store.app.withdraw.with_receipt(receipt, "fay", "real", 2_500)
    assert again.replayed and again.answer == first.answer
    assert store.app.wallet("fay", "real").balance_cents == 7_500


def test_a_receipt_forged_inside_the_sealed_log_is_never_answered_from(
    store: Store, attacker: Attacker
) -> None:
    # Given a receipt forged in the middle of the log, with the seals' tail intact
    # (position 0: the store gives none, so the tail stays sealed)
    fay_with_100_dollars(store)
    forge_receipt(store, attacker, "cashier:withdrawal-7", 0)
    receipt = Receipt(key="cashier:withdrawal-7", fingerprint="fingerprint", render=lambda _: {})
    # When the cashier's withdrawal comes, then it is refused, not answered from it
    with pytest.raises(ReceiptUnsealed):
        store.app.withdraw.with_receipt(receipt, "fay", "real", 10_000)
    assert store.app.wallet("fay", "real").balance_cents == 10_000


def test_an_unsealed_receipt_is_answered_503_receipt_unsealed_over_http(
    store: Store, attacker: Attacker
) -> None:
    # Given a receipt forged at the tail for the service's next withdrawal key
    fay_with_100_dollars(store)
    scope = hashlib.sha256(b"dev-service").hexdigest()[:24]
    tail = max(row.position for row in attacker.rows())
    forge_receipt(store, attacker, f"{scope}:withdrawal-7", tail + 1)
    with serving(store) as api:
        # When the withdrawal is sent with that key
        answer = api.post(
            "/v1/players/fay/withdrawals", {"mode": "real", "amount": "100.00"}, key="withdrawal-7"
        )
        # Then it is refused as a problem, and the wallet keeps its $100.00
        assert answer.status_code == 503, answer.text
        assert answer.json()["code"] == "receipt_unsealed"
        assert api.wallet("fay")["balance"] == "100.00"
