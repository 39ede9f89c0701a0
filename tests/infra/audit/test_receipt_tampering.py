"""Receipts changed behind the service's back (infra/store/receipts.py): a forged or
altered answer is never replayed, and `casino audit verify` names every receipt
inserted, removed or changed, by the save it belongs to."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from domain.errors import ReceiptUnsealed
from domain.ids import receipt_uuid
from domain.outcome import Receipt
from infra.store import receipts
from infra.store import seal as seals
from infra.store.store import Store
from tests.infra.audit.test_seals import problems_of
from tests.infra.audit.test_verify import Attacker, named


def remembered(key: str) -> Receipt[Any]:
    return Receipt(key, "fingerprint", lambda movement: {"id": movement.transaction_id})


def deposit(store: Store, key: str, cents: int = 500) -> Any:
    return store.app.deposit.with_receipt(remembered(key), "ann", "real", cents)


@pytest.fixture
def ann(store: Store) -> Store:
    store.app.register_player("ann", "Ann")
    return store


def stored_id(attacker: Attacker, key: str) -> str:
    key_id = receipt_uuid(key)
    return key_id.hex if attacker.dialect == "sqlite" else str(key_id)


def position_of(attacker: Attacker, key: str) -> int:
    cursor = attacker.run(
        f"SELECT position FROM {receipts.TABLE} WHERE key_id = ?", (stored_id(attacker, key),)
    )
    return int(cursor.fetchone()[0])


def test_an_answer_changed_in_place_is_not_replayed_and_verify_names_it(
    ann: Store, attacker: Attacker
) -> None:
    # Given a receipt whose answer an insider rewrote, hash and all
    deposit(ann, "k1")
    forged = b'{"id":"forged"}'
    attacker.run(
        f"UPDATE {receipts.TABLE} SET answer = ?, answer_sha256 = ? WHERE key_id = ?",
        (forged, receipts.hashlib.sha256(forged).hexdigest(), stored_id(attacker, "k1")),
    )
    # Then the service does not answer from it, and does nothing
    with pytest.raises(ReceiptUnsealed):
        deposit(ann, "k1")
    assert ann.app.wallet("ann", "real").balance_cents == 500
    # And verify names its save
    position = position_of(attacker, "k1")
    assert named(problems_of(ann), f"the save ending at position {position}")


def test_an_answer_changed_without_its_hash_is_named_too(ann: Store, attacker: Attacker) -> None:
    deposit(ann, "k1")
    attacker.run(f"UPDATE {receipts.TABLE} SET answer = ?", (b'{"id":"forged"}',))
    with pytest.raises(ReceiptUnsealed):
        deposit(ann, "k1")
    assert named(problems_of(ann), "holds an answer other than the one it was given")


def test_a_receipt_removed_is_named_by_its_seal(ann: Store, attacker: Attacker) -> None:
    deposit(ann, "k1")
    position = position_of(attacker, "k1")
    attacker.run(f"DELETE FROM {receipts.TABLE} WHERE key_id = ?", (stored_id(attacker, "k1"),))
    assert named(problems_of(ann), f"the save ending at position {position} are not the ones")


def test_a_forged_receipt_is_never_replayed_and_verify_names_it(
    ann: Store, attacker: Attacker
) -> None:
    # Given an answer planted for a key the caller will send, so that its withdrawal
    # would be "replayed" as done without being done
    deposit(ann, "k1")
    position = position_of(attacker, "k1")
    answer = b'{"id":"planted"}'
    key_id = receipt_uuid("planted")
    attacker.run(
        f"INSERT INTO {receipts.TABLE} ({receipts.INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (key_id.hex if attacker.dialect == "sqlite" else str(key_id), "planted", "fingerprint",
         answer, receipts.hashlib.sha256(answer).hexdigest(), 0, position),
    )  # fmt: skip
    with pytest.raises(ReceiptUnsealed):
        deposit(ann, "planted")
    assert ann.app.wallet("ann", "real").balance_cents == 500
    assert named(problems_of(ann), str(uuid.UUID(str(key_id))))


def plant(attacker: Attacker, key: str, position: int, fingerprint: str = "fingerprint") -> None:
    """A receipt row for `key` that the service never wrote, at `position`."""
    answer = b'{"id":"planted"}'
    attacker.run(
        f"INSERT INTO {receipts.TABLE} ({receipts.INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (stored_id(attacker, key), key, fingerprint, answer,
         receipts.hashlib.sha256(answer).hexdigest(), int(time.time() * 1000), position),
    )  # fmt: skip


@pytest.mark.parametrize("position", [0, -7])
def test_a_receipt_planted_before_the_first_position_is_never_replayed_and_named(
    ann: Store, attacker: Attacker, position: int
) -> None:
    # The log never gives such a position, so no seal can be asked for it: it is not
    # "from before sealing began", it is no receipt of ours.
    plant(attacker, "planted", position)
    with pytest.raises(ReceiptUnsealed):
        deposit(ann, "planted")
    assert ann.app.wallet("ann", "real").balance_cents == 0
    assert named(problems_of(ann), str(receipt_uuid("planted")))


def test_a_receipt_planted_in_a_sealed_store_with_no_event_yet_is_never_replayed(
    store: Store, attacker: Attacker
) -> None:
    # No seal yet does not mean a store older than the seals: there is no event at all.
    plant(attacker, "planted", 1)
    with pytest.raises(ReceiptUnsealed):
        deposit(store, "planted")
    assert named(problems_of(store), str(receipt_uuid("planted")))


def test_a_key_id_spelled_another_way_is_named_by_its_seal(ann: Store, attacker: Attacker) -> None:
    # SQLite keeps a key id as text: spelled another way (capitals) it names the same
    # UUID, but the service's lookup misses it and would run the command again, as
    # after a deletion; verify must name it as one. PostgreSQL's uuid column keeps one
    # spelling only, so there the receipt still answers.
    deposit(ann, "k1")
    position = position_of(attacker, "k1")
    respelled = receipt_uuid("k1").hex.upper()
    attacker.run(
        f"UPDATE {receipts.TABLE} SET key_id = ? WHERE position = ?", (respelled, position)
    )
    if attacker.dialect == "sqlite":
        assert named(problems_of(ann), f"the save ending at position {position} are not the ones")
    else:
        assert problems_of(ann) == [] and deposit(ann, "k1").replayed


def test_a_bar_moved_between_the_key_and_the_fingerprint_is_named(
    ann: Store, attacker: Attacker
) -> None:
    # A key may hold "|", the separator of a receipt's line: moving the part after it
    # into the fingerprint keeps the line's bytes, so the line must refuse such a field.
    deposit(ann, "k|x")
    position = position_of(attacker, "k|x")
    attacker.run(
        f"UPDATE {receipts.TABLE} SET scoped_key = 'k', fingerprint = 'x|fingerprint'"
        " WHERE position = ?",
        (position,),
    )
    assert named(problems_of(ann), f"the save ending at position {position} are not the ones")


def test_a_receipt_made_never_to_expire_is_not_replayed_and_named(
    ann: Store, attacker: Attacker
) -> None:
    # recorded_ms is in the seal's line: moved on, it would keep an answer forever.
    deposit(ann, "k1")
    position = position_of(attacker, "k1")
    attacker.run(f"UPDATE {receipts.TABLE} SET recorded_ms = recorded_ms + 10 * 86400000")
    with pytest.raises(ReceiptUnsealed):
        deposit(ann, "k1")
    assert named(problems_of(ann), f"the save ending at position {position} are not the ones")


def test_receipts_swapped_between_two_saves_are_not_replayed_and_both_are_named(
    ann: Store, attacker: Attacker
) -> None:
    deposit(ann, "k1")
    deposit(ann, "k2", 700)
    one, two = position_of(attacker, "k1"), position_of(attacker, "k2")
    attacker.run(
        f"UPDATE {receipts.TABLE} SET position = CASE WHEN position = ? THEN ? ELSE ? END",
        (one, two, one),
    )
    for key in ("k1", "k2"):
        with pytest.raises(ReceiptUnsealed):
            deposit(ann, key)
    problems = problems_of(ann)
    for position in (one, two):
        assert named(problems, f"the save ending at position {position} are not the ones")
    assert ann.app.wallet("ann", "real").balance_cents == 1200


def test_a_seal_naming_other_receipts_is_not_trusted_and_named(
    ann: Store, attacker: Attacker
) -> None:
    deposit(ann, "k1")
    position = position_of(attacker, "k1")
    attacker.run(
        f"UPDATE {seals.TABLE} SET receipts_digest = ? WHERE last_position = ?",
        ("0" * 64, position),
    )
    with pytest.raises(ReceiptUnsealed):
        deposit(ann, "k1")
    assert named(problems_of(ann), f"the seal of positions {position}..{position} does not hash")
