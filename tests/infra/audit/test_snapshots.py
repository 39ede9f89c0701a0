"""Nothing besides events moves money (rules.md 5): snapshots and read models.

A snapshot is signed by the service when it writes one; one that is not (forged
with the database's keys) is ignored when an aggregate loads, and `audit verify`
names it, as it names a read model that disagrees with a replay of the wallets.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Snapshot

from infra.audit.verify import verify
from infra.commands.receipt import CommandReceipt
from infra.store import seal as seals
from infra.store.store import Store
from tests.conftest import SEAL_KEY, StoreFactory
from tests.infra.audit.test_verify import Attacker, named
from tests.infra.http.helpers import serving

PUBLIC_KEY = SEAL_KEY.public_key()
MILLION_CENTS = 100_000_000


def deposited(store: Store, player_id: str, deposits: int, cents: int) -> None:
    store.app.register_player(player_id, player_id)
    for _ in range(deposits):
        store.app.deposit(player_id, "real", cents)


def forge_snapshot(store: Store, attacker: Attacker, player_id: str, extra_cents: int) -> Any:
    """A snapshot of the wallet at its current version, with `extra_cents` more."""
    wallet: Any = store.app.wallet(player_id, "real")
    forged: Any = Snapshot.take(wallet)
    forged.state["balance_cents"] += extra_cents
    stored = store.app.mapper.to_stored_event(forged)
    table = "stored_snapshots" if attacker.dialect == "sqlite" else "casino_snapshots"
    stored_id = wallet.id.hex if attacker.dialect == "sqlite" else str(wallet.id)
    attacker.run(
        f"INSERT INTO {table} (originator_id, originator_version, topic, state)"
        " VALUES (?, ?, ?, ?)",
        (stored_id, stored.originator_version, stored.topic, stored.state),
    )
    return wallet


def test_a_forged_wallet_snapshot_neither_shows_nor_pays_and_verify_names_it(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given a wallet of $100.00 and a forged snapshot at its current version with
    # $1,000,000.00 more, read by a server started afresh (no cached wallet)
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 10_000)
    wallet = forge_snapshot(store, attacker, "ann", MILLION_CENTS)
    stores.close(store)
    restarted = stores.open()
    with serving(restarted) as api:
        # Then the wallet shows what its events say, and the withdrawal is refused
        assert api.wallet("ann")["balance"] == "100.00"
        answer = api.post("/v1/players/ann/withdrawals", {"mode": "real", "amount": "1000000.00"})
        assert answer.status_code == 409, answer.text
        assert answer.json()["code"] == "insufficient_funds"
        assert api.wallet("ann")["balance"] == "100.00"
    # And verify names the forgery, with or without the public key
    for key in (None, PUBLIC_KEY):
        report = verify(restarted, None, lambda _: None, public_key=key)
        assert named(
            report.problems,
            f"the snapshot of {wallet.id} at version {wallet.version} does not equal a replay",
            f"balance_cents {10_000 + MILLION_CENTS}, replayed 10000",
            "the service ignores it",
        )


def test_the_service_signs_its_snapshots_and_loads_from_them(
    stores: StoreFactory, store: Store
) -> None:
    # Given a wallet past the snapshot interval (200 events)
    deposited(store, "bob", 200, 100)
    wallet_id = store.app.wallet("bob", "real").id
    # Then its snapshot is signed, is what loading uses, and verify holds
    sealed: Any = store.app.snapshots.recorder  # type: ignore[union-attr]
    raw = sealed.recorder.select_events(wallet_id, desc=True, limit=1)
    assert raw, "no snapshot was written"
    assert seals.split_snapshot(raw[0])[1] is not None  # its signature
    assert sealed.select_events(wallet_id, desc=True, limit=1) != []  # trusted
    restarted = stores.open()
    assert restarted.app.wallet("bob", "real").balance_cents == 200 * 100
    report = verify(restarted, None, lambda _: None, public_key=PUBLIC_KEY)
    assert report.problems == []
    assert report.snapshots >= 1


def test_a_snapshot_signed_with_another_key_is_named_by_the_public_key(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given a snapshot copied exactly from a replay, but not written by the service
    store.app.register_player("cy", "Cy")
    store.app.deposit("cy", "real", 500)
    wallet = forge_snapshot(store, attacker, "cy", 0)
    problems = verify(store, None, lambda _: None, public_key=PUBLIC_KEY).problems
    assert named(
        problems,
        f"the snapshot of {wallet.id} at version {wallet.version} is not signed by the "
        "service's key",
    )


def test_a_wallet_read_model_that_disagrees_with_its_replay_is_named(
    store: Store, attacker: Attacker
) -> None:
    # Given the balances read model edited to show $1,000,000.00 more
    store.app.register_player("dee", "Dee")
    store.app.deposit("dee", "real", 2_500)
    store.projector.catch_up()
    attacker.run(
        "UPDATE wallet_balances SET balance_cents = balance_cents + ? WHERE player_id = ?",
        (MILLION_CENTS, "dee"),
    )
    # Then verify names the wallet and both figures
    assert named(
        verify(store, None, lambda _: None).problems,
        "dee's real wallet replays to balance 2500 and holds 0 cents, the read model says "
        f"{2_500 + MILLION_CENTS} and 0",
    )


def test_verify_counts_command_receipts_among_the_sealed_events(store: Store) -> None:
    # Given commands run with idempotency keys (their answers kept as receipts)
    with serving(store) as api:
        api.player("eve", real="10.00")
    # Then verify counts each receipt, and each is in a seal like any event
    report = verify(store, None, lambda _: None, public_key=PUBLIC_KEY)
    assert report.problems == []
    assert report.receipts == 2


def test_a_forged_receipt_is_named_as_an_event_no_seal_covers(
    store: Store, attacker: Attacker
) -> None:
    # Given a receipt written behind the service's back: a repeated request with its
    # key would be answered "$1,000,000.00 deposited"
    store.app.register_player("fay", "Fay")
    receipt = CommandReceipt("deposit/fay/key-1", "fingerprint", {"amount": "1000000.00"})
    stored = store.app.mapper.to_stored_event(receipt.collect_events()[0])
    stored_id = receipt.id.hex if attacker.dialect == "sqlite" else str(receipt.id)
    attacker.run(
        f"INSERT INTO {attacker.events} (originator_id, originator_version, topic, state)"
        " VALUES (?, ?, ?, ?)",
        (stored_id, 1, stored.topic, stored.state),
    )
    # Then verify names it by position, and counts it among the receipts
    report = verify(store, None, lambda _: None, public_key=PUBLIC_KEY)
    forged = max(row.position for row in attacker.rows())
    assert named(report.problems, f"event at position {forged} ({receipt.id} version 1)", "no seal")
    assert report.receipts == 1


def test_a_ledger_line_whose_running_balance_is_edited_is_named(
    store: Store, attacker: Attacker
) -> None:
    deposited(store, "gus", 3, 1_000)
    store.projector.catch_up()
    attacker.run(
        "UPDATE ledger_entries SET balance_after_cents = ? WHERE player_id = ? AND entry_id = ?",
        (MILLION_CENTS, "gus", 3),
    )
    assert named(
        verify(store, None, lambda _: None).problems,
        f"gus's real wallet: ledger line 3 says balance after {MILLION_CENTS} cents, a replay "
        "of its events 2000",
    )


def test_a_signed_snapshot_replayed_at_a_later_version_or_another_wallet_is_ignored(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given bob's wallet snapshotted by the service at $200.00, then emptied, and ann's
    # wallet of $1.00
    deposited(store, "bob", 200, 100)
    deposited(store, "ann", 1, 100)
    bob: Any = store.app.wallet("bob", "real")
    ann: Any = store.app.wallet("ann", "real")
    sealed: Any = store.app.snapshots.recorder  # type: ignore[union-attr]
    genuine = sealed.recorder.select_events(bob.id, desc=True, limit=1)[0]
    store.app.withdraw("bob", "real", 200 * 100)
    # When the attacker copies the genuine signed row to bob's new version and to ann
    table = "stored_snapshots" if attacker.dialect == "sqlite" else "casino_snapshots"
    for wallet, version in ((bob, bob.version + 1), (ann, ann.version)):
        stored_id = wallet.id.hex if attacker.dialect == "sqlite" else str(wallet.id)
        attacker.run(
            f"INSERT INTO {table} (originator_id, originator_version, topic, state)"
            " VALUES (?, ?, ?, ?)",
            (stored_id, version, genuine.topic, genuine.state),
        )
    # Then a server started afresh shows and pays what the events say
    restarted = stores.open()
    assert restarted.app.wallet("bob", "real").balance_cents == 0
    assert restarted.app.wallet("ann", "real").balance_cents == 100
    # And verify names both copies
    problems = verify(restarted, None, lambda _: None, public_key=PUBLIC_KEY).problems
    for wallet in (bob, ann):
        assert named(problems, f"the snapshot of {wallet.id}", "the service ignores it")
