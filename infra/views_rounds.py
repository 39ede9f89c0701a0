"""How rounds look in answers: cards per hand, money as decimal strings, the seed
only once the round is over (RULES.md 5), and every event for the audit trail."""

from __future__ import annotations

from typing import Any

from domain.baccarat import rules as baccarat
from domain.baccarat.round import OPEN, BaccaratRound
from domain.blackjack.round import BlackjackRound
from domain.money import format_cents
from infra.views_blackjack import blackjack_round_view

# Hidden until the round is over: the seed and a chosen shoe reveal every card to come,
# and the blackjack hole card stays face down while the round is in play (RULES.md 3).
SECRET_FIELDS = ("seed", "shoe_prefix", "hole_card")
FINISHED = ("settled", "voided")


def round_view(round_: Any) -> dict[str, Any]:
    if isinstance(round_, BaccaratRound):
        return baccarat_round_view(round_)
    if isinstance(round_, BlackjackRound):
        return blackjack_round_view(round_)
    raise AssertionError(f"no view for {type(round_).__name__}")


def baccarat_round_view(round_: BaccaratRound) -> dict[str, Any]:
    settled = round_.outcome is not None
    view: dict[str, Any] = {
        "round_id": round_.round_id,
        "game": "baccarat",
        "variant": round_.variant,
        "status": round_.status,
        "mode": round_.mode,
        "player_id": round_.player_id,
        "dealer_id": round_.dealer_id,
        "table_id": round_.table_id,
        "seed_commitment": round_.seed_commitment,
        "seed": None if round_.status == OPEN else round_.seed,
        "shuffle_algorithm": round_.shuffle_algorithm,
        "decks": round_.decks,
        "tie_pays": round_.tie_pays,
        "limits": {
            "min": format_cents(round_.stake_min_cents),
            "max": format_cents(round_.stake_max_cents),
        },
        "bets": [{"spot": s, "amount": format_cents(c)} for s, c in sorted(round_.bets.items())],
        "total_stake": format_cents(round_.total_stake_cents),
        "hands": {
            hand: {"cards": list(cards), "total": baccarat.hand_total(cards) if cards else None}
            for hand, cards in round_.cards.items()
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
        "commission": format_cents(round_.commission_cents) if round_.dealer_id else None,
        "net": _nets(round_) if settled else None,
        "void_reason": round_.void_reason,
    }
    return view


def _nets(round_: BaccaratRound) -> dict[str, str]:
    nets = {"player": format_cents(round_.player_net_cents)}
    if round_.dealer_id is not None:
        nets["dealer"] = format_cents(-round_.player_net_cents - round_.commission_cents)
        nets["casino"] = format_cents(round_.commission_cents)
    else:
        nets["casino"] = format_cents(-round_.player_net_cents)
    return nets


def audit_view(round_: Any, trail: list[dict[str, Any]]) -> dict[str, Any]:
    """Every event of the round in log order, the wallets' holds, settlements and
    charges for it included; secrets stay hidden while it is not over."""
    hide = round_.status not in FINISHED
    return {
        "round_id": str(round_.id),
        "status": round_.status,
        "events": [_event_view(event, hide) for event in trail],
    }


def _event_view(event: dict[str, Any], hide_secrets: bool) -> dict[str, Any]:
    data = event["data"]
    if hide_secrets:
        data = {k: (None if k in SECRET_FIELDS else v) for k, v in data.items()}
    return {
        "position": event["position"],
        "aggregate_id": event["aggregate_id"],
        "version": event["version"],
        "at": event["at"],
        "type": event["topic"].rsplit(".", 1)[-1],
        "topic": event["topic"],
        "data": data,
    }
