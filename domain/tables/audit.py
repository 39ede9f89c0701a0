"""Re-checking a coup at a multi-player table from its events alone (rules.md 5).

The coup is played again from its revealed seed by its game's tableau: what the bank
did not cover at the deal must be what went back, every card
must be the shoe's, every recorded choice one the rules offered then (a choice by
the system, the rules' default), the outcome the tableau's, every player's every
payout what their bet won, and each wallet must have posted that player's result
and dealer points. Each function returns the discrepancies found, as sentences.
"""

from __future__ import annotations

from typing import Any

from domain import wallet as wallet_topics
from domain.baccarat.odds import chance_any_wins
from domain.baccarat.rules import hand_total, points_for_stake
from domain.bonus import bonus_bet_problems, is_surebet
from domain.rounds import WalletEntry, replay, seed_problems
from domain.tables import bank, old_rounds
from domain.tables.coup import BY_SYSTEM, OPEN, SETTLED_STATUS, Coup
from domain.tables.games import rules_of
from domain.tables.tableau import Choice, Draw, Over

CARD_TOPICS = (
    "casino:Coup.CardDealt",
    "casino:Coup.ThirdCardDrawn",
    old_rounds.CARD_DEALT,  # a house or P2P round stored before baccarat was one model
    old_rounds.THIRD_CARD_DRAWN,
)
STEPS_MAX = 32  # cards and choices of one coup, however it plays


def verify_coup(events: list[Any], entries: list[WalletEntry]) -> list[str]:
    coup = replay(events)
    assert isinstance(coup, Coup)
    if coup.status == OPEN or coup.seed is None:
        return []  # Nothing dealt yet, or its seed is sealed until it is over.
    name = f"{'round' if coup.one_seat else 'coup'} {coup.round_id}"
    if seeded := seed_problems(name, coup):
        return seeded
    problems = _check_cards(name, coup, events)
    if coup.status == SETTLED_STATUS:
        problems += _check_play(name, coup)
        problems += _check_wallets(name, coup, entries)
        problems += bonus_bet_problems(name, _bonus_entries(entries), lambda player: is_surebet(
            chance_any_wins(coup.bets.get(player, {}), coup.decks)))  # fmt: skip
    else:
        moved = (wallet_topics.ROUND_SETTLED, wallet_topics.POINTS_CHANGED,
                 wallet_topics.COMMISSION_CHARGED)  # fmt: skip
        problems += [
            f"{name}: voided, yet {e.topic} was posted" for e in entries if e.topic in moved
        ]
    return problems


def _check_cards(name: str, coup: Coup, events: list[Any]) -> list[str]:
    shoe = coup.shoe()
    return [
        f"{name}: card at shoe position {e.position} was {e.card}, the shoe holds "
        f"{shoe[e.position]}"
        for e in events
        if type(e).TOPIC in CARD_TOPICS and shoe[e.position] != e.card
    ]


def _check_play(name: str, coup: Coup) -> list[str]:
    """The coup again from the shoe and the recorded choices, step by step."""
    rules, shoe = rules_of(coup.variant), coup.shoe()
    hands: dict[str, list[str]] = {}
    for position, hand in enumerate(rules.deal_order):
        hands.setdefault(hand, []).append(shoe[position])
    position, made, stakes = len(rules.deal_order), list(coup.decisions), coup.spot_stakes()
    choices: dict[str, str] = {}
    problems = _check_cover(name, coup) + _check_choosers(name, coup)
    for _ in range(STEPS_MAX):
        step = rules.tableau(hands, choices, stakes)
        if isinstance(step, Over):
            late = [f"{name}: {len(made)} choice(s) recorded after the coup was over"]
            return problems + _check_result(name, coup, hands, step) + (late if made else [])
        if isinstance(step, Draw):
            hands[step.hand].append(shoe[position])
            position += 1
            continue
        assert isinstance(step, Choice)
        decision = made.pop(0) if made else None
        problem = _check_choice(name, step, decision, coup.playing.get(step.chooser))
        if problem is not None or decision is None:
            return [*problems, problem or f"{name}: a choice is missing"]
        choices[step.hand] = decision["action"]
    return [*problems, f"{name}: the coup does not end within {STEPS_MAX} steps"]


