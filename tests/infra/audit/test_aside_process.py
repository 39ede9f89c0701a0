"""`casino audit verify` with the rebuild aside in a process of its own
(infra/audit/aside_process.py): it finds what the aside of one process finds, in
the same words, and a process that fails is a discrepancy, never a pass."""

from __future__ import annotations

import multiprocessing.process
import os
import signal
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from infra.audit import aside_process
from infra.audit import verify as verify_module
from infra.audit.rebuild import Aside
from infra.audit.round_check import Share
from infra.audit.verify import AuditReport, verify
from infra.store import store as store_module
from infra.store.store import Store, open_store
from projections.runner import Projector
from tests.conftest import StoreFactory
from tests.infra.audit.test_verify import PLAYER_WINS, Attacker, named, play_some_rounds


@pytest.fixture
def in_a_process(monkeypatch: pytest.MonkeyPatch) -> list[aside_process.AsideProcess]:
    """Every verify's rebuild aside in a process, however short the log; the ones
    started are listed, and no aside of this process is fed an event."""
    monkeypatch.setattr(verify_module, "PROCESS_EVENTS_MIN", 1)
    started: list[aside_process.AsideProcess] = []
    starting = aside_process.AsideProcess.__init__

    def start(self: aside_process.AsideProcess, store: Store) -> None:
        starting(self, store)
        started.append(self)

    def fed_here(*_: Any) -> None:
        raise AssertionError("an aside of verify's own process was fed")

    monkeypatch.setattr(aside_process.AsideProcess, "__init__", start)
    monkeypatch.setattr(Aside, "add", fed_here)
    return started


def _alone(store: Store, monkeypatch: pytest.MonkeyPatch) -> AuditReport:
    with monkeypatch.context() as patched:
        patched.setattr(Aside, "add", _ORIGINAL_ADD)
        return verify(store, None, lambda _: None, processes=False)


_ORIGINAL_ADD = Aside.add


def _compared(store: Store, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]) -> list[str]:
    """verify's problems with the aside in a process, after checking that the aside of
    one process finds the same ones."""
    alone = _alone(store, monkeypatch)
    beside = verify(store, None, lambda _: None)
    assert len(in_a_process) == 1
    assert beside.problems == alone.problems
    assert (beside.events, beside.rounds, beside.receipts) == (
        alone.events,
        alone.rounds,
        alone.receipts,
    )
    return beside.problems


