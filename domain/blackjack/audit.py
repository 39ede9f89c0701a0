"""Re-checking a blackjack round from its events alone (rules.md 5).

The round is played again from its revealed seed: the shoe is re-derived, the
recorded bets are dealt from it, the recorded decisions (box, hand, action, and
nothing else) are applied with cards taken from the shoe, and the dealer draws
by the rules. The payouts this gives must be the recorded ones, and the
player's wallet must have posted the same result. Each function returns the
discrepancies it found, as sentences; an empty list means everything holds.
"""

from __future__ import annotations

from typing import Any

from domain import wallet as wallet_topics
from domain.blackjack import play as rules
from domain.blackjack import round as topics
from domain.blackjack import settlement
from domain.blackjack import state as play_state
from domain.blackjack.odds import chance_any_wins
from domain.blackjack.round import OPEN, SETTLED_STATUS, BlackjackRound
from domain.bonus import bonus_bet_problems, is_surebet
from domain.errors import IllegalAction
from domain.rounds import WalletEntry, replay, seed_problems


def verify_blackjack_round(events: list[Any], entries: list[WalletEntry]) -> list[str]:
    round_ = replay(events)
    assert isinstance(round_, BlackjackRound)
    if round_.status == OPEN or round_.seed is None:
        return []  # Nothing dealt yet, or its seed is sealed until it is over.
    name = f"round {round_.round_id}"
    if seeded := seed_problems(name, round_):
        return seeded
    problems = _check_cards(name, round_, events)
    if round_.status == SETTLED_STATUS:
        problems += _check_payouts(name, round_, events)
        problems += _check_wallet(name, round_, entries)
        bonus = (wallet_topics.BONUS_HELD, wallet_topics.BONUS_RELEASED,
             wallet_topics.ENDED_BONUS_RELEASED)  # fmt: skip
        held = [(e.player_id, e.topic, e.event) for e in entries if e.topic in bonus]
        surebet = is_surebet(chance_any_wins(len(round_.bets), insured=True))  # never
        problems += bonus_bet_problems(name, held, lambda _: surebet)
    return problems


def play_again(round_: BlackjackRound, events: list[Any]) -> play_state.PlayState:
    """The round's play state rebuilt from its seed, its bets and its decisions alone;
    a decision the rules did not allow then is refused (IllegalAction)."""
    shoe = round_.shoe()
    position = rules.initial_cards_needed(len(round_.bets))
    state = rules.start_play(round_.bets, shoe[:position])
    for decision in (e for e in events if type(e).TOPIC == topics.PLAYER_ACTED):
        count = rules.cards_needed(decision.action)
        cards = shoe[position : position + count]
        rules.check_action(state, decision.box, decision.hand, decision.action)
        state = rules.apply_action(state, decision.box, decision.hand, decision.action, cards)
        position += count
    while state["phase"] == play_state.PHASE_DEALER:
        state = rules.deal_dealer_card(state, shoe[position])
        position += 1
    return state


def _check_cards(name: str, round_: BlackjackRound, events: list[Any]) -> list[str]:
    shoe = round_.shoe()
    return [
        f"{name}: {type(e).TOPIC.rsplit('.', 1)[-1]} at shoe position {e.position} gave "
        f"{cards}, the shoe holds {shoe[e.position : e.position + len(cards)]}"
        for e in events
        if (cards := _cards_of(e)) and shoe[e.position : e.position + len(cards)] != cards
    ]


def _cards_of(event: Any) -> list[str]:
    topic = type(event).TOPIC
    if topic in (topics.CARD_DEALT, topics.DEALER_DREW):
        return [event.card]
    if topic == topics.HOLE_CARD_DEALT:  # null (face down) since rules.md 5(c), then:
        return [] if event.hole_card is None else [event.hole_card]
    if topic == topics.HOLE_CARD_REVEALED:  # the hole card turned over, at its place
        return [event.hole_card]
    if topic == topics.PLAYER_ACTED:
        return list(event.cards)
    return []


def _check_payouts(name: str, round_: BlackjackRound, events: list[Any]) -> list[str]:
    try:
        state = play_again(round_, events)
    except IllegalAction as refusal:
        return [f"{name}: a recorded decision is not legal: {refusal.detail}"]
    due = settlement.settle_round(state, settlement.RULESETS[round_.ruleset])
    paid = [e for e in events if type(e).TOPIC == topics.PAYOUT_MADE]
    recorded = [(e.box, [dict(hand) for hand in e.hands], e.insurance_net_cents) for e in paid]
    expected = [
        (box["box_number"], [dict(hand) for hand in box["hands"]], box["insurance_net_cents"])
        for box in due["boxes"]
    ]
    problems = [
        f"{name}: box {box} paid {hands} and insurance {insurance}, the shoe gives {owed}"
        for (box, hands, insurance), owed in zip(recorded, expected, strict=False)
        if (box, hands, insurance) != owed
    ]
    if len(recorded) != len(expected) or round_.player_net_cents != due["total_net_cents"]:
        problems.append(
            f"{name}: the payouts total {round_.player_net_cents} over {len(recorded)} boxes, "
            f"the shoe gives {due['total_net_cents']} over {len(expected)}"
        )
    return problems


def _check_wallet(name: str, round_: BlackjackRound, entries: list[WalletEntry]) -> list[str]:
    settled = [entry for entry in entries if entry.player_id == round_.player_id
               and entry.topic == wallet_topics.ROUND_SETTLED]  # fmt: skip
    # A result's bonus share (rules.md 9) is part of the player's result.
    bonus = sum(int(entry.event.net_cents) for entry in entries
                if entry.topic == wallet_topics.BONUS_SETTLED)  # fmt: skip
    posted = [int(entry.event.net_cents) + bonus for entry in settled]
    if posted != [round_.player_net_cents]:
        return [f"{name}: the wallet posted {posted}, the round says {round_.player_net_cents}"]
    return []
