"""Re-checking a coup from its events (rules.md 5): an honest coup has no discrepancy;
a choice credited to someone who did not play the hand, hands given to the wrong
players, or a choice recorded after the coup was over are each named."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from domain.application import CasinoApplication
from domain.ids import wallet_uuid
from domain.rounds import WalletEntry
from domain.settings import GameSettings
from domain.tables.audit import verify_coup
from domain.wallet import topic_of
from infra.commands import with_commands
from tests.domain.tables.test_bank_steps import PUNTO_ON_5, chemin_de_fer, coup

PLAYERS = ("ann", "bob", "cat")


@pytest.fixture
def app() -> Iterator[CasinoApplication]:
    application = with_commands(games=GameSettings(test_mode=True))
    for name in PLAYERS:
        application.register_player(name, name.title())
        application.deposit(name, "real", 1_000_000)
    yield application
    application.close()


@pytest.fixture
def played(app: CasinoApplication) -> tuple[list[Any], list[WalletEntry]]:
    """Bob stakes the most, so he plays the punto's 5 and stands; Cat bets too."""
    round_id = coup(app, chemin_de_fer(app), PUNTO_ON_5)
    app.place_bet(round_id, "punto", 2000, player_id="bob")
    app.place_bet(round_id, "punto", 1000, player_id="cat")
    app.deal(round_id)
    app.act(round_id, None, 0, "stand", player_id="bob")
    return trail(app, round_id)


def trail(app: CasinoApplication, round_id: str) -> tuple[list[Any], list[WalletEntry]]:
    """The coup's events, and its players' wallet entries for it."""
    events = list(app.events.get(app.round(round_id).id))
    entries = [
        WalletEntry(player, topic_of(event), event)
        for player in PLAYERS
        for event in app.events.get(wallet_uuid(player, "real"))
        if getattr(event, "round_id", None) == round_id
    ]
    return events, entries


def altered(events: list[Any], topic: str, **fields: Any) -> list[Any]:
    return [_with(e, **fields) if topic == type(e).TOPIC else e for e in events]


def _with(event: Any, **fields: Any) -> Any:
    changed = copy.copy(event)
    object.__setattr__(changed, "__dict__", {**event.__dict__, **fields})
    return changed


def test_an_honest_coup_has_no_discrepancy(played: tuple[list[Any], list[WalletEntry]]) -> None:
    assert verify_coup(*played) == []


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (
            lambda events: altered(events, "casino:Coup.DecisionMade", player_id="ann"),
            "choice is recorded for ann, bob plays it",
        ),
        (
            lambda events: altered(
                events, "casino:Coup.PlayersChosen", playing={"banker": "ann", "punto": "cat"}
            ),
            "the bets and play order say",
        ),
    ],
    ids=["a choice credited to the banker", "the punto given to a lower stake"],
)
def test_who_made_each_choice_must_be_who_plays_the_hand(
    played: tuple[list[Any], list[WalletEntry]],
    tamper: Callable[[list[Any]], list[Any]],
    named: str,
) -> None:
    events, entries = played
    problems = verify_coup(tamper(events), entries)
    assert any(named in problem for problem in problems), problems


def test_a_choice_recorded_after_the_coup_was_over_is_named(
    played: tuple[list[Any], list[WalletEntry]],
) -> None:
    events, entries = played
    made = next(e for e in events if type(e).TOPIC == "casino:Coup.DecisionMade")
    end = next(i for i, e in enumerate(events) if type(e).TOPIC == "casino:Coup.Settled")
    extra = _with(made, hand="banker", action="draw", player_id="ann")
    forged = [
        _with(e, originator_version=n + 1)
        for n, e in enumerate([*events[:end], extra, *events[end:]])
    ]
    problems = verify_coup(forged, entries)
    assert any("recorded after the coup was over" in problem for problem in problems), problems


def test_a_return_at_the_deal_that_does_not_follow_the_play_order_is_named(
    app: CasinoApplication,
) -> None:
    """Cat (seat 3) bets first, Bob (seat 2) after; the $100 bank covers Bob's $70 and
    $30 of Cat's $60. A log saying Bob's bet went back instead is caught."""
    round_id = coup(app, chemin_de_fer(app), PUNTO_ON_5)
    app.place_bet(round_id, "punto", 6_000, player_id="cat")
    app.place_bet(round_id, "punto", 7_000, player_id="bob")
    app.deal(round_id)
    app.act(round_id, None, 0, "stand", player_id="bob")
    events, entries = trail(app, round_id)
    assert verify_coup(events, entries) == []
    returned = next(e for e in events if type(e).TOPIC == "casino:Coup.UncoveredBetReturned")
    assert (returned.player_id, returned.amount_cents) == ("cat", 3_000)
    forged = altered(events, "casino:Coup.UncoveredBetReturned", player_id="bob",
                     amount_cents=3_000, covered_cents=4_000)  # fmt: skip
    problems = verify_coup(forged, entries)
    assert any("the bank's cover in play order says" in problem for problem in problems), problems
