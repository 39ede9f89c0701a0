"""`casino audit verify --since STATE`: an incremental verify takes up from the state a
verify that held wrote (infra/audit/resume.py), checks that its anchor still holds,
and checks what was added since - finding what a full verify finds there, and saying
what it cannot see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from domain.settings import GameSettings
from infra.audit import resume
from infra.audit.resume import StateRefused, VerifyState
from infra.audit.verify import AuditReport, verify
from infra.store import chain as event_chain
from infra.store.store import Store, open_store
from tests.conftest import SEAL_KEY, StoreFactory
from tests.infra.audit.test_acknowledge import PUBLIC_KEY, casino
from tests.infra.audit.test_verify import PLAYER_WINS, Attacker, named, play_some_rounds

KEY = SEAL_KEY.public_key()


def full(store: Store) -> AuditReport:
    return verify(store, None, lambda _: None, public_key=KEY)


def since(store: Store, state: VerifyState | None) -> AuditReport:
    assert state is not None
    return verify(store, None, lambda _: None, public_key=KEY, since=state)


def anchored(store: Store) -> VerifyState:
    """Some rounds played, and the state of a full verify that holds."""
    play_some_rounds(store)
    report = full(store)
    assert report.problems == [] and report.state is not None
    return report.state


def open_at_the_anchor(store: Store) -> tuple[VerifyState, str]:
    """Some rounds played, then a house round bet on and not dealt; the state of a
    full verify then, and the round's id."""
    play_some_rounds(store)
    house = store.app.open_house_round("dan", "real", PLAYER_WINS).result
    assert house is not None
    store.app.place_bet(house.round_id, "player", 1000)
    state = full(store).state
    assert state is not None
    return state, house.round_id


def more_events(store: Store) -> None:
    """Deposits and a house round played to its end, after the anchor."""
    store.app.deposit("dan", "real", 700)
    store.app.deposit("pat", "real", 300)
    house = store.app.open_house_round("dan", "real", PLAYER_WINS).result
    assert house is not None
    store.app.place_bet(house.round_id, "player", 2000)
    store.app.deal(house.round_id)


def head(store: Store) -> int:
    return store.app.recorder.max_notification_id() or 0


def test_an_untouched_log_with_new_events_holds_checking_only_the_new_ones(
    store: Store,
) -> None:
    state = anchored(store)
    more_events(store)
    report = since(store, state)
    assert report.problems == []
    assert report.since == state.position
    assert report.events == head(store) - state.position
    assert report.rounds == 1
    assert report.state is not None and report.state.position == head(store)


def test_a_log_with_nothing_new_holds_and_keeps_its_state(store: Store) -> None:
    state = anchored(store)
    report = since(store, state)
    assert (report.problems, report.events, report.state) == ([], 0, state)


def test_full_equals_a_full_verify_to_n_then_an_incremental_one_across_open_rounds(
    store: Store,
) -> None:
    # Given two house rounds open at the anchor, their bets placed
    play_some_rounds(store)
    app = store.app
    house = app.open_house_round("dan", "real", PLAYER_WINS).result
    other = app.open_house_round("pat", "real", PLAYER_WINS).result
    assert house is not None and other is not None
    app.place_bet(house.round_id, "banker", 1500)
    app.place_bet(other.round_id, "player", 2000)
    at_n = full(store)
    assert at_n.problems == [] and at_n.state is not None
    assert at_n.state.open_positions  # the rounds still open are carried across
    # When both are dealt after it, and more is played
    app.deal(house.round_id)
    app.place_bet(other.round_id, "tie", 500)  # a bet after the anchor too
    app.deal(other.round_id)
    more_events(store)
    # Then the incremental verify finds what the full one finds, and leaves the same state
    incremental, whole = since(store, at_n.state), full(store)
    assert incremental.problems == whole.problems == []
    assert incremental.rounds == 3  # the two open at the anchor, and the new one
    assert incremental.state is not None and whole.state is not None
    assert incremental.state.model_dump() == whole.state.model_dump()
    assert (incremental.head_position, incremental.head_link) == (
        whole.head_position,
        whole.head_link,
    )