def test_a_store_that_holds_verifies_with_the_rebuild_in_a_process(
    store: Store, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    play_some_rounds(store)
    assert _compared(store, monkeypatch, in_a_process) == []
    assert not in_a_process[0].process.is_alive()  # it ended once it had answered


def test_a_read_model_changed_behind_the_projector_is_named_by_the_process(
    store: Store, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    play_some_rounds(store)
    store.projector.catch_up()
    with store.database.write() as cursor:
        cursor.execute(
            "UPDATE wallet_balances SET held_cents = 7 WHERE player_id = 'pat' AND mode = 'real'"
        )
        cursor.execute(  # each round's last event, gone from its trail
            "DELETE FROM round_trail WHERE position IN"
            " (SELECT MAX(position) FROM round_trail GROUP BY round_id)"
        )
    problems = _compared(store, monkeypatch, in_a_process)
    assert named(problems, "the read model wallet_balances: 1 rows that differ", "'pat'")
    assert named(problems, "the read model round_trail: 3 rows only in the rebuild")


def test_a_tampered_payout_is_named_alike_with_the_rebuild_in_a_process(
    store: Store, attacker: Attacker, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    round_id = play_some_rounds(store)
    payout = attacker.row("casino:BaccaratRound.PayoutMade")
    attacker.set_state(
        payout.position, payout.state.replace(b'"net_cents":1000', b'"net_cents":9000')
    )
    problems = _compared(store, monkeypatch, in_a_process)
    assert named(problems, f"round {round_id}: player paid 9000, due 1000")
    assert named(problems, f"event at position {payout.position} ({payout.name})", "altered")


def test_tampered_rounds_of_both_processes_are_named_as_one_process_names_them(
    store: Store, attacker: Attacker, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    app, here = store.app, aside_process.AsideProcess.kept_here
    app.register_player("pat", "pat")
    app.deposit("pat", "real", 500_000)
    rounds: list[str] = []
    while min(sum(here.mine(r) for r in rounds), sum(not here.mine(r) for r in rounds)) < 2:
        assert len(rounds) < 40, "round ids fall in both shares, about half each"
        opened = app.open_house_round("pat", "real", PLAYER_WINS).result
        assert opened is not None
        app.place_bet(opened.round_id, "player", 1000)
        app.deal(opened.round_id)
        rounds.append(opened.round_id)
    for nth in range(len(rounds)):
        payout = attacker.row("casino:BaccaratRound.PayoutMade", nth)
        attacker.set_state(
            payout.position, payout.state.replace(b'"net_cents":1000', b'"net_cents":9000')
        )
    problems = _compared(store, monkeypatch, in_a_process)
    for round_id in rounds:
        assert named(problems, f"round {round_id}: player paid 9000, due 1000")
    answered = in_a_process[0].rounds
    assert answered is not None
    assert answered.checked == sum(not here.mine(r) for r in rounds)
    assert {problem.split(":")[0] for _, problem in answered.listed} == {
        f"round {r}" for r in rounds if not here.mine(r)
    }


def test_an_event_the_process_cannot_read_fails_its_rebuild_as_it_fails_here(
    store: Store, attacker: Attacker, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    play_some_rounds(store)
    store.projector.catch_up()
    target = attacker.row("casino:BaccaratRound.CardDealt", 2)
    attacker.set_state(target.position, b"x" + target.state[1:])
    problems = _compared(store, monkeypatch, in_a_process)
    assert named(problems, f"event at position {target.position}", "cannot be read")
    assert named(problems, "the read models could not be rebuilt to compare")


def test_a_rebuild_process_that_dies_is_a_discrepancy_not_a_pass(
    store: Store, attacker: Attacker, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    play_some_rounds(store)
    # Every round left to the process; and a wallet entry for a round never seen.
    monkeypatch.setattr(aside_process.AsideProcess, "kept_here", Share(frozenset(), 2))
    held = attacker.row("casino:Wallet.FundsHeld")
    round_id = held.state.split(b'"round_id":"')[1].split(b'"')[0]
    attacker.set_state(held.position, held.state.replace(round_id, b"no-such-round"))
    sending = aside_process.AsideProcess.sending

    def killed_after_the_first_page(
        self: aside_process.AsideProcess, pages: Iterator[Sequence[Any]]
    ) -> Iterator[Sequence[Any]]:
        for page in sending(self, pages):
            self.process.kill()
            yield page

    monkeypatch.setattr(aside_process.AsideProcess, "sending", killed_after_the_first_page)
    report = verify(store, None, lambda _: None)
    assert named(
        report.problems,
        "the read models could not be rebuilt to compare",
        "the rebuild's process ended (exit code -9) without an answer",
    )
    # Its rounds went unchecked: said, never passed over.
    assert report.rounds == 0
    assert named(
        report.problems,
        "3 rounds left to the rebuild's process not checked: it sent back no round checks",
    )
    # Entries for a round never seen are this process's to name, whatever became of it.
    assert named(report.problems, "wallet posted FundsHeld", "for round no-such-round")


def test_a_rebuild_process_that_stops_taking_pages_does_not_hang_verify(
    store: Store, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    _one_page_in_flight(store, monkeypatch)
    sending = aside_process.AsideProcess.sending

    def stopped_at_once(
        self: aside_process.AsideProcess, pages: Iterator[Sequence[Any]]
    ) -> Iterator[Sequence[Any]]:
        self.process.kill()
        self.process.join()
        yield from sending(self, pages)

    monkeypatch.setattr(aside_process.AsideProcess, "sending", stopped_at_once)
    report = verify(store, None, lambda _: None)
    assert report.events > 2  # every event checked all the same
    assert named(report.problems, "the read models could not be rebuilt to compare", "ended")


def test_a_rebuild_process_stuck_but_alive_does_not_hang_verify(
    store: Store, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    _one_page_in_flight(store, monkeypatch)
    monkeypatch.setattr(aside_process, "STALL_SECONDS", 0.5)
    sending = aside_process.AsideProcess.sending
    stopped: list[aside_process.AsideProcess] = []

    def stopped_at_once(
        self: aside_process.AsideProcess, pages: Iterator[Sequence[Any]]
    ) -> Iterator[Sequence[Any]]:
        os.kill(self.process.pid, signal.SIGSTOP)  # alive, taking nothing: as if hung
        stopped.append(self)
        yield from sending(self, pages)

    monkeypatch.setattr(aside_process.AsideProcess, "sending", stopped_at_once)
    report = verify(store, None, lambda _: None)
    assert report.events > 2
    assert named(
        report.problems,
        "the read models could not be rebuilt to compare",
        "the rebuild's process took no page for",
        "stuck",
    )
    assert not stopped[0].process.is_alive()  # killed on the way out, not left behind


def _one_page_in_flight(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Some rounds played, then verify's pages one event each, one page in flight,
    and a blocked send looking every 50 ms whether the process still takes them."""
    play_some_rounds(store)
    monkeypatch.setattr(aside_process, "PAGES_IN_FLIGHT", 1)
    monkeypatch.setattr(aside_process, "SEND_WAIT_SECONDS", 0.05)
    monkeypatch.setattr(verify_module, "log_pages", _one_event_a_page(verify_module.log_pages))


def _one_event_a_page(log_pages: Any) -> Any:
    def pages(store: Store, up_to: int, after: int = 0) -> Iterator[Sequence[Any]]:
        for page in log_pages(store, up_to, after):
            yield from ([notification] for notification in page)

    return pages


def test_the_process_opens_the_store_without_making_or_changing_anything(
    stores: StoreFactory, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # verify may have opened it with the owner's role; the process has only the URL's.
    play_some_rounds(store)
    store.projector.catch_up()

    def refused(*_: Any) -> None:
        raise AssertionError("the schema was made again")

    for making in ("create_sqlite_schema", "create_postgres_schema", "grant_service_role"):
        monkeypatch.setattr(store_module, making, refused)
    monkeypatch.setattr(Projector, "start", refused)
    again = open_store(
        stores.url, postgres_schema=stores.schema, group_commit=None, opened_elsewhere=True
    )
    try:
        assert again.projector.head() == store.projector.head()
        assert again.projector.position() == store.projector.position()
    finally:
        again.close()


def test_a_rebuild_process_that_cannot_start_is_a_discrepancy_not_a_crash(
    store: Store, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    play_some_rounds(store)

    def no_process(self: Any) -> None:
        raise OSError("no more processes")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", no_process)
    report = verify(store, None, lambda _: None)
    assert report.events > 2  # every other check made all the same
    assert named(
        report.problems,
        "the read models could not be rebuilt to compare",
        "the rebuild's process could not start: OSError('no more processes')",
    )


def test_on_one_core_the_rebuild_stays_in_verify_s_own_process(
    store: Store, monkeypatch: pytest.MonkeyPatch, in_a_process: list[Any]
) -> None:
    play_some_rounds(store)
    monkeypatch.setattr(verify_module, "cores", lambda: 1)
    monkeypatch.setattr(Aside, "add", _ORIGINAL_ADD)
    assert verify(store, None, lambda _: None).problems == []
    assert in_a_process == []
