"""The round checks shared out between verify's two processes (infra/audit/round_check.py):
every round is checked by exactly one of them, and their problems merge into the very
list one process checking every round makes, the cap on listed problems included."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infra.audit import round_check
from infra.audit.aside_process import AsideProcess
from infra.audit.book_check import note_owner
from infra.audit.decoding import EventDecoder
from infra.audit.pages import log_pages
from infra.audit.round_check import EVERY_ROUND, RoundCheck, RoundResults, Share
from infra.store.store import Store
from tests.infra.audit.test_verify import PLAYER_WINS, Attacker, play_some_rounds

round_ids = st.one_of(
    st.uuids().map(str),
    st.text(max_size=40),
    # A tampered id may hold lone surrogates (the standard library's JSON reads them).
    st.text(st.characters(codec=None, categories=["Cs"]), min_size=1, max_size=3),
)


@given(round_ids)
def test_every_round_is_checked_in_exactly_one_process(round_id: str) -> None:
    here = AsideProcess.kept_here
    assert here.mine(round_id) != here.rest().mine(round_id)
    assert EVERY_ROUND.mine(round_id)


def test_both_processes_get_rounds_to_check() -> None:
    ids = [str(uuid.UUID(int=n * 7919 + 1)) for n in range(300)]
    mine = sum(AsideProcess.kept_here.mine(round_id) for round_id in ids)
    assert 100 < mine < 200  # about half here, the rest in the other process


def test_a_share_and_its_rest_cover_every_part() -> None:
    share = Share(frozenset({0, 2}), 5)
    assert share.rest() == Share(frozenset({1, 3, 4}), 5)
    assert share.rest().rest() == share


# Rounds in the order of the pass: how many problems each has, which process checks it.
found = st.lists(st.tuples(st.integers(0, 3), st.booleans()), max_size=60)


@settings(max_examples=200)
@given(found, st.integers(1, 12))
def test_two_processes_problems_merge_into_one_process_s_list(
    rounds: list[tuple[int, bool]], cap: int
) -> None:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(round_check, "PROBLEMS_LISTED_MAX", cap)
        alone, here, there = RoundResults(), RoundResults(), RoundResults()
        for moment, (problems, over_there) in enumerate(rounds, start=1):
            for n in range(problems):
                problem = f"round {moment}: problem {n}"
                alone.add(moment, problem)
                (there if over_there else here).add(moment, problem)
        merged = here.merged(there)
        assert merged.problems() == alone.problems()
        assert (merged.listed, merged.unlisted) == (alone.listed, alone.unlisted)


def test_the_cap_is_the_listed_problems_of_every_kind() -> None:
    results = RoundResults()
    for n in range(round_check.PROBLEMS_LISTED_MAX + 3):
        results.add(n, f"problem {n}")
    assert len(results.listed) == round_check.PROBLEMS_LISTED_MAX
    assert results.problems()[-1] == "and 3 more discrepancies of rounds"


def _events(store: Store) -> list[tuple[int, Any]]:
    decode = EventDecoder(store.app.mapper).decode
    head = store.app.recorder.max_notification_id() or 0
    return [
        (e.id, decode(e.id, e.originator_id, e.originator_version, e.topic, e.state))
        for page in log_pages(store, head)
        for e in page
    ]


def _checked(events: list[tuple[int, Any]], share: Share, orphans: bool) -> RoundCheck:
    wallets: dict[Any, tuple[str, str]] = {}
    rounds = RoundCheck(None, None, wallets, share, orphans)
    for position, event in events:
        note_owner(wallets, event)
        rounds.add(position, event)
    rounds.finish()
    return rounds


def test_real_rounds_checked_in_two_shares_give_one_process_s_problems(
    store: Store, attacker: Attacker, monkeypatch: pytest.MonkeyPatch
) -> None:
    play_some_rounds(store)
    for _ in range(8):
        opened = store.app.open_house_round("pat", "real", PLAYER_WINS).result
        assert opened is not None
        store.app.place_bet(opened.round_id, "player", 1000)
        store.app.deal(opened.round_id)
    for nth in range(0, 9, 2):  # every other payout, in rounds of both shares
        payout = attacker.row("casino:BaccaratRound.PayoutMade", nth)
        attacker.set_state(
            payout.position, payout.state.replace(b'"net_cents":1000', b'"net_cents":9000')
        )
    events = _events(store)
    # Entries for a round never seen, and one that ends twice.
    held = next(e for _, e in events if type(e).__name__ == "FundsHeld")
    for n in range(3):
        orphan = copy.copy(held)
        orphan.__dict__["round_id"] = f"no-such-round-{n}"
        events.append((events[-1][0] + 1, orphan))
    ended = [(p, e) for p, e in events if type(e).__name__ == "Settled"]
    events.append((events[-1][0] + 1, ended[0][1]))
    monkeypatch.setattr(round_check, "SAVE_EVENTS_MAX", 5)  # some checked mid-pass
    for cap in (1000, 3, 1):
        monkeypatch.setattr(round_check, "PROBLEMS_LISTED_MAX", cap)
        alone = _checked(events, EVERY_ROUND, orphans=True)
        here = _checked(events, AsideProcess.kept_here, orphans=True)
        there = _checked(events, AsideProcess.kept_here.rest(), orphans=False)
        assert here.left == there.results.checked and there.left == here.results.checked
        merged = here.results.merged(there.results)
        assert merged.checked == alone.results.checked > 9
        assert merged.problems() == alone.results.problems()
        assert any("paid 9000" in p for _, p in here.results.listed + there.results.listed)
        if cap == 1000:  # the entries for rounds never seen come last, each named
            assert sum("no-such-round" in p for p in merged.problems()) == 3


def test_a_process_that_checked_other_than_the_rounds_left_to_it_is_a_discrepancy() -> None:
    from infra.audit.verify import _all_rounds

    aside: Any = object.__new__(AsideProcess)
    aside.started, aside.rounds = True, RoundResults(checked=2)
    here = RoundResults(checked=5)
    merged, problems = _all_rounds(here, 3, aside)
    assert merged.checked == 7
    assert problems == ["the rebuild's process checked 2 rounds, 3 were left to it"]
    assert _all_rounds(here, 2, aside)[1] == []
    aside.rounds = None
    assert _all_rounds(here, 1, aside)[1] == [
        "1 round left to the rebuild's process not checked: it sent back no round checks"
    ]
