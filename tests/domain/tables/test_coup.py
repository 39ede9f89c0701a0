"""A coup at a multi-player table, given / when / then: many players' bets, the deal,
and a choice owed by a named participant, made by them or by the system.

Punto banco owes no choice, so the choices are tested through a game made for the
test (`CHOOSING`): whoever plays the punto hand chooses to draw or stand on a 5.
"""

import datetime
from collections.abc import Mapping, Sequence

import pytest

from domain.baccarat.rules import BANKER, PLAYER, hand_total, outcome_of
from domain.errors import (
    AboveTableMaximum,
    BelowTableMinimum,
    IllegalAction,
    NoBets,
    NoStakeOnSpot,
    NotYourDecision,
    RoundNotOpen,
)
from domain.tables.coup import Coup
from domain.tables.punto_banco import PUNTO_BANCO_RULES
from domain.tables.tableau import Choice, Draw, Over, Step, TableGameRules, highest_stake
from domain.unit import MemoryBox
from tests.domain.events import given, kinds, then

SEED = "00" * 32
DEADLINE = "2026-12-01T12:00:30+00:00"
EXAMPLE = ["10", "K", "3", "10", "10", "Q"]  # player wins, 3 to 0


def choosing_tableau(
    hands: Mapping[str, Sequence[str]], choices: Mapping[str, str], stakes: Mapping[str, int]
) -> Step:
    player, banker = hands[PLAYER], hands[BANKER]
    if hand_total(player) == 5 and len(player) == 2 and PLAYER not in choices:
        return Choice(PLAYER, "punto", ("draw", "stand"), "draw")
    if choices.get(PLAYER) == "draw" and len(player) == 2:
        return Draw(PLAYER)
    return Over(outcome_of(hand_total(player), hand_total(banker)))


def punto_by_highest_stake(
    bets: Mapping[str, Mapping[str, int]], order: Sequence[str], banker: str | None
) -> dict[str, str]:
    punter = highest_stake(bets, order, PLAYER)
    return {"punto": punter} if punter is not None else {}


CHOOSING = TableGameRules(
    name="choosing",
    seats=("1", "2", "3"),
    spots=(PLAYER, BANKER),
    deal_order=(PLAYER, BANKER, PLAYER, BANKER),
    tableau=choosing_tableau,
    bet_net=PUNTO_BANCO_RULES.bet_net,
    choosers=punto_by_highest_stake,
)
ORDER = ["ann", "bob", "cat"]
BEFORE = datetime.datetime.fromisoformat(DEADLINE) - datetime.timedelta(seconds=1)
FIVE = ["2", "K", "3", "9", "4"]  # player 2,3 = 5: a choice; banker K,9 = 9; then a 4


def opened(shoe: list[str] = EXAMPLE, variant: str = "punto_banco") -> Coup:
    return Coup.open(table_id="t1", variant=variant, mode="real", decks=8, tie_pays=8,
                     limits=(500, 10_000), box=MemoryBox(), seed=SEED, shoe_prefix=shoe,
                     banker_id=None, bank_cents=0, commission_basis_points=0)  # fmt: skip


def betting(*bets: tuple[str, str, int], shoe: list[str] = EXAMPLE) -> Coup:
    rules = CHOOSING if shoe is FIVE else PUNTO_BANCO_RULES
    variant = rules.name
    return given(opened(shoe, variant), *(lambda c, b=bet: c.place_bet(rules, *b) for bet in bets))


