"""A provider's round re-derived by the auditor (`casino audit verify`, rules.md 10):
its money balances. Pure: given the round's events and its wallet's entries.

- every bet took its stake from the player once, every win and rollback credited
  once, each for the amount the round recorded, against `casino:games:{provider}`;
- a rollback gave back exactly what its bet took;
- stakes taken = rollbacks + wins + the house's result, where the house's result is
  what `casino:games:{provider}` kept of the round (cash and bonus together);
- each call's bonus part is the one the round recorded: a rollback gives back the
  bonus part its bet took, a win's bonus share is in the proportion of the stakes
  standing (rules.md 9), and the round's end counted its stakes under the bonus.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from domain.providers.provider import games_account
from domain.providers.round import BET_ROLLED_BACK, BET_TAKEN, WIN_PAID, ProviderRound
from domain.rounds import WalletEntry, replay
from domain.wallet import BONUS_WAGERED, CREDITED, STAKE_TAKEN, topic_of

# What each of the round's calls posts on the wallet: its event and kind.
WALLET_SIDE = {BET_TAKEN: (STAKE_TAKEN, None), WIN_PAID: (CREDITED, "win"),
               BET_ROLLED_BACK: (CREDITED, "rollback")}  # fmt: skip


# wallet event, kind, transaction id, cents, of them bonus
Call = tuple[str, str | None, str, int, int]


def verify_provider_round(events: list[Any], entries: list[WalletEntry]) -> list[str]:
    round_ = replay(events)
    name = f"provider round {round_.id} ({round_.provider_id} {round_.round_ref})"
    problems: list[str] = []
    expected, stakes, returns = _calls(events, name, problems)
    posted, house = _posted(entries, round_, name, problems)
    _check_wagering(entries, round_, name, problems)
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
    bets: dict[str, tuple[int, int]] = {}
    stakes = returns = 0
    standing: Any = None  # the round as its events so far make it
    for event in events:
        standing = event.mutate(standing)
        topic = topic_of(event)
        if topic not in WALLET_SIDE:
            continue
        side, kind = WALLET_SIDE[topic]
        cents, bonus = event.amount_cents, bonus_of(event)
        expected[(side, kind, event.transaction_id, cents, bonus)] += 1
        if topic == BET_TAKEN:
            bets[event.transaction_id] = (cents, bonus)
            stakes += cents
            continue
        returns += cents
        if topic == BET_ROLLED_BACK and bets.get(event.bet_transaction_id) != (cents, bonus):
            problems.append(
                f"{name}: rollback {event.transaction_id} did not give back what bet "
                f"{event.bet_transaction_id} took"
            )
        # A win changes no stake: the round with it still gives the proportion.
        if topic == WIN_PAID and bonus != standing.win_split(cents).bonus_cents:
            problems.append(
                f"{name}: win {event.transaction_id}'s bonus share {bonus} is not in the "
                "proportion of the round's stakes"
            )
    return expected, stakes, returns


def bonus_of(event: Any) -> int:
    """A call's bonus part; events stored before bonus money had none."""
    return int(getattr(event, "bonus_cents", 0))


def _check_wagering(
    entries: list[WalletEntry], round_: ProviderRound, name: str, problems: list[str]
) -> None:
    """What the round's end counted towards its bonus: its stakes under it, net of
    rollbacks, once, or nothing (the bonus had ended)."""
    counted = [entry.event for entry in entries if entry.topic == BONUS_WAGERED]
    if not counted:
        return
    total = sum(event.wagered_cents for event in counted)
    if len(counted) > 1 or total != round_.wagered_cents or counted[0].bonus_id != round_.bonus_id:
        problems.append(
            f"{name}: its end counted {total} cents towards bonus wagering, not "
            f"{round_.wagered_cents} once"
        )


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
        if entry.topic not in (STAKE_TAKEN, CREDITED):
            continue  # the wagering counted at its end, a conversion it made
        kind = getattr(event, "kind", None)
        call = (entry.topic, kind, event.transaction_id, event.amount_cents, bonus_of(event))
        posted[call] += 1
        house += sum(cents for owner, cents in event.postings if owner == account)
    return posted, house
