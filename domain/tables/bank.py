"""The bank at a player-banked table (rules.md 2.3, 2.4): what it covers, what a banco
is, and the casino's commission on a banker's winnings. Pure functions over plain
values; the table and the coup aggregates call them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.errors import BancoRefused, BankCovered, BankerCannotBet
from domain.money import basis_points_half_up, format_cents
from domain.tables.chemin_de_fer import CHEMIN_DE_FER, PUNTO
from domain.tables.en_banque import EN_BANQUE, check_a_cheval, check_side, side_of

FAILED_BANCOS_MAX = 3  # en banque: a player whose banco lost three times calls no more


def check_bet(
    game: str, banker: str, player_id: str, seat: str | None, spot: str, amount_cents: int
) -> None:
    """Who may bet where against the bank: not the banker; at en banque a punter on
    their own side's hand or à cheval on both (rules.md 2.4)."""
    if player_id == banker:
        raise BankerCannotBet(f"{player_id} holds the bank and cannot bet against it")
    check_a_cheval(spot, amount_cents)
    if game == EN_BANQUE:
        assert seat is not None, "a punter bets from their seat"
        check_side(seat, spot)


def check_cover(
    game: str, stake_cents: int, amount_cents: int, bank_cents: int, covered_cents: int
) -> None:
    """How much a bet may ask of the bank as it arrives. `stake_cents` is the player's
    stake in the coup with this bet, `covered_cents` every bet before it.

    Chemin de fer (2.3): bets arrive in any order, and the play order settles what the
    bank covers at the deal (`uncovered_parts`), so only a bet alone larger than the
    bank is refused now. En banque (2.4): the bank covers the bets as they come, so
    they never add up past it, and each ordinary bet is smaller than the bank (a stake
    of the whole bank is a banco)."""
    uncovered = max(0, bank_cents - covered_cents)
    facts = {"bank": format_cents(bank_cents), "uncovered": format_cents(uncovered)}
    if game == CHEMIN_DE_FER:
        if stake_cents > bank_cents:
            raise BankCovered(
                f"a bet of {format_cents(stake_cents)} is larger than the whole bank of "
                f"{format_cents(bank_cents)}",
                **facts,
            )
        return
    if amount_cents > uncovered:
        raise BankCovered(
            f"the bank of {format_cents(bank_cents)} has {format_cents(uncovered)} "
            f"left to cover: a bet of {format_cents(amount_cents)} is too much",
            **facts,
        )
    if stake_cents >= bank_cents:
        raise BankCovered(
            f"a stake of the whole bank of {format_cents(bank_cents)} is a banco: call banco "
            "to cover it alone; an ordinary bet is smaller than the bank",
            **facts,
        )


def uncovered_parts(
    bets: Mapping[str, Mapping[str, int]], order: Sequence[str], bank_cents: int
) -> list[tuple[str, str, int, int]]:
    """At the deal, chemin de fer's bank covers the bets seat by seat in play order from
    the banker's next seat (rules.md 2.3); what it no longer covers goes back. Returns,
    for each bet not wholly covered, (player, spot, cents returned, cents covered).
    Bets all within the bank (always so at en banque) return nothing."""
    ranked = sorted(bets, key=lambda who: (order.index(who) if who in order else len(order), who))
    left, parts = bank_cents, []
    for player_id in ranked:
        for spot, cents in sorted(bets[player_id].items()):
            covered = min(cents, left)
            left -= covered
            if covered < cents:
                parts.append((player_id, spot, cents - covered, covered))
    return parts


def banco_spot(game: str, seat: str) -> str:
    """Where a banco rides: the punto, or at en banque the caller's own side's hand."""
    return PUNTO if game == CHEMIN_DE_FER else side_of(seat)


def check_banco(
    game: str,
    player_id: str,
    banker: str,
    called_by: str | None,
    suivi: str | None,
    failed: int,
) -> None:
    """May this player call banco now? The first call stands, but the punter who lost a
    banco on the coup before (banco suivi) goes first (2.3); three lost bancos bar a
    player at en banque (2.4)."""
    if player_id == banker:
        raise BancoRefused("the banker cannot call banco against their own bank")
    if game != CHEMIN_DE_FER and failed >= FAILED_BANCOS_MAX:
        raise BancoRefused(
            f"{player_id}'s banco has lost {failed} times at this table: no more bancos here",
            reason="three_bancos_lost",
        )
    if called_by is not None and not (player_id == suivi and called_by != suivi):
        raise BancoRefused(
            f"banco is already called by {called_by}", reason="already_called", by=called_by
        )


def commission_cents(banker_net_cents: int, basis_points: int) -> int:
    """The casino's commission: its rate (5% by default) of the banker's winnings in a
    coup, half up to the cent; nothing on a coup the bank lost or tied."""
    return basis_points_half_up(max(0, banker_net_cents), basis_points)
