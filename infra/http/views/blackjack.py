"""How a blackjack round looks in answers: boxes, hands, the dealer's visible cards,
who acts next and what they may do, and once settled, every payout.

The hole card is never shown while the round is in play (rules.md 3): the dealer's
cards come from `visible_dealer_cards`, and the seed, which would reveal the whole
shoe, only once the round is over.
"""

from __future__ import annotations

from typing import Any

from domain.blackjack import play as rules
from domain.blackjack import state as play_state
from domain.blackjack.hands import hand_value, is_blackjack, is_bust
from domain.blackjack.hole_card import hole_card_hidden
from domain.blackjack.round import INTERRUPTED_STATUS, SETTLED_STATUS, BlackjackRound
from domain.money import format_cents
from domain.rounds import secrets_revealed
from infra.http.views.wallets import net_split


def blackjack_round_view(round_: BlackjackRound) -> dict[str, Any]:
    settled = round_.status == SETTLED_STATUS
    return {
        "round_id": round_.round_id,
        "game": "blackjack",
        "variant": round_.hall,
        "status": round_.status,
        "mode": round_.mode,
        "player_id": round_.player_id,
        "hall": round_.hall,
        "limits": {
            "min": format_cents(round_.stake_min_cents),
            "max": format_cents(round_.stake_max_cents),
            "per": "box",
        },
        "decks": round_.decks,
        "seed_commitment": round_.seed_commitment,
        "seed": round_.seed if secrets_revealed(round_.status) else None,
        "shuffle_algorithm": round_.shuffle_algorithm,
        "bets": [{"box": box, "amount": format_cents(c)} for box, c in sorted(round_.bets.items())],
        "total_stake": format_cents(round_.total_bet_cents),
        "held": format_cents(0 if settled else round_.held_cents),
        "phase": round_.play["phase"] if round_.play is not None else None,
        "boxes": _boxes(round_),
        "dealer": _dealer(round_),
        **_turn(round_),
        **_settlement(round_),
        **net_split(round_.bonus_nets),
    }


def _boxes(round_: BlackjackRound) -> list[dict[str, Any]]:
    if round_.play is None:
        return [_unplayed_box(box, cents) for box, cents in sorted(round_.bets.items())]
    results = {payout["box"]: payout for payout in round_.payouts}
    return [_box(box, results.get(box["box_number"])) for box in round_.play["boxes"]]


def _unplayed_box(box: int, cents: int) -> dict[str, Any]:
    return {
        "box": box,
        "bet": format_cents(cents),
        "insurance": None,
        "even_money": False,
        "hands": [],
        "insurance_net": None,
        "net": None,
    }


def _box(box: play_state.Box, payout: dict[str, Any] | None) -> dict[str, Any]:
    insured = box["insurance_cents"] > 0
    settled_hands = payout["hands"] if payout is not None else [None] * len(box["hands"])
    hands = zip(box["hands"], settled_hands, strict=True)
    view = {
        "box": box["box_number"],
        "bet": format_cents(box["stake_cents"]),
        "insurance": format_cents(box["insurance_cents"]) if insured else None,
        "even_money": box["even_money_taken"],
        "hands": [_hand(index, hand, settled) for index, (hand, settled) in enumerate(hands)],
        "insurance_net": None,
        "net": None,
    }
    if payout is not None:
        view["insurance_net"] = format_cents(payout["insurance_net_cents"]) if insured else None
        view["net"] = format_cents(payout["net_cents"])
    return view


def _hand(index: int, hand: play_state.Hand, settled: dict[str, Any] | None) -> dict[str, Any]:
    value = hand_value(hand["cards"])
    return {
        "hand": index,
        "cards": list(hand["cards"]),
        "total": value.total,
        "soft": value.is_soft,
        "blackjack": is_blackjack(hand["cards"], hand["split"]),
        "stake": format_cents(hand["stake_cents"]),
        "doubled": hand["doubled"],
        "split": hand["split"],
        "finished": hand["finished"],
        "result": settled["outcome"] if settled else None,
        "net": format_cents(settled["net_cents"]) if settled else None,
    }


def _dealer(round_: BlackjackRound) -> dict[str, Any]:
    if round_.play is None:
        return {"cards": [], "total": None, "soft": None, "hole_card_hidden": False}
    cards = rules.visible_dealer_cards(round_.play)
    value = hand_value(cards)
    return {
        "cards": cards,
        "total": value.total,
        "soft": value.is_soft,
        "hole_card_hidden": hole_card_hidden(round_.play),
    }


def _turn(round_: BlackjackRound) -> dict[str, Any]:
    turn = round_.next_turn()
    if round_.play is None or turn is None:
        return {"next": None, "legal_actions": None}
    where = {"box": turn.box_number, "hand": turn.hand_index}
    if round_.status == INTERRUPTED_STATUS:
        # Play resumes at `next`; until then every action is refused (rules.md 4).
        return {"next": where, "legal_actions": None}
    actions = rules.legal_actions(round_.play, turn.box_number, turn.hand_index)
    return {"next": where, "legal_actions": {**where, "actions": actions}}


def _settlement(round_: BlackjackRound) -> dict[str, Any]:
    if round_.status != SETTLED_STATUS or round_.play is None:
        return {"outcome": None, "payouts": [], "net": None}
    dealer_cards = round_.play["dealer_cards"]
    outcome = {
        "dealer_total": hand_value(dealer_cards).total,
        "dealer_blackjack": is_blackjack(dealer_cards, split=False),
        "dealer_bust": is_bust(dealer_cards),
    }
    net = round_.player_net_cents
    return {
        "outcome": outcome,
        "payouts": [_payout(payout) for payout in round_.payouts],
        "net": {"player": format_cents(net), "casino": format_cents(-net)},
    }


def _payout(payout: dict[str, Any]) -> dict[str, Any]:
    insurance = payout["insurance_net_cents"]  # never 0 for an insured box: it wins or loses
    return {
        "box": payout["box"],
        "hands": [_hand_payout(index, hand) for index, hand in enumerate(payout["hands"])],
        "insurance": format_cents(insurance) if insurance else None,
        "net": format_cents(payout["net_cents"]),
    }


def _hand_payout(index: int, hand: dict[str, Any]) -> dict[str, Any]:
    return {
        "hand": index,
        "result": hand["outcome"],
        "stake": format_cents(hand["stake_cents"]),
        "net": format_cents(hand["net_cents"]),
    }
