"""The sealed log against an insider with the database's keys (rules.md 5).

Every attack is made on the real store, as in test_verify.py: the immutability
triggers switched off, raw SQL, and the event chain recomputed where that helps
the attacker. The seals' private key is the one thing the attacker lacks.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import itertools
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eventsourcing.persistence import PersistenceError, StoredEvent

from infra.audit.verify import verify
from infra.checkpoints import format as checkpoints
from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.seal import Sealer, public_key_text
from infra.store.store import Store
from infra.witness import UnsignedSeal, WitnessWorker
from tests.conftest import SEAL_KEY, Api, StoreFactory
from tests.infra.audit.test_verify import Attacker, named, play_some_rounds, run_cli

PUBLIC_KEY = SEAL_KEY.public_key()


def problems_of(store: Store, witness: Path | None = None) -> list[str]:
    return verify(store, None, lambda _: None, public_key=PUBLIC_KEY, witness=witness).problems


def seal_rows(attacker: Attacker) -> list[seals.Seal]:
    cursor = attacker.run(f"SELECT {seals.COLUMNS} FROM {seals.TABLE} ORDER BY last_position")
    return [seals.seal_of(row) for row in cursor.fetchall()]


def rechain_from(attacker: Attacker, position: int) -> None:
    """Recompute every link from `position` on, as an attacker covering their tracks."""
    attacker.run(f"DELETE FROM {event_chain.TABLE} WHERE position >= ?", (position,))
    previous = event_chain.GENESIS
    for row in attacker.rows():
        if row.position < position:
            previous = attacker.link_at(row.position)
            continue
        previous = row.link(previous)
        attacker.insert_link(row.position, row.aggregate, row.version, previous)


def insert_at_tail_chained(attacker: Attacker, stores: StoreFactory, aggregate: str) -> int:
    """A forged deposit at the tail, its link made as the store makes links."""
    deposit = attacker.row("casino:Wallet.Deposited", 0)
    version = max(r.version for r in attacker.rows() if r.aggregate == aggregate) + 1
    if stores.backend == "postgres":  # The chain trigger links a plain INSERT by itself.
        attacker.connection.execute(
            "INSERT INTO casino_events (originator_id, originator_version, topic, state)"
            " VALUES (%s, %s, %s, %s)",
            (aggregate, version, deposit.topic, deposit.state),
        )
        return max(r.position for r in attacker.rows())
    position = attacker.insert_event(deposit, aggregate, version)
    forged = next(row for row in attacker.rows() if row.position == position)
    attacker.insert_link(position, aggregate, version, forged.link(attacker.link_at(position - 1)))
    return position


# An honest store.


def test_every_save_is_one_seal_signed_by_the_key_and_verify_holds(store: Store) -> None:
    # Given an honest store's rounds
    play_some_rounds(store)
    # Then every event is in exactly one seal, each signed, chained to the one before
    with store.database.read() as cursor:
        cursor.execute(f"SELECT {seals.COLUMNS} FROM {seals.TABLE} ORDER BY last_position")
        found = [seals.seal_of(row) for row in cursor.fetchall()]
    head = store.app.recorder.max_notification_id()
    assert sum(seal.event_count for seal in found) == head
    assert found[0].previous == seals.GENESIS
    for before, seal in itertools.pairwise(found):
        assert seal.previous == before.digest
        assert seal.first_position == before.last_position + 1
        assert seals.signs(PUBLIC_KEY, seal.signature, seal.digest.encode())
    report = verify(store, None, lambda _: None, public_key=PUBLIC_KEY)
    assert report.problems == []
    assert report.seals == len(found)
    assert report.receipts == 0  # no command here carried an idempotency key


def test_a_multi_event_save_is_sealed_once(store: Store) -> None:
    # When one command saves a player and both wallets
    store.app.register_player("ann", "Ann")
    # Then one seal covers all three events
    with store.database.read() as cursor:
        cursor.execute(f"SELECT first_position, last_position, event_count FROM {seals.TABLE}")
        assert [tuple(row) for row in cursor.fetchall()] == [(1, 3, 3)]


# Inserted, altered, removed, reordered.


def test_a_tail_insert_the_chain_accepts_is_named_by_the_seals(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given rounds played, and a forged deposit at the tail, chained as the store chains
    play_some_rounds(store)
    wallet = attacker.row("casino:Wallet.Deposited", 0).aggregate
    forged = insert_at_tail_chained(attacker, stores, wallet)
    # Then the chain alone sees nothing, but the seals name the position
    problems = problems_of(store)
    assert not named(problems, "chain")
    assert named(
        problems, f"event at position {forged} ({wallet} version", "is in no seal", "inserted"
    )
    answer = run_cli(stores, "audit", "verify", "--public-key", public_key_text(PUBLIC_KEY))
    assert answer.returncode == 1, answer.stdout + answer.stderr
    assert f"event at position {forged} (" in answer.stdout


def test_a_forged_seal_over_a_tail_insert_is_named_by_the_public_key(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given a forged tail event with a seal that follows the last one, but made with
    # a key of the attacker's own
    play_some_rounds(store)
    wallet = attacker.row("casino:Wallet.Deposited", 0).aggregate
    forged = insert_at_tail_chained(attacker, stores, wallet)
    row = next(r for r in attacker.rows() if r.position == forged)
    stored = StoredEvent(row.aggregate, row.version, row.topic, row.state)
    fake = Sealer(Ed25519PrivateKey.generate()).seal(
        [forged], [stored], seal_rows(attacker)[-1].digest
    )
    attacker.run(seals.insert_sql(), fake.row())
    # Then without the public key it looks sealed; with it, the forgery is named
    assert not named(verify(store, None, lambda _: None).problems, "seal")
    assert named(
        problems_of(store),
        f"the seal of positions {forged}..{forged} is not signed by the service's key "
        "(the pinned key, or a key it handed over to): it was forged",
    )


def test_an_altered_event_rechained_and_rebuilt_is_named(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given a deposit rewritten to a bigger amount, the chain recomputed after it and
    # the read models rebuilt from the rewritten log
    play_some_rounds(store)
    deposit = attacker.row("casino:Wallet.Deposited", 0)
    assert b"500000" in deposit.state
    attacker.set_state(deposit.position, deposit.state.replace(b"500000", b"900000"))
    rechain_from(attacker, deposit.position)
    rebuilt = run_cli(stores, "projections", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    # Then the chain and read models agree with the lie, but its seal names the save
    problems = problems_of(store)
    assert not named(problems, "chain")
    seal = next(
        s for s in seal_rows(attacker) if s.first_position <= deposit.position <= s.last_position
    )
    assert named(
        problems,
        f"the events at positions {seal.first_position}..{seal.last_position} are not those sealed",
    )


def test_a_removed_event_with_the_chain_rewritten_is_named(
    store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    removed = attacker.row("casino:Wallet.CommissionCharged")
    attacker.delete_event(removed.position)
    rechain_from(attacker, removed.position)
    seal = next(
        s for s in seal_rows(attacker) if s.first_position <= removed.position <= s.last_position
    )
    assert named(
        problems_of(store),
        f"the events at positions {seal.first_position}..{seal.last_position} are not those "
        f"sealed ({seal.event_count} sealed",
    )


def test_events_reordered_with_the_chain_rewritten_are_named(
    store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    first = attacker.row("casino:Wallet.Deposited", 0)
    second = attacker.row("casino:Wallet.Deposited", 1)
    attacker.swap_positions(first.position, second.position)
    rechain_from(attacker, min(first.position, second.position))
    problems = problems_of(store)
    for row in (first, second):
        assert named(problems, f"positions {row.position}..{row.position} are not those sealed")


# A cut tail.


def test_a_cut_tail_that_leaves_its_seals_is_named(store: Store, attacker: Attacker) -> None:
    # Given the last save's events and links removed (their seal stays)
    play_some_rounds(store)
    last = seal_rows(attacker)[-1]
    attacker.run(
        f"DELETE FROM {attacker.events} WHERE {attacker.position} >= ?", (last.first_position,)
    )
    attacker.run(f"DELETE FROM {event_chain.TABLE} WHERE position >= ?", (last.first_position,))
    assert named(
        problems_of(store),
        f"the events at positions {last.first_position}..{last.last_position}, "
        f"{last.event_count} sealed, were removed",
    )


def test_a_cut_tail_with_its_seals_is_caught_by_the_witness(
    stores: StoreFactory, store: Store, attacker: Attacker, tmp_path: Path
) -> None:
    # Given a witness that noted the latest seal
    play_some_rounds(store)
    witness = tmp_path / "witness.jsonl"
    noted = WitnessWorker(store, witness, seconds=10, events=1).note_if_due(0.0)
    assert noted is not None
    # When the last saves are cut, events, links and seals alike
    cut_from = seal_rows(attacker)[-3].first_position
    for table, column in (
        (attacker.events, attacker.position),
        (event_chain.TABLE, "position"),
        (seals.TABLE, "first_position"),
    ):
        attacker.run(f"DELETE FROM {table} WHERE {column} >= ?", (cut_from,))
    store.projector.catch_up()
    # Then what is left is a whole sealed log: only the witness shows the cut
    assert not named(problems_of(store), "seal")
    problems = problems_of(store, witness)
    assert named(
        problems,
        f"witness line 1: the store holds no seal ending at position {noted.position}",
        "cut or rewritten",
    )
    answer = run_cli(stores, "audit", "verify", "--witness", str(witness))
    assert answer.returncode == 1, answer.stdout + answer.stderr
    assert f"no seal ending at position {noted.position}" in answer.stdout


def test_the_witness_notes_the_latest_seal_when_seconds_or_events_are_due(
    store: Store, tmp_path: Path
) -> None:
    witness = tmp_path / "witness.jsonl"
    worker = WitnessWorker(store, witness, seconds=60, events=3)
    store.app.register_player("ann", "Ann")  # positions 1..3
    assert worker.note_if_due(0.0) is not None  # the first note, at once
    store.app.deposit("ann", "real", 100)  # 4: one event since
    assert worker.note_if_due(1.0) is None
    assert worker.note_if_due(61.0) is not None  # the seconds are due
    for _ in range(3):
        store.app.deposit("ann", "real", 100)  # 5..7: the events are due
    assert worker.note_if_due(62.0) is not None
    lines = [json.loads(line) for line in witness.read_text().splitlines()]
    assert [line["position"] for line in lines] == [3, 4, 7]
    # Counted without a gap, each naming the one before, each signed with the seal key
    assert [line["counter"] for line in lines] == [1, 2, 3]
    assert [line["previous"] for line in lines] == [checkpoints.GENESIS] + [
        line["digest"] for line in lines[:-1]
    ]
    for line in lines:
        assert seals.signs(PUBLIC_KEY, line["signature"], line["digest"].encode())
        assert datetime.datetime.fromisoformat(line["time"]).tzinfo is not None
    assert problems_of(store, witness) == []


def test_keys_new_prints_a_pair_that_signs_and_verifies(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from infra.cli import app as cli

    answer = CliRunner().invoke(cli, ["keys", "new", "--json"])
    assert answer.exit_code == 0, answer.output
    pair = json.loads(answer.output)
    private = seals.parse_private_key(pair["seal_key"])
    assert public_key_text(private.public_key()) == pair["public_key"]
    assert len(base64.b64decode(pair["seal_key"])) == 32


def test_group_commit_seals_each_shared_transaction_once(store: Store) -> None:
    # Given commands from eight threads, whose saves share transactions
    players = [f"p{n}" for n in range(8)]
    for player in players:
        store.app.register_player(player, player)
    committer = store.group_commit
    assert committer is not None
    transactions_before, seals_before = committer.counts.transactions, len(all_seals(store))

    def deposits(player: str) -> None:
        for _ in range(10):
            store.app.deposit(player, "real", 100)

    with ThreadPoolExecutor(len(players)) as pool:
        list(pool.map(deposits, players))
    # Then there is one seal per transaction, not per save, and all holds
    transactions = committer.counts.transactions - transactions_before
    assert transactions < 80  # some saves shared a transaction
    assert len(all_seals(store)) - seals_before == transactions
    assert problems_of(store) == []


def all_seals(store: Store) -> list[seals.Seal]:
    with store.database.read() as cursor:
        cursor.execute(f"SELECT {seals.COLUMNS} FROM {seals.TABLE}")
        return [seals.seal_of(row) for row in cursor.fetchall()]


def two_servers_saving_in_turn(stores: StoreFactory) -> Store:
    """Two servers on one store, each saving after the other (so each finds the log
    moved on since its own last save): eight saves; the first server."""
    first, second = stores.open(), stores.open()
    first.app.register_player("ann", "Ann")
    second.app.register_player("bob", "Bob")
    for _ in range(3):
        first.app.deposit("ann", "real", 100)
        second.app.deposit("bob", "real", 100)
    return first


def assert_one_chain_of_seals(store: Store, saves: int) -> None:
    found = all_seals(store)
    assert len(found) == saves  # one a save
    assert sum(seal.event_count for seal in found) == store.app.recorder.max_notification_id()
    assert problems_of(store) == []


def test_two_servers_on_one_store_keep_one_chain_of_seals(stores: StoreFactory) -> None:
    first = two_servers_saving_in_turn(stores)
    assert_one_chain_of_seals(first, saves=8)


@pytest.mark.postgres
def test_a_writer_that_keeps_losing_the_race_saves_under_the_lock(
    postgres_stores: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (PostgreSQL only: SQLite seals under its write lock, always.)
    # Given no one-trip try left, so every save takes the locked path
    monkeypatch.setattr("infra.store.recorders.SEAL_TRIES_MAX", 0)
    # When two servers save in turn
    first = two_servers_saving_in_turn(postgres_stores)
    # Then every save landed, sealed in one chain
    assert first.app.wallet("ann", "real").balance_cents == 300
    assert_one_chain_of_seals(first, saves=8)


@pytest.mark.postgres
def test_a_writer_that_lost_the_race_once_saves_under_the_lock_without_losing_again(
    postgres_stores: StoreFactory,
) -> None:
    # (PostgreSQL only: SQLite seals under its write lock, always.)
    # When two servers save in turn, each save following the other's
    first = two_servers_saving_in_turn(postgres_stores)
    second = postgres_stores.opened[1]
    # Then each lost the one-trip race once, not on every save: after a lost race the
    # next saves take the locked path straight away
    lost = [store.app.recorder.races_lost for store in (first, second)]  # type: ignore[attr-defined]
    assert lost == [1, 1]
    assert_one_chain_of_seals(first, saves=8)


def test_the_witness_never_notes_a_seal_the_service_did_not_sign(
    store: Store, attacker: Attacker, tmp_path: Path
) -> None:
    # Given a noted store, and a seal row forged far past its head: noted, it would
    # make the witness skip every genuine seal until it is passed
    witness = tmp_path / "witness.jsonl"
    worker = WitnessWorker(store, witness, seconds=60, events=1)
    store.app.register_player("ann", "Ann")
    assert worker.note_if_due(0.0) is not None
    genuine = seal_rows(attacker)[-1]
    attacker.run(
        seals.insert_sql(),
        (10**12, 10**12, 1, genuine.events_digest, genuine.digest, "ab" * 32, "00" * 64, None),
    )
    # When the witness looks, then it refuses to note it, and says why
    with pytest.raises(UnsignedSeal):
        worker.note_if_due(100.0)
    worker_problem = "not signed by the service's key"
    with contextlib.suppress(UnsignedSeal):
        worker.tick()
    assert worker.problem is not None and worker_problem in worker.problem
    assert [json.loads(line)["position"] for line in witness.read_text().splitlines()] == [3]


def test_a_seal_row_holding_no_seal_values_is_named_not_a_crash(
    store: Store, attacker: Attacker
) -> None:
    # Given a sealed store, and a seal row whose values are text where numbers belong
    # (PostgreSQL's types refuse it; SQLite stores any value in any column)
    store.app.register_player("ann", "Ann")
    head = store.app.recorder.max_notification_id() or 0
    forged = (head + 1, "first", "many", "x", "y", "z", "w", None)
    insert = seals.insert_sql()
    if attacker.dialect == "postgres":
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            attacker.run(insert, forged)
        return
    attacker.run(insert, forged)
    # Then verify names it, rather than stopping with a traceback
    assert named(problems_of(store), f"the seal of positions {head + 1}..{head + 1}")


def test_the_service_saves_nothing_on_top_of_an_unsealed_tail(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given ann's $1.00, and a $10,000.00 deposit forged at the tail as her wallet's
    # next event, made as the service makes one (the chain linked as it links)
    forged = forge_deposit_at_tail(store, stores, attacker)
    # When a server started afresh (it reads the forged deposit) is asked to pay it out
    restarted = stores.open()
    assert restarted.app.wallet("ann", "real").balance_cents == 1_000_100
    # (the wallet's events are checked before money leaves it: test_money_out.py)
    with pytest.raises(PersistenceError, match=f"the event at position {forged} is in no seal"):
        restarted.app.withdraw("ann", "real", 1_000_000)
    # and any other save is refused by the store, the forged tail in no seal
    with pytest.raises(PersistenceError, match=f"after position {forged - 1} are in no seal"):
        restarted.app.deposit("ann", "real", 100)
    # Then nothing was saved on top of it, and verify names the forgery
    assert max(row.position for row in attacker.rows()) == forged
    assert named(problems_of(restarted), f"event at position {forged}", "in no seal")


def test_a_command_on_an_unsealed_tail_is_answered_503_log_tampered(
    stores: StoreFactory, store: Store, attacker: Attacker, api: Api
) -> None:
    # Given a deposit forged at the tail of the log the server writes to
    forge_deposit_at_tail(store, stores, attacker)
    # When a client asks that server to pay it out
    answer = api.post("/v1/players/ann/withdrawals", {"mode": "real", "amount": "10000.00"})
    # Then it is told why nothing happened, as a problem with a stable code, not a 500
    assert answer.status_code == 503
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["code"] == "log_tampered"
    assert "in no seal" in answer.json()["detail"]


def test_a_log_changed_behind_the_service_makes_it_not_ready_and_a_fault_does_not(
    stores: StoreFactory, store: Store, attacker: Attacker, api: Api
) -> None:
    # Given a ready server, then a deposit forged at the tail of its log
    assert api.client.get("/v1/health/ready").status_code == 200
    forged = forge_deposit_at_tail(store, stores, attacker)
    # Then readiness says this server cannot save, and why (rules.md 5, 8)
    ready = api.client.get("/v1/health/ready")
    assert (ready.status_code, ready.json()["code"]) == (503, "not_ready")
    assert ready.json()["detail"] == (f"log: the events after position {forged - 1} are in no seal")


def forge_deposit_at_tail(store: Store, stores: StoreFactory, attacker: Attacker) -> int:
    """ann's $1.00, and a $10,000.00 deposit made as the service makes one, inserted at
    the tail as her wallet's next event; its position."""
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 100)
    wallet: Any = store.app.wallet("ann", "real")
    wallet.deposit("forged-1", 1_000_000)
    stored = store.app.mapper.to_stored_event(wallet.collect_events()[-1])
    return insert_stored_at_tail(attacker, stores, stored)