def test_each_player_bets_on_their_own_spots() -> None:
    coup = betting()
    coup.place_bet(PUNTO_BANCO_RULES, "ann", "player", 1000)
    coup.place_bet(PUNTO_BANCO_RULES, "bob", "player", 500)
    coup.place_bet(PUNTO_BANCO_RULES, "ann", "tie", 500)
    assert then(coup) == [
        (
            "BetPlaced",
            {"player_id": "ann", "spot": "player", "amount_cents": 1000, "chips": [5, 5]},
        ),
        ("BetPlaced", {"player_id": "bob", "spot": "player", "amount_cents": 500, "chips": [5]}),
        ("BetPlaced", {"player_id": "ann", "spot": "tie", "amount_cents": 500, "chips": [5]}),
    ]
    assert (coup.stake_of("ann"), coup.stake_of("bob"), coup.total_stake_cents) == (1500, 500, 2000)


def test_limits_apply_to_each_players_total_stake_in_the_coup() -> None:
    coup = betting(("ann", "player", 9_000), ("bob", "player", 9_000))
    with pytest.raises(AboveTableMaximum):
        coup.place_bet(PUNTO_BANCO_RULES, "ann", "banker", 2_000)
    coup.place_bet(PUNTO_BANCO_RULES, "bob", "banker", 1_000)  # bob's own total: $100
    with pytest.raises(BelowTableMinimum):
        coup.place_bet(PUNTO_BANCO_RULES, "cat", "tie", 100)
    assert kinds(coup) == ["BetPlaced"]


def test_a_player_takes_back_only_their_own_stake() -> None:
    coup = betting(("ann", "player", 1000), ("bob", "player", 500))
    assert coup.remove_bet(PUNTO_BANCO_RULES, "bob", "player") == 500
    with pytest.raises(NoStakeOnSpot):
        coup.remove_bet(PUNTO_BANCO_RULES, "bob", "player")
    assert then(coup) == [
        ("BetRemoved", {"player_id": "bob", "spot": "player", "amount_cents": 500})
    ]
    assert coup.bets == {"ann": {"player": 1000}}


def test_the_deal_plays_the_coup_once_and_pays_every_player_and_spot() -> None:
    coup = betting(("ann", "player", 1000), ("bob", "banker", 2000), ("bob", "tie", 500))
    coup.deal(PUNTO_BANCO_RULES, ORDER, set(), DEADLINE)
    events = then(coup)
    assert [kind for kind, _ in events] == ["CardDealt"] * 4 + ["ThirdCardDrawn"] * 2 + [
        "PayoutMade"
    ] * 3 + ["Settled"]
    assert [fields for kind, fields in events if kind == "PayoutMade"] == [
        {"player_id": "ann", "spot": "player", "stake_cents": 1000, "net_cents": 1000},
        {"player_id": "bob", "spot": "banker", "stake_cents": 2000, "net_cents": -2000},
        {"player_id": "bob", "spot": "tie", "stake_cents": 500, "net_cents": -500},
    ]
    assert events[-1] == (
        "Settled",
        {
            "outcome": "player",
            "totals": {"player": 3, "banker": 0},
            "seed": SEED,
            "bank_after_cents": 0,
            "shoe_prefix": EXAMPLE,
        },
    )
    assert coup.nets() == {"ann": 1000, "bob": -2500}
    with pytest.raises(RoundNotOpen):
        coup.place_bet(PUNTO_BANCO_RULES, "ann", "tie", 500)


def test_a_coup_without_bets_is_not_dealt() -> None:
    with pytest.raises(NoBets):
        betting().deal(PUNTO_BANCO_RULES, ORDER, set(), DEADLINE)


def test_a_choice_is_owed_by_the_participant_who_plays_the_hand() -> None:
    coup = betting(("ann", "player", 1000), ("bob", "player", 500), shoe=FIVE)
    coup.deal(CHOOSING, ORDER, set(), DEADLINE)
    assert kinds(coup)[-1] == "DecisionOwed"
    assert coup.pending == {"player_id": "ann", "hand": "player", "actions": ["draw", "stand"],
                            "default": "draw", "deadline": DEADLINE}  # fmt: skip
    with pytest.raises(NotYourDecision) as refused:
        coup.choose(CHOOSING, "bob", "stand", BEFORE, set(), DEADLINE)
    assert refused.value.facts == {"owed_by": "ann"}
    with pytest.raises(IllegalAction):
        coup.choose(CHOOSING, "ann", "hit", BEFORE, set(), DEADLINE)
    coup.choose(CHOOSING, "ann", "stand", BEFORE, set(), DEADLINE)
    events = then(coup)
    assert events[0] == (
        "DecisionMade",
        {"hand": "player", "action": "stand", "player_id": "ann", "by": "player"},
    )
    assert (coup.status, coup.outcome, coup.hands["player"]) == ("settled", "banker", ["2S", "3S"])