def test_a_tampered_payout_of_a_round_open_at_the_anchor_is_named_as_a_full_verify_names_it(
    store: Store, attacker: Attacker
) -> None:
    state, round_id = open_at_the_anchor(store)
    store.app.deal(round_id)
    paid = attacker.row("casino:Coup.PayoutMade", -1)
    assert paid.position > state.position
    attacker.set_state(paid.position, paid.state.replace(b'"net_cents":1000', b'"net_cents":1100'))
    incremental, whole = since(store, state), full(store)
    assert incremental.problems and incremental.problems == whole.problems
    assert named(incremental.problems, f"event at position {paid.position}")
    assert named(incremental.problems, f"round {round_id}")
    assert incremental.state is None  # nothing to take up from


def test_a_new_event_tampered_with_is_named(store: Store, attacker: Attacker) -> None:
    state = anchored(store)
    more_events(store)
    deposit = attacker.row("casino:Wallet.Deposited", -1)  # pat's 300
    assert state.position < deposit.position and b"300" in deposit.state
    attacker.set_state(deposit.position, deposit.state.replace(b"300", b"900"))
    problems = since(store, state).problems
    assert named(problems, f"event at position {deposit.position}", "does not match its link")
    assert named(problems, "are not those sealed")


def test_an_earlier_event_altered_and_the_chain_rewritten_breaks_the_anchor(
    store: Store, attacker: Attacker
) -> None:
    state = anchored(store)
    more_events(store)
    registered = attacker.row("casino:Player.Registered", 1)  # not the log's first event
    assert registered.position > 1 and b'"pat"' in registered.state
    attacker.set_state(registered.position, registered.state.replace(b'"pat"', b'"Pam"', 1))
    rewrite_chain_from(attacker, registered.position)
    report = since(store, state)
    assert named(report.problems, "the anchor does not hold", f"position {state.position}")
    assert report.events == 0  # nothing after a broken anchor is taken as checked


def test_an_event_removed_at_the_anchor_breaks_it(store: Store, attacker: Attacker) -> None:
    state = anchored(store)
    more_events(store)
    attacker.delete_event(state.position)
    assert named(since(store, state).problems, "the anchor does not hold", "were removed")


def test_an_event_removed_under_the_anchor_s_seal_breaks_it(
    store: Store, attacker: Attacker
) -> None:
    play_some_rounds(store)
    house = store.app.open_house_round("dan", "real", PLAYER_WINS).result
    assert house is not None
    store.app.place_bet(house.round_id, "player", 1000)
    store.app.deal(house.round_id)  # a save of several events ends the log
    state = full(store).state
    assert state is not None and state.seal is not None
    first = state.seal.first_position
    assert first < state.position  # the last save sealed more than one event
    attacker.delete_event(first)
    attacker.delete_link(first)
    more_events(store)
    assert named(since(store, state).problems, "the anchor does not hold", "not those sealed")


def test_an_event_of_a_round_open_at_the_anchor_removed_breaks_it(
    store: Store, attacker: Attacker
) -> None:
    state, round_id = open_at_the_anchor(store)
    assert state.open_positions
    store.app.deal(round_id)
    attacker.delete_event(state.open_positions[0])
    problems = since(store, state).problems
    assert named(problems, "the anchor does not hold", "rounds open at it were removed")


def test_what_an_incremental_verify_cannot_see_is_said_and_a_full_verify_sees_it(
    store: Store, attacker: Attacker
) -> None:
    # Given an event long before the anchor altered, the chain after it left as it was
    state = anchored(store)
    more_events(store)
    registered = attacker.row("casino:Player.Registered", 0)
    attacker.set_state(registered.position, registered.state.replace(b'"dan"', b'"Don"', 1))
    # Then the incremental verify does not see it, and says that it cannot
    incremental = since(store, state)
    assert incremental.problems == []
    assert any("only a full verify recomputes the whole chain" in u for u in incremental.unseen)
    # And the full verify names it
    assert named(full(store).problems, f"event at position {registered.position}")