def insert_stored_at_tail(attacker: Attacker, stores: StoreFactory, stored: StoredEvent) -> int:
    aggregate, version = str(stored.originator_id), stored.originator_version
    if stores.backend == "postgres":  # The chain trigger links a plain INSERT by itself.
        attacker.connection.execute(
            "INSERT INTO casino_events (originator_id, originator_version, topic, state)"
            " VALUES (%s, %s, %s, %s)",
            (aggregate, version, stored.topic, stored.state),
        )
        return max(r.position for r in attacker.rows())
    position = attacker.insert_event(stored, aggregate, version)  # type: ignore[arg-type]
    row = next(row for row in attacker.rows() if row.position == position)
    attacker.insert_link(position, aggregate, version, row.link(attacker.link_at(position - 1)))
    return position


def test_a_seal_row_forged_over_a_forged_tail_does_not_let_the_service_save_on_it(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given a deposit forged at the tail and a seal row, not signed by the service,
    # claiming to cover it (the service's role may insert into both tables)
    forged = forge_deposit_at_tail(store, stores, attacker)
    genuine = seal_rows(attacker)[-1]
    attacker.run(
        seals.insert_sql(),
        (forged, forged, 1, "ab" * 32, genuine.digest, "cd" * 32, "00" * 64, None),
    )
    # When a server started afresh is asked to pay the forged money out
    restarted = stores.open()
    with pytest.raises(PersistenceError, match=f"the event at position {forged} is in no seal"):
        restarted.app.withdraw("ann", "real", 1_000_000)
    with pytest.raises(PersistenceError, match=f"ending at position {forged}, is not signed"):
        restarted.app.deposit("ann", "real", 100)
    # Then nothing was saved on top of it
    assert max(row.position for row in attacker.rows()) == forged
