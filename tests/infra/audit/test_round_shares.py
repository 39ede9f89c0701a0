"""The round checks shared out between verify's two processes (infra/audit/round_check.py):
every round is checked by exactly one of them, and their problems merge into the very
list one process checking every round makes, the cap on listed problems included."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from infra.audit.aside_process import AsideProcess
from infra.audit.chain_check import PROBLEMS_LISTED_MAX
from infra.audit.round_check import EVERY_ROUND, RoundResults, Share


@given(st.one_of(st.uuids().map(str), st.text(max_size=40)))
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


# Keys as the pass makes them, each round's problems in a run; which process checks it.
found = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 50_000), st.integers(1, 3), st.booleans()),
    max_size=60,
    unique_by=lambda item: (item[0], item[1]),
)


@settings(max_examples=200)
@given(found, st.integers(1, 12))
def test_two_processes_problems_merge_into_one_process_s_list(
    rounds: list[tuple[int, int, int, bool]], cap: int
) -> None:
    # Problems arrive in the order of their keys in each process, as in a pass.
    ordered = sorted(rounds, key=lambda item: (item[0], item[1]))
    alone, here, there = RoundResults(), RoundResults(), RoundResults()
    for phase, at, problems, over_there in ordered:
        for n in range(problems):
            problem = f"round at {phase}/{at}: problem {n}"
            alone.add((phase, at), problem, cap)
            (there if over_there else here).add((phase, at), problem, cap)
    merged = here.merged(there, cap)
    assert merged.problems() == alone.problems()
    assert (merged.listed, merged.unlisted) == (alone.listed, alone.unlisted)


def test_the_cap_is_the_listed_problems_of_every_kind() -> None:
    results = RoundResults()
    for n in range(PROBLEMS_LISTED_MAX + 3):
        results.add((0, n), f"problem {n}")
    assert len(results.listed) == PROBLEMS_LISTED_MAX
    assert results.problems()[-1] == "and 3 more discrepancies of rounds"
