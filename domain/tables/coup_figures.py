"""What a coup came to, read off its state: stakes, results by player, the bank's and
the casino's results, each hand's total. Plain reads, shared by the coup's
commands, its audit and the read models."""

from __future__ import annotations

from typing import Any

from domain.baccarat.rules import hand_total

SETTLED_STATUS = "settled"
WON, LOST, TIED = "won", "lost", "tied"


class CoupFigures:
    """Mixed into `Coup`, whose events set these attributes."""

    status: str
    banker_id: str | None
    commission_cents: int
    bets: dict[str, dict[str, int]]
    hands: dict[str, list[str]]
    decisions: list[dict[str, Any]]
    payouts: list[dict[str, Any]]
    banco: dict[str, Any] | None

    def stake_of(self, player_id: str) -> int:
        return sum(self.bets.get(player_id, {}).values())

    @property
    def total_stake_cents(self) -> int:
        return sum(map(self.stake_of, self.bets))

    def nets(self) -> dict[str, int]:
        """What the settled coup came to for each player, the banker too, in cents."""
        nets: dict[str, int] = {}
        for payout in self.payouts:
            nets[payout["player_id"]] = nets.get(payout["player_id"], 0) + payout["net_cents"]
        if self.banker_id is not None and self.status == SETTLED_STATUS:
            nets[self.banker_id] = self.banker_net_cents() - self.commission_cents
        return nets

    def banker_net_cents(self) -> int:
        """The bank's result against the punters, before the commission."""
        return -sum(int(payout["net_cents"]) for payout in self.payouts)

    def casino_net_cents(self) -> int:
        """The house's result: the bank's at a house table, the commission at another."""
        if self.banker_id is None:
            return self.banker_net_cents()
        return self.commission_cents

    def spot_stakes(self) -> dict[str, int]:
        stakes: dict[str, int] = {}
        for spots in self.bets.values():
            for spot, cents in spots.items():
                stakes[spot] = stakes.get(spot, 0) + cents
        return stakes

    def choices(self) -> dict[str, str]:
        """Each hand's choice so far, as the tableau reads it."""
        return {decision["hand"]: decision["action"] for decision in self.decisions}

    def totals(self) -> dict[str, int]:
        return {hand: hand_total(cards) for hand, cards in self.hands.items() if cards}

    def banco_result(self) -> str | None:
        """How a settled coup's banco came out for its caller: won, lost or tied."""
        if self.banco is None or self.status != SETTLED_STATUS:
            return None
        net = self.nets().get(self.banco["player_id"], 0)
        return WON if net > 0 else LOST if net < 0 else TIED
