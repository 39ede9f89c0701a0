"""How rounds look in answers: cards per hand, money as decimal strings, the seed
only once the round is over (rules.md 5), and every event for the audit trail.

What is shown when is the domain's to say (`domain/rounds.py: secrets_revealed`);
these functions only shape it."""

from __future__ import annotations

from typing import Any, assert_never

from domain.any_round import Dealt, Round
from domain.baccarat import rules as baccarat
from domain.blackjack.round import BlackjackRound
from domain.money import format_cents
from domain.rounds import secrets_revealed, with_revealed_secrets, withhold_secrets
from domain.tables.coup import Coup
from domain.tables.punto_banco import P2P
from infra.http.views.blackjack import blackjack_round_view
from infra.http.views.tables import coup_view
from infra.http.views.wallets import net_split

HANDS = (baccarat.PLAYER, baccarat.BANKER)  # a one-seat round shows both, from its opening


def round_view(round_: Round) -> dict[str, Any]:
    match round_:
        case Coup() if round_.one_seat:
            return baccarat_round_view(round_)
        case BlackjackRound():
            return blackjack_round_view(round_)
        case Coup():
            return coup_view(round_)
        case _:
            assert_never(round_)


def dealt_view(dealt: Dealt) -> dict[str, Any]:
    """A dealt round; a P2P round's also names the next round auto-confirm opened in
    the same save (null when none did), so the client need not ask its table."""
    view = round_view(dealt.round)
    if isinstance(dealt.round, Coup) and dealt.round.variant == P2P:
        following = dealt.next_round
        view["next_round"] = baccarat_round_view(following) if following is not None else None
    return view


def baccarat_round_view(round_: Coup) -> dict[str, Any]:
    """A one-seat coup (the house's single-player round, a P2P round) as its answer
    has always shown it: one player's bets, both hands, the dealer as `dealer_id`."""
    settled = round_.outcome is not None
    bets = round_.bets.get(round_.player_id or "", {})
    view: dict[str, Any] = {
        "round_id": round_.round_id,
        "game": "baccarat",
        "variant": round_.variant,
        "status": round_.status,
        "mode": round_.mode,
        "player_id": round_.player_id,
        "dealer_id": round_.banker_id,
        "table_id": round_.table_id,
        "seed_commitment": round_.seed_commitment,
        "seed": round_.seed if secrets_revealed(round_.status) else None,
        "shuffle_algorithm": round_.shuffle_algorithm,
        "decks": round_.decks,
        "tie_pays": round_.tie_pays,
        "limits": {
            "min": format_cents(round_.bet_min_cents),
            "max": format_cents(round_.bet_max_cents),
        },
        "bets": [{"spot": s, "amount": format_cents(c)} for s, c in sorted(bets.items())],
        "total_stake": format_cents(round_.total_stake_cents),
        "hands": {
            hand: {"cards": list(cards), "total": baccarat.hand_total(cards) if cards else None}
            for hand, cards in ((h, round_.hands.get(h, [])) for h in HANDS)
        },
        "outcome": round_.outcome,
        "payouts": [
            {
                "spot": p["spot"],
                "stake": format_cents(p["stake_cents"]),
                "net": format_cents(p["net_cents"]),
            }
            for p in round_.payouts
        ],
        "commission": format_cents(round_.commission_cents) if round_.banker_id else None,
        "net": _money(_one_seat_nets(round_)) if settled else None,
        "void_reason": round_.void_reason,
        **net_split(round_.bonus_nets),
    }
    return view


def _one_seat_nets(round_: Coup) -> dict[str, int]:
    """The player's result, and the dealer's and the casino's commission (P2P) or the
    house's (house round), in cents."""
    player = -round_.banker_net_cents()
    if round_.banker_id is None:
        return {"player": player, "casino": -player}
    return {"player": player, "dealer": -player - round_.commission_cents,
            "casino": round_.commission_cents}  # fmt: skip


def _money(cents: dict[str, int]) -> dict[str, str]:
    return {who: format_cents(amount) for who, amount in cents.items()}


def audit_view(round_: Round, trail: list[dict[str, Any]]) -> dict[str, Any]:
    """Every event of the round in log order, the wallets' holds, settlements and
    charges for it included; secrets stay hidden while it is not over."""
    hide = not secrets_revealed(round_.status)
    return {
        "round_id": round_.round_id,
        "status": round_.status,
        "events": [_event_view(event, hide, round_) for event in trail],
    }


def _event_view(event: dict[str, Any], hide_secrets: bool, round_: Round) -> dict[str, Any]:
    data = (
        withhold_secrets(event["data"])
        if hide_secrets
        else with_revealed_secrets(event["data"], round_)
    )
    return {
        "position": event["position"],
        "aggregate_id": event["aggregate_id"],
        "version": event["version"],
        "at": event["at"],
        "type": event["topic"].rsplit(".", 1)[-1],
        "topic": event["topic"],
        "data": data,
    }
