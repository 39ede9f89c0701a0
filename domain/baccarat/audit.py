"""Re-checking rounds from their events alone (rules.md 5, `casino audit verify`).

Pure functions over stored events: re-derive the shoe from the revealed seed,
check the commitment, every card, the coup, every payout, the commission, the
wallets' settlements and the dealer points. Each returns the discrepancies it
found, as sentences; an empty list means everything holds.
"""

from __future__ import annotations

from typing import Any

from domain import wallet as wallet_topics
from domain.baccarat import round as topics
from domain.baccarat import rules as baccarat
from domain.baccarat.round import OPEN, SETTLED_STATUS, BaccaratRound
from domain.rounds import WalletEntry, replay, seed_problems


def verify_baccarat_round(events: list[Any], entries: list[WalletEntry]) -> list[str]:
    round_ = replay(events)
    assert isinstance(round_, BaccaratRound)
    if round_.status == OPEN or round_.seed is None:
        return []  # Nothing dealt yet, or its seed is sealed until it is over.
    name = f"round {round_.round_id}"
    if seeded := seed_problems(name, round_):
        return seeded
    problems = _check_cards(name, round_, events)
    if round_.status == SETTLED_STATUS:
        problems += _check_settlement(name, round_, events, entries)
    else:
        problems += [f"{name}: voided, yet {e.topic} was posted" for e in entries
                     if e.topic in (wallet_topics.ROUND_SETTLED, wallet_topics.POINTS_CHANGED,
                                    wallet_topics.COMMISSION_CHARGED)]  # fmt: skip
    return problems


def _check_cards(name: str, round_: BaccaratRound, events: list[Any]) -> list[str]:
    shoe = round_.shoe()
    dealt = [e for e in events if type(e).TOPIC in (topics.CARD_DEALT, topics.THIRD_CARD_DRAWN)]
    return [
        f"{name}: card at shoe position {e.position} was {e.card}, the shoe holds "
        f"{shoe[e.position]}"
        for e in dealt
        if shoe[e.position] != e.card
    ]


def _check_settlement(
    name: str, round_: BaccaratRound, events: list[Any], entries: list[WalletEntry]
) -> list[str]:
    coup = baccarat.play_coup(round_.shoe())
    problems = []
    if coup.outcome != round_.outcome:
        problems.append(f"{name}: recorded outcome {round_.outcome}, the shoe gives {coup.outcome}")
    for payout in (e for e in events if type(e).TOPIC == topics.PAYOUT_MADE):
        due = baccarat.bet_net_cents(payout.spot, payout.stake_cents, coup.outcome, round_.tie_pays)
        if due != payout.net_cents:
            problems.append(f"{name}: {payout.spot} paid {payout.net_cents}, due {due}")
    expected_commission = 0
    if round_.dealer_id is not None:
        rate = round_.commission_basis_points
        expected_commission = baccarat.commission_cents(round_.total_stake_cents, rate)
    if round_.commission_cents != expected_commission:
        problems.append(f"{name}: commission {round_.commission_cents}, due {expected_commission}")
    return problems + _check_wallets(name, round_, entries)


def _check_wallets(name: str, round_: BaccaratRound, entries: list[WalletEntry]) -> list[str]:
    """What each wallet posted for the round must be what the round says."""
    dollars = baccarat.points_for_stake(round_.total_stake_cents)
    expected: dict[tuple[str, str], int] = {
        (round_.player_id, wallet_topics.ROUND_SETTLED): round_.player_net_cents,
        (round_.player_id, wallet_topics.POINTS_CHANGED): dollars,
    }
    if round_.dealer_id is not None:
        expected[(round_.dealer_id, wallet_topics.ROUND_SETTLED)] = -round_.player_net_cents
        expected[(round_.dealer_id, wallet_topics.COMMISSION_CHARGED)] = round_.commission_cents
        expected[(round_.dealer_id, wallet_topics.POINTS_CHANGED)] = -dollars
    posted: dict[tuple[str, str], int] = {}
    for entry in entries:
        amount = _amount_of(entry)
        if amount is not None:
            key = (entry.player_id, entry.topic)
            posted[key] = posted.get(key, 0) + amount
    return [
        f"{name}: {who}'s wallet shows {topic.rsplit('.', 1)[-1]} {posted.get((who, topic))}, "
        f"the round says {amount}"
        for (who, topic), amount in expected.items()
        if posted.get((who, topic)) != amount
    ]


def _amount_of(entry: WalletEntry) -> int | None:
    event = entry.event
    if entry.topic == wallet_topics.ROUND_SETTLED:
        return int(event.net_cents)
    if entry.topic == wallet_topics.COMMISSION_CHARGED:
        return int(event.commission_cents)
    if entry.topic == wallet_topics.POINTS_CHANGED:
        return int(event.change)
    return None
