"""A provider's round re-derived by the auditor (`casino audit verify`, rules.md 10):
its money balances. Pure: given the round's events and its wallet's entries.

- every bet took its stake from the player once, every win and rollback credited
  once, each for the amount the round recorded, against `casino:games:{provider}`;
- a rollback gave back exactly what its bet took;
- stakes taken = rollbacks + wins + the house's result, where the house's result is
  what `casino:games:{provider}` kept of the round.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from domain.providers.provider import games_account
from domain.providers.round import BET_ROLLED_BACK, BET_TAKEN, WIN_PAID
from domain.rounds import WalletEntry, replay
from domain.wallet import CREDITED, STAKE_TAKEN, topic_of

# What each of the round's calls posts on the wallet: its event and kind.
WALLET_SIDE = {BET_TAKEN: (STAKE_TAKEN, None), WIN_PAID: (CREDITED, "win"),
               BET_ROLLED_BACK: (CREDITED, "rollback")}  # fmt: skip


Call = tuple[str, str | None, str, int]  # wallet event, kind, transaction id, cents


def verify_provider_round(events: list[Any], entries: list[WalletEntry]) -> list[str]:
    round_ = replay(events)
    name = f"provider round {round_.id} ({round_.provider_id} {round_.round_ref})"
    problems: list[str] = []
    expected, stakes, returns = _calls(events, name, problems)
    posted, house = _posted(entries, round_, name, problems)
    if posted != expected:
        missing, extra = sorted(expected - posted), sorted(posted - expected)
        problems.append(
            f"{name}: the wallet's entries do not match the round's calls: "
            f"missing {missing}, extra {extra}"
        )
    if stakes != returns + house:
        problems.append(
            f"{name}: stakes {stakes} are not rollbacks and wins {returns} plus "
            f"the house's result {house}"
        )
    return problems


def _calls(events: list[Any], name: str, problems: list[str]) -> tuple[Counter[Call], int, int]:
    """What the round's calls should have posted; the stakes, and what went back."""
    expected: Counter[Call] = Counter()
    bets: dict[str, int] = {}
    stakes = returns = 0
    for event in events:
        topic = topic_of(event)
        if topic not in WALLET_SIDE:
            continue
        side, kind = WALLET_SIDE[topic]
        expected[(side, kind, event.transaction_id, event.amount_cents)] += 1
        if topic == BET_TAKEN:
            bets[event.transaction_id] = event.amount_cents
            stakes += event.amount_cents
            continue
        returns += event.amount_cents
        if topic == BET_ROLLED_BACK and bets.get(event.bet_transaction_id) != event.amount_cents:
            problems.append(
                f"{name}: rollback {event.transaction_id} did not give back what bet "
                f"{event.bet_transaction_id} took"
            )
    return expected, stakes, returns


def _posted(
    entries: list[WalletEntry], round_: Any, name: str, problems: list[str]
) -> tuple[Counter[Call], int]:
    """What the wallet posted for the round, and what the house's account kept."""
    account = games_account(round_.provider_id)
    posted: Counter[Call] = Counter()
    house = 0
    for entry in entries:
        event = entry.event
        if entry.player_id != round_.player_id:
            problems.append(f"{name}: {entry.player_id}'s wallet posted for another's round")
        kind = getattr(event, "kind", None)
        posted[(entry.topic, kind, event.transaction_id, event.amount_cents)] += 1
        house += sum(cents for owner, cents in event.postings if owner == account)
    return posted, house