def _check_cover(name: str, coup: Coup) -> list[str]:
    """What went back at the deal must be what the bank did not cover, seat by seat in
    play order (rules.md 2.3), and nothing else: the bets as placed are those that
    stand plus what went back. Coups stored before the play order was recorded
    returned nothing."""
    if coup.banker_id is None or not coup.play_order:
        return []
    placed = {player: dict(spots) for player, spots in coup.bets.items()}
    for part in coup.returned:
        spots = placed.setdefault(part["player_id"], {})
        spots[part["spot"]] = part["amount_cents"] + part["covered_cents"]
    due = bank.uncovered_parts(placed, coup.play_order, coup.bank_cents)
    recorded = [(r["player_id"], r["spot"], r["amount_cents"], r["covered_cents"])
                for r in coup.returned]  # fmt: skip
    if due == recorded:
        return []
    return [f"{name}: returned {recorded} at the deal, the bank's cover in play order says {due}"]


def _check_choosers(name: str, coup: Coup) -> list[str]:
    """Who played each hand must follow from the bets and the play order at the deal
    (coups stored before the order was recorded are taken as they are)."""
    if not coup.play_order:
        return []
    due = rules_of(coup.variant).choosers(coup.bets, coup.play_order, coup.banker_id)
    if due == coup.playing:
        return []
    return [f"{name}: {coup.playing} played the hands, the bets and play order say {due}"]


def _check_choice(
    name: str, step: Choice, decision: dict[str, Any] | None, chooser: str | None
) -> str | None:
    if decision is None or decision["hand"] != step.hand:
        return f"{name}: the rules ask a choice for the {step.hand} hand, none was recorded"
    if decision["player_id"] != chooser:
        return (
            f"{name}: the {step.hand} hand's choice is recorded for {decision['player_id']}, "
            f"{chooser} plays it"
        )
    if decision["action"] not in step.actions:
        return f"{name}: {decision['action']} is no choice the rules offered ({step.actions})"
    if decision["by"] == BY_SYSTEM and decision["action"] != step.default:
        return f"{name}: the system chose {decision['action']}, the rules say {step.default}"
    return None


def _check_result(name: str, coup: Coup, hands: dict[str, list[str]], over: Over) -> list[str]:
    rules, problems = rules_of(coup.variant), []
    if hands != coup.hands or over.outcome != coup.outcome:
        problems.append(
            f"{name}: recorded {coup.hands} ({coup.outcome}), the shoe gives {hands} "
            f"({over.outcome})"
        )
    totals = {hand: hand_total(cards) for hand, cards in hands.items()}
    for payout in coup.payouts:
        due = rules.bet_net(payout["spot"], payout["stake_cents"], totals, coup.tie_pays)
        if due != payout["net_cents"]:
            whose = "" if coup.one_seat else f"{payout['player_id']}'s "
            problems.append(
                f"{name}: {whose}{payout['spot']} paid {payout['net_cents']}, due {due}"
            )
    staked = {(p["player_id"], p["spot"]): p["stake_cents"] for p in coup.payouts}
    bets = {(player, spot): cents for player, spots in coup.bets.items()
            for spot, cents in spots.items()}  # fmt: skip
    if staked != bets:
        problems.append(f"{name}: the payouts cover {staked}, the bets were {bets}")
    return problems + _check_bank(name, coup)


def _check_bank(name: str, coup: Coup) -> list[str]:
    """The commission (on the banker's winnings, or at a P2P table on every stake), and
    the bank after the coup."""
    if coup.banker_id is None:
        return []
    rules, banker_net = rules_of(coup.variant), coup.banker_net_cents()
    due = coup.commission_due(rules)
    problems = []
    if coup.commission_cents != due:
        problems.append(f"{name}: commission {coup.commission_cents}, due {due}")
    if rules.player_banked and coup.bank_after_cents != coup.bank_cents + banker_net - due:
        problems.append(
            f"{name}: the bank went from {coup.bank_cents} to {coup.bank_after_cents}, "
            f"the coup says {coup.bank_cents + banker_net - due}"
        )
    return problems