def test_the_system_makes_the_choice_of_an_absent_participant_as_the_rules_say() -> None:
    coup = betting(("ann", "player", 1000), shoe=FIVE)
    coup.deal(CHOOSING, ORDER, {"ann"}, DEADLINE)
    events = then(coup)
    assert "DecisionOwed" not in [kind for kind, _ in events]
    assert ("DecisionMade", {"hand": "player", "action": "draw", "player_id": "ann",
                             "by": "system"}) in events  # fmt: skip
    assert coup.hands["player"] == ["2S", "3S", "4S"]  # 9 against the banker's 9: a tie


def test_a_choice_not_made_in_time_is_made_by_the_system() -> None:
    coup = betting(("ann", "player", 1000), shoe=FIVE)
    coup.deal(CHOOSING, ORDER, set(), DEADLINE)
    coup.collect_events()
    coup.choose_by_system(CHOOSING, set(), DEADLINE)
    assert then(coup)[0] == (
        "DecisionMade",
        {"hand": "player", "action": "draw", "player_id": "ann", "by": "system"},
    )
    assert (coup.status, coup.outcome) == ("settled", "tie")
    with pytest.raises(IllegalAction, match="no choice is owed"):
        coup.choose_by_system(CHOOSING, set(), DEADLINE)


def test_a_choice_is_refused_once_its_time_has_run_out() -> None:
    coup = betting(("ann", "player", 1000), shoe=FIVE)
    coup.deal(CHOOSING, ORDER, set(), DEADLINE)
    coup.collect_events()
    at_the_deadline = datetime.datetime.fromisoformat(DEADLINE)
    with pytest.raises(IllegalAction, match="ran out") as refused:
        coup.choose(CHOOSING, "ann", "stand", at_the_deadline, set(), DEADLINE)
    assert refused.value.facts == {"deadline": DEADLINE}
    assert then(coup) == [] and coup.pending is not None


def test_who_plays_the_hand_and_the_play_order_are_recorded_at_the_deal() -> None:
    coup = betting(("cat", "player", 1000), ("bob", "player", 1000), shoe=FIVE)
    coup.deal(CHOOSING, ORDER, set(), DEADLINE)
    assert then(coup)[0] == ("PlayersChosen", {"playing": {"punto": "bob"}, "order": ORDER})
    assert coup.pending is not None and coup.pending["player_id"] == "bob"


def test_cancelling_takes_every_spot_back_at_once_whatever_the_minimum() -> None:
    coup = betting(("ann", "banker", 500), ("ann", "tie", 100))  # $6 in all; the minimum is $5
    with pytest.raises(BelowTableMinimum):
        coup.remove_bet(PUNTO_BANCO_RULES, "ann", "banker")  # one at a time, $1 would be left
    assert coup.cancel_bets("ann") == 600
    assert kinds(coup) == ["BetRemoved", "BetRemoved"] and coup.bets == {}
    with pytest.raises(NoBets):
        coup.cancel_bets("ann")


def test_voiding_an_undealt_coup_reveals_its_seed() -> None:
    coup = betting(("ann", "player", 1000))
    coup.void("no action before the idle timeout")
    revealed = {"reason": "no action before the idle timeout", "seed": SEED, "shoe_prefix": EXAMPLE}
    assert then(coup) == [("Voided", revealed)]
