"""`casino audit acknowledge`: the operator's recorded way back from a log changed
behind the service's back (rules.md 5, "Fail closed, and only when there is a reason").

For each tail the service refuses (events past the last seal, a seal it did not
sign, events cut from the end), as tests/infra/audit/test_seals.py makes them: the
service answers 503 `log_tampered` and verify fails; the operator acknowledges; the
service saves again, verify passes and names the acknowledgment, and a tampering
after it is refused as before.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from eventsourcing.persistence import StoredEvent
from typer.testing import CliRunner, Result

from domain.significant import LOG_ACKNOWLEDGED
from infra.audit.acknowledge import Unchained, writer
from infra.audit.acknowledge import acknowledge as acknowledge_tail
from infra.audit.verify import verify
from infra.cli import app as cli
from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.seal import Sealer, private_key_text, public_key_text
from infra.store.store import Store, open_store
from infra.witness import WitnessWorker
from tests.conftest import OPERATOR, POSTGRES_URL, SEAL_KEY, Api, StoreFactory, every_store_event
from tests.infra.audit.test_seals import forge_deposit_at_tail, insert_stored_at_tail, seal_rows
from tests.infra.audit.test_verify import Attacker
from tests.infra.store import test_least_privilege as least_privilege

PUBLIC_KEY = public_key_text(SEAL_KEY.public_key())
REASON = "ops-123: forged deposit found at the tail; reversed by a withdrawal"


def casino(stores: StoreFactory, *arguments: str, **settings: str) -> Result:
    """The `casino` command on the test's store, with the service's seal key."""
    env = {
        "CASINO_DATABASE_URL": stores.url,
        "CASINO_POSTGRES_SCHEMA": stores.schema,
        "CASINO_SEAL_KEY": private_key_text(SEAL_KEY),
        **settings,
    }
    return CliRunner().invoke(cli, list(arguments), env=env)


def acknowledge(stores: StoreFactory, reason: str = REASON) -> Result:
    return casino(stores, "audit", "acknowledge", "--reason", reason)


def verified(stores: StoreFactory, key: str = PUBLIC_KEY) -> tuple[int, dict[str, Any]]:
    answer = casino(stores, "audit", "verify", "--public-key", key, "--json")
    return answer.exit_code, json.loads(answer.stdout)


def refused(api: Api) -> Any:
    """A deposit the service is asked for, which it refuses as the log is tampered;
    the answer."""
    answer = api.post("/v1/players/ann/deposits", {"mode": "real", "amount": "5.00"})
    assert (answer.status_code, answer.json()["code"]) == (503, "log_tampered")
    return answer


def refused_and_named(api: Api, stores: StoreFactory, discrepancy: str) -> dict[str, Any]:
    """Every command refused, and verify failing on `discrepancy`; its report."""
    refused(api)
    return named(stores, discrepancy)


def named(stores: StoreFactory, discrepancy: str, key: str = PUBLIC_KEY) -> dict[str, Any]:
    """Verify failing on `discrepancy`, under `key`; its report."""
    status, report = verified(stores, key)
    assert status == 1
    assert any(discrepancy in problem for problem in report["discrepancies"]), report
    return report


def log_top(attacker: Attacker) -> int:
    return max(row.position for row in attacker.rows())


def guards_off_again(stores: StoreFactory) -> Attacker:
    """The insider again, after a command opened the store: on SQLite that makes the
    immutability triggers anew. (Closed with the test's store files.)"""
    return Attacker(stores)


# The three tails, each as an insider makes it.


def forged_seal_over_a_forged_deposit(
    store: Store, stores: StoreFactory, attacker: Attacker
) -> int:
    """A deposit forged at the tail, sealed with a key of the insider's own."""
    forged = forge_deposit_at_tail(store, stores, attacker)
    row = next(r for r in attacker.rows() if r.position == forged)
    stored = StoredEvent(row.aggregate, row.version, row.topic, row.state)
    fake = Sealer(Ed25519PrivateKey.generate()).seal(
        [forged], [stored], seal_rows(attacker)[-1].digest
    )
    attacker.run(seals.insert_sql(), fake.row())
    return forged


def cut_the_last_save(store: Store, attacker: Attacker) -> seals.Seal:
    """ann's $1.00 and bob's deposit, read by the projector; then bob's deposit
    removed from the events, its link and seal left standing."""
    store.app.register_player("ann", "Ann")
    store.app.deposit("ann", "real", 100)
    store.app.register_player("bob", "Bob")
    store.app.deposit("bob", "real", 70_000)
    store.projector.catch_up()
    last = seal_rows(attacker)[-1]
    attacker.run(
        f"DELETE FROM {attacker.events} WHERE {attacker.position} >= ?", (last.first_position,)
    )
    return last


# (a) Events past the last seal.


def test_an_unsealed_tail_acknowledged_lets_the_service_save_and_verify_pass(
    stores: StoreFactory, store: Store, attacker: Attacker, api: Api
) -> None:
    # Given a $10,000.00 deposit forged at the tail: every command is refused, verify fails
    forged = forge_deposit_at_tail(store, stores, attacker)
    report = refused_and_named(api, stores, f"event at position {forged} ")
    # When the operator acknowledges it
    done = acknowledge(stores)
    assert done.exit_code == 0, done.output
    position = forged + 1
    assert f"the events at positions {forged}..{forged} (1) are in no seal" in done.output
    assert f"acknowledged at position {position}" in done.output
    # Then the log holds the acknowledgment, sealed by the service's key over the forgery
    recorded = every_store_event(store)[-1]
    assert (recorded.kind, recorded.actor) == (LOG_ACKNOWLEDGED, "operator")
    assert recorded.details["reason"] == REASON
    assert recorded.details["unsealed"] == {"first": forged, "last": forged, "count": 1}
    assert recorded.details["position"] == position
    head = seal_rows(attacker)[-1]
    assert (head.first_position, head.last_position, head.event_count) == (forged, position, 2)
    assert seals.acknowledges(head) and seals.signed(SEAL_KEY.public_key(), head)
    # And the running service saves again, on top of it
    api.deposit("ann", "5.00")
    assert store.app.recorder.max_notification_id() == position + 1
    # And verify passes, naming the acknowledgment and what it found
    status, report = verified(stores)
    assert status == 0, report["discrepancies"]
    (ack,) = report["acknowledged"]
    assert (ack["position"], ack["reason"], ack["signature_checked"]) == (position, REASON, True)
    assert ack["found"]["unsealed"] == {"first": forged, "last": forged, "count": 1}
    assert ack["at"] == recorded.at
    # And operators find it among the significant events
    listed = api.get(f"/v1/significant-events?kind={LOG_ACKNOWLEDGED}", headers=OPERATOR).json()
    assert [event["position"] for event in listed["events"]] == [position]


def test_a_tail_forged_after_an_acknowledgment_is_refused_again(
    stores: StoreFactory, store: Store, attacker: Attacker, api: Api
) -> None:
    # Given an unsealed tail acknowledged, and the service saving again
    forge_deposit_at_tail(store, stores, attacker)
    assert acknowledge(stores).exit_code == 0
    api.deposit("ann", "5.00")
    # When another deposit is forged at the tail
    attacker = guards_off_again(stores)
    wallet: Any = store.app.wallet("ann", "real")
    wallet.deposit("forged-2", 1_000_000)
    stored = store.app.mapper.to_stored_event(wallet.collect_events()[-1])
    again = insert_stored_at_tail(attacker, stores, stored)
    # Then it is refused and named as the first was: the acknowledgment covers no more
    report = refused_and_named(api, stores, f"event at position {again} ")
    assert len(report["acknowledged"]) == 1
    # And a second acknowledgment is named beside the first, each with what it found
    assert acknowledge(stores, "ops-124: second forgery, same insider").exit_code == 0
    api.deposit("ann", "5.00")
    status, report = verified(stores)
    assert status == 0, report["discrepancies"]
    first, second = report["acknowledged"]
    assert first["reason"] == REASON and second["position"] == again + 1
    assert second["found"]["unsealed"] == {"first": again, "last": again, "count": 1}


def test_an_event_altered_after_its_acknowledgment_is_named(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given an acknowledged forged deposit
    forged = forge_deposit_at_tail(store, stores, attacker)
    assert acknowledge(stores).exit_code == 0
    # When it is altered afterwards (its link made again, as the store makes links)
    attacker = guards_off_again(stores)  # Opening the store made the triggers again.
    row = next(r for r in attacker.rows() if r.position == forged)
    attacker.set_state(forged, row.state.replace(b"1000000", b"9000000"))
    attacker.run(f"DELETE FROM {event_chain.TABLE} WHERE position >= ?", (forged,))
    previous = attacker.link_at(forged - 1)
    for later in [r for r in attacker.rows() if r.position >= forged]:
        previous = later.link(previous)
        attacker.insert_link(later.position, later.aggregate, later.version, previous)
    # Then the acknowledgment's own seal names it
    named(stores, f"the events at positions {forged}..{forged + 1} are not those sealed")


def test_a_server_that_never_saw_the_tampering_saves_after_its_acknowledgment(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given a server that saved last before a forged tail, and was asked nothing since
    # (on PostgreSQL it still holds the head it left, a head that is gone)
    forged = forge_deposit_at_tail(store, stores, attacker)
    # When the tail is acknowledged
    assert acknowledge(stores).exit_code == 0
    # Then its next command saves, after the acknowledgment
    store.app.deposit("ann", "real", 500)
    assert store.app.recorder.max_notification_id() == forged + 2
    assert verified(stores)[0] == 0


# (b) A seal at the head the service did not sign.


def test_a_forged_seal_acknowledged_is_named_as_found_and_the_service_saves(
    stores: StoreFactory, store: Store, attacker: Attacker, api: Api
) -> None:
    # Given a forged deposit under a seal of the insider's key
    forged = forged_seal_over_a_forged_deposit(store, stores, attacker)
    fake = seal_rows(attacker)[-1]
    forgery = f"the seal of positions {forged}..{forged} is not signed by the service's key"
    refused_and_named(api, stores, forgery)
    # When the operator acknowledges it
    done = acknowledge(stores)
    assert done.exit_code == 0, done.output
    assert f"the seal at the head, of positions {forged}..{forged} (digest {fake.digest})" in (
        done.output
    )
    # Then the acknowledgment's seal follows the forged one, and covers its event
    head = seal_rows(attacker)[-1]
    assert (head.first_position, head.last_position, head.previous) == (
        forged,
        forged + 1,
        fake.digest,
    )
    # And the service saves; verify passes, naming the forged seal as acknowledged
    api.deposit("ann", "5.00")
    status, report = verified(stores)
    assert status == 0, report["discrepancies"]
    (ack,) = report["acknowledged"]
    assert ack["found"]["head"] == {
        "first": forged,
        "last": forged,
        "digest": fake.digest,
        "signed": False,
    }
    assert any(forgery in finding for finding in ack["covered"])


def test_an_acknowledgment_under_another_key_is_a_forged_seal_covering_nothing(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given an acknowledged forged seal
    forged = forged_seal_over_a_forged_deposit(store, stores, attacker)
    assert acknowledge(stores).exit_code == 0
    # When an auditor checks the log with a key that did not sign it
    other = public_key_text(Ed25519PrivateKey.generate().public_key())
    report = named(stores, f"the seal of positions {forged}..{forged + 1} is not signed", other)
    # Then the acknowledgment is no acknowledgment: a forged seal, and so is what it found
    assert report["acknowledged"] == []


def test_an_acknowledgment_past_a_seal_row_forged_far_ahead_leaves_a_log_verify_reads(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given a seal row forged far past the head, with no event under it
    store.app.register_player("ann", "Ann")
    genuine = seal_rows(attacker)[-1]
    far = 10**12
    attacker.run(
        seals.insert_sql(),
        (far, far, 1, genuine.events_digest, genuine.digest, "ab" * 32, "00" * 64, None),
    )
    # When it is acknowledged, the log goes on past it
    assert acknowledge(stores).exit_code == 0
    store.app.deposit("ann", "real", 500)
    assert store.app.recorder.max_notification_id() == far + 2
    # Then verify holds, and reads the gap in moments (not a window at a time)
    report = verify(store, None, lambda _: None, public_key=SEAL_KEY.public_key())
    assert report.problems == []
    (ack,) = report.acknowledged
    assert ack.position == far + 1
    assert ack.findings == [
        f"the seal of positions {far}..{far} does not hash to its digest: it was altered"
    ]


# (c) Events cut from the end, their links and seals left standing.


def test_a_cut_tail_acknowledged_lets_the_service_save_once_the_read_models_are_rebuilt(
    stores: StoreFactory, store: Store, attacker: Attacker, api: Api
) -> None:
    # Given bob's deposit removed from the end
    cut = cut_the_last_save(store, attacker)
    refused_and_named(api, stores, f"positions {cut.first_position}..{cut.last_position}")
    # When the operator acknowledges it
    done = acknowledge(stores)
    assert done.exit_code == 0, done.output
    position = cut.last_position + 1
    assert f"positions {cut.first_position}..{cut.last_position} lie past the last event" in (
        done.output
    )
    assert "run `casino projections rebuild`, then restart every server" in done.output
    recorded = every_store_event(store)[-1]
    assert recorded.details["removed"]["first"] == cut.first_position
    # Then the running service saves again
    api.deposit("ann", "5.00")
    assert store.app.recorder.max_notification_id() == position + 1
    # And once the read models no longer hold the removed deposit, verify passes
    assert casino(stores, "projections", "rebuild").exit_code == 0
    status, report = verified(stores)
    assert status == 0, report["discrepancies"]
    (ack,) = report["acknowledged"]
    assert ack["position"] == position
    removed = f"the events at positions {cut.first_position}..{cut.last_position}, 1 sealed,"
    assert any(removed in finding for finding in ack["covered"])
    assert any("has been removed" in finding for finding in ack["covered"])
    # And bob, served by a server started afresh, has only what the log holds
    restarted = stores.open()
    assert restarted.app.wallet("bob", "real").balance_cents == 0
    restarted.app.deposit("bob", "real", 100)
    assert verified(stores)[0] == 0


def test_a_cut_inside_a_save_holds_its_remaining_events_to_what_was_found(
    stores: StoreFactory, store: Store, attacker: Attacker
) -> None:
    # Given the last event of a three-event save (a player and her two wallets) removed
    store.app.register_player("ann", "Ann")
    store.projector.catch_up()
    top = log_top(attacker)
    attacker.delete_event(top)
    assert acknowledge(stores).exit_code == 0
    assert casino(stores, "projections", "rebuild").exit_code == 0
    assert verified(stores)[0] == 0
    # When an event the cut left is altered afterwards
    attacker = guards_off_again(stores)
    row = next(r for r in attacker.rows() if r.position == top - 1)
    attacker.set_state(row.position, row.state + b" ")
    # Then verify names it: the acknowledgment holds the save's remaining events
    named(stores, "the events at positions 1..3 are not those sealed")


# The command itself.


def test_acknowledging_a_sound_log_writes_nothing(stores: StoreFactory, store: Store) -> None:
    store.app.register_player("ann", "Ann")
    before = len(every_store_event(store))
    done = acknowledge(stores)
    assert done.exit_code == 0, done.output
    assert "the log is sound: nothing past its last event (position 3)" in done.output
    assert len(every_store_event(store)) == before
    as_json = casino(stores, "audit", "acknowledge", "--reason", REASON, "--json")
    assert json.loads(as_json.stdout)["acknowledged"] is False


def test_acknowledge_without_a_reason_is_a_usage_error(stores: StoreFactory, store: Store) -> None:
    store.app.register_player("ann", "Ann")
    assert casino(stores, "audit", "acknowledge").exit_code == 2
    assert acknowledge(stores, "   ").exit_code == 2
    assert acknowledge(stores, "x" * 501).exit_code == 2


def test_acknowledge_without_the_seal_key_is_a_configuration_error(
    stores: StoreFactory,
    store: Store,
    attacker: Attacker,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # Given a tampered log, and no seal key: none configured, no development key here
    forge_deposit_at_tail(store, stores, attacker)
    before = log_top(attacker)
    monkeypatch.chdir(tmp_path)
    done = acknowledge_with(stores, CASINO_SEAL_KEY="")
    assert done.exit_code == 2
    assert "CASINO_SEAL_KEY" in done.output
    # Nor with a key that signed none of the store's seals
    other = private_key_text(Ed25519PrivateKey.generate())
    done = acknowledge_with(stores, CASINO_SEAL_KEY=other)
    assert done.exit_code == 2
    assert "is signed by this key" in done.output
    # Then nothing was written
    assert log_top(attacker) == before


def acknowledge_with(stores: StoreFactory, **settings: str) -> Result:
    return casino(stores, "audit", "acknowledge", "--reason", REASON, **settings)


def test_acknowledge_creates_no_store(stores: StoreFactory, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'missing.sqlite'}"
    schema = f"t_{uuid.uuid4().hex[:16]}"
    done = casino(
        stores, "audit", "acknowledge", "--reason", REASON,
        CASINO_DATABASE_URL=url if stores.backend == "sqlite" else POSTGRES_URL,
        CASINO_POSTGRES_SCHEMA=schema,
    )  # fmt: skip
    assert done.exit_code == 2
    assert "no store" in done.output
    assert not (tmp_path / "missing.sqlite").exists()


def test_the_witness_notes_the_acknowledgment_and_verify_holds_with_it(
    stores: StoreFactory, store: Store, attacker: Attacker, tmp_path: Path
) -> None:
    witness = tmp_path / "noted.jsonl"
    worker = WitnessWorker(store, witness, seconds=60, events=1)
    store.app.register_player("zed", "Zed")
    assert worker.note_if_due(0.0) is not None
    forged_seal_over_a_forged_deposit(store, stores, attacker)
    assert acknowledge(stores).exit_code == 0
    noted = worker.note_if_due(100.0)
    assert noted is not None and noted.position == seal_rows(attacker)[-1].last_position
    answer = casino(
        stores, "audit", "verify", "--public-key", PUBLIC_KEY, "--witness", str(witness)
    )
    assert answer.exit_code == 0, answer.output
    assert "ACKNOWLEDGED at position" in answer.output


# Least privilege: the owner acknowledges, the service's role goes on.

service_role = least_privilege.service_role  # a role made for the test, and dropped


@pytest.mark.postgres
def test_the_owner_acknowledges_and_the_service_role_saves_again(
    postgres_stores: StoreFactory, service_role: str
) -> None:
    # Given a store the service's role writes, and a deposit forged by the owner
    url = least_privilege.service_url(service_role)
    options: dict[str, Any] = {"postgres_schema": postgres_stores.schema, "pool_size": 2}
    store = open_store(url, owner_url=POSTGRES_URL, seal_key=SEAL_KEY, **options)
    attacker = Attacker(postgres_stores)
    try:
        forged = forge_deposit_at_tail(store, postgres_stores, attacker)
        with pytest.raises(seals.LogTampered):
            store.app.deposit("ann", "real", 500)
        # When the operator acknowledges it, with the owner's credentials
        done = casino(
            postgres_stores, "audit", "acknowledge", "--reason", REASON,
            CASINO_DATABASE_URL=url, CASINO_DATABASE_OWNER_URL=POSTGRES_URL,
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        # Then the owner's role is on record, and the service's role saves again
        recorded = every_store_event(store)[-1]
        assert recorded.details["database_role"] == "postgres"
        store.app.deposit("ann", "real", 500)
        assert store.app.recorder.max_notification_id() == forged + 2
    finally:
        attacker.close()
        store.close()


@pytest.mark.postgres
def test_an_acknowledgment_the_chain_trigger_would_not_link_is_not_written(
    postgres_stores: StoreFactory,
) -> None:
    # Given a forged tail, and the chain's trigger switched off since the store opened
    # (opening it makes the trigger anew: the command never meets this, a caller might)
    store = postgres_stores.open()
    attacker = Attacker(postgres_stores)
    try:
        forged = forge_deposit_at_tail(store, postgres_stores, attacker)
        attacker.connection.execute("ALTER TABLE casino_events DISABLE TRIGGER casino_events_chain")
        database = writer(postgres_stores.url, postgres_stores.schema)
        # When it is acknowledged, then nothing is written: an unlinked event is no way back
        with pytest.raises(Unchained):
            acknowledge_tail(store, database, SEAL_KEY, REASON)
        database.close()
        assert log_top(attacker) == forged
    finally:
        attacker.connection.execute("ALTER TABLE casino_events ENABLE TRIGGER casino_events_chain")
        attacker.close()