def _check_wallets(name: str, coup: Coup, entries: list[WalletEntry]) -> list[str]:
    """What each player's wallet posted for the coup must be what the coup says: against
    the house, each result and dealer points; against a player's bank, each result
    (the banker's before the commission), the commission, and the bank's hold moving
    as the bank did (or released whole, passed on)."""
    rules, expected = rules_of(coup.variant), _dealer_points(coup)
    for player_id, net in coup.nets().items():
        expected[(player_id, wallet_topics.ROUND_SETTLED)] = net
    if coup.banker_id is not None:
        expected[(coup.banker_id, wallet_topics.ROUND_SETTLED)] = coup.banker_net_cents()
        if coup.commission_cents or rules.commission_on_stakes:
            expected[(coup.banker_id, wallet_topics.COMMISSION_CHARGED)] = coup.commission_cents
    problems = []
    if rules.player_banked and coup.banker_id is not None:
        moved = _bank_moved(coup, entries)
        if moved not in (coup.bank_after_cents - coup.bank_cents, -coup.bank_cents):
            problems.append(f"{name}: the bank's hold moved {moved}, the bank by "
                            f"{coup.bank_after_cents - coup.bank_cents}")  # fmt: skip
    posted: dict[tuple[str, str], int] = {}
    for entry in entries:
        amount = _amount_of(entry)
        if amount is not None:
            # A result's bonus share (rules.md 9) is part of the player's result.
            bonus = entry.topic == wallet_topics.BONUS_SETTLED
            key = (entry.player_id, wallet_topics.ROUND_SETTLED if bonus else entry.topic)
            posted[key] = posted.get(key, 0) + amount
    kind = name.split()[0]  # a round of one seat, or a coup
    return (
        problems
        + [
            f"{name}: {who}'s wallet shows {topic.rsplit('.', 1)[-1]} {posted.get((who, topic))}, "
            f"the {kind} says {amount}"
            for (who, topic), amount in sorted(expected.items())
            if posted.get((who, topic)) != amount
        ]
        + [
            f"{name}: {who}'s wallet posted {topic.rsplit('.', 1)[-1]} for a {kind} "
            "it has no bet in"
            for (who, topic) in sorted(posted)
            if (who, topic) not in expected
        ]
    )


def _bonus_entries(entries: list[WalletEntry]) -> list[tuple[str, str, Any]]:
    bonus = (wallet_topics.BONUS_HELD, wallet_topics.BONUS_RELEASED,
             wallet_topics.ENDED_BONUS_RELEASED)  # fmt: skip
    return [(e.player_id, e.topic, e.event) for e in entries if e.topic in bonus]


def _dealer_points(coup: Coup) -> dict[tuple[str, str], int]:
    """Dealer points move in baccarat against the house and at a P2P table: each player
    gains one per dollar staked, a P2P dealer loses as many (rules.md 2.1)."""
    rules, points = rules_of(coup.variant), wallet_topics.POINTS_CHANGED
    if coup.banker_id is not None and not rules.dealer_points:
        return {}
    moved = {(who, points): points_for_stake(coup.stake_of(who)) for who in coup.bets}
    if coup.banker_id is not None:
        moved[(coup.banker_id, points)] = -points_for_stake(coup.total_stake_cents)
    return moved


def _bank_moved(coup: Coup, entries: list[WalletEntry]) -> int:
    signs = {wallet_topics.BANK_HELD: 1, wallet_topics.BANK_RELEASED: -1}
    return sum(signs[e.topic] * int(e.event.amount_cents) for e in entries if e.topic in signs)


def _amount_of(entry: WalletEntry) -> int | None:
    if entry.topic == wallet_topics.COMMISSION_CHARGED:
        return int(entry.event.commission_cents)
    if entry.topic in (wallet_topics.ROUND_SETTLED, wallet_topics.BONUS_SETTLED):
        return int(entry.event.net_cents)
    if entry.topic == wallet_topics.POINTS_CHANGED:
        return int(entry.event.change)
    return None