def test_a_state_of_another_log_is_refused(store: Store, tmp_path: Path) -> None:
    state = anchored(store)
    url = f"sqlite:///{tmp_path / 'other.sqlite'}"
    other = open_store(url, games=GameSettings(test_mode=True), seal_key=SEAL_KEY)
    try:
        play_some_rounds(other)  # another store, its own log, as long
        with pytest.raises(StateRefused, match="not a state of this log"):
            since(other, state)
    finally:
        other.close()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{", "not JSON"),
        ("[]", "not a verify state"),
        ('{"format": "casino-verify-state", "version": 2}', "of version 2"),
        ('{"format": "casino-verify-state", "version": 1}', "malformed at first_link"),
    ],
)
def test_a_malformed_state_is_refused(text: str, why: str) -> None:
    with pytest.raises(StateRefused, match=why):
        resume.read_state(text)


def test_a_state_with_a_field_of_the_wrong_type_is_refused(store: Store) -> None:
    written = json.loads(resume.state_text(anchored(store)))
    written["books"] = {"real": {"house": "12"}}
    with pytest.raises(StateRefused, match=r"malformed at books\.real\.house"):
        resume.read_state(json.dumps(written))


def test_the_cli_writes_a_state_resumes_from_it_and_refuses_another_s(
    stores: StoreFactory, store: Store, tmp_path: Path
) -> None:
    play_some_rounds(store)
    state_file = tmp_path / "auditor" / "verify-state.json"
    state_file.parent.mkdir()
    written = casino(stores, "audit", "verify", "--public-key", PUBLIC_KEY,
                     "--state-out", str(state_file))  # fmt: skip
    assert written.exit_code == 0, written.output
    assert f"state written to {state_file}" in written.output
    position = json.loads(state_file.read_text())["position"]
    more_events(store)
    resumed = casino(stores, "audit", "verify", "--public-key", PUBLIC_KEY, "--json",
                     "--since", str(state_file), "--state-out", str(state_file))  # fmt: skip
    assert resumed.exit_code == 0, resumed.output
    found = json.loads(resumed.stdout)
    assert (found["holds"], found["since"]) == (True, position)
    assert found["events"] == head(store) - position
    assert len(found["unseen"]) == len(resume.UNSEEN)
    assert json.loads(state_file.read_text())["position"] == head(store)
    state_file.write_text("{not a state")
    refused = casino(stores, "audit", "verify", "--public-key", PUBLIC_KEY,
                     "--since", str(state_file))  # fmt: skip
    assert refused.exit_code == 2
    assert "not JSON" in refused.output and "nothing was checked" in refused.output


def test_the_cli_says_what_an_incremental_verify_does_not_see(
    stores: StoreFactory, store: Store, tmp_path: Path
) -> None:
    state_file = tmp_path / "state.json"
    state_file.write_text(resume.state_text(anchored(store)))
    more_events(store)
    answer = casino(stores, "audit", "verify", "--public-key", PUBLIC_KEY,
                    "--since", str(state_file))  # fmt: skip
    assert answer.exit_code == 0, answer.output
    assert f"after position {json.loads(state_file.read_text())['position']}" in answer.output
    unseen = [line for line in answer.output.splitlines() if line.startswith("not seen by")]
    assert len(unseen) == len(resume.UNSEEN)


def rewrite_chain_from(attacker: Attacker, position: int) -> None:
    """The chain made again from `position` on, over the events as they are now: what
    hides an altered event from a full verify's chain check (not from the seals)."""
    attacker.run(f"DELETE FROM {event_chain.TABLE} WHERE position >= ?", (position,))
    previous = attacker.link_at(position - 1) if position > 1 else event_chain.GENESIS
    for row in attacker.rows():
        if row.position >= position:
            previous = row.link(previous)
            attacker.insert_link(row.position, row.aggregate, row.version, previous)
