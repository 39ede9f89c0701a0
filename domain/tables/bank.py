"""The bank at a player-banked table (rules.md 2.3, 2.4): what it covers, what a banco
is, and the casino's commission on a banker's winnings. Pure functions over plain
values; the table and the coup aggregates call them."""

from __future__ import annotations

from domain.errors import BancoRefused, BankCovered, BankerCannotBet
from domain.money import basis_points_half_up, format_cents
from domain.tables.chemin_de_fer import CHEMIN_DE_FER, PUNTO
from domain.tables.en_banque import check_a_cheval, side_of

FAILED_BANCOS_MAX = 3  # en banque: a player whose banco lost three times calls no more


def check_bet(
    banker: str, player_id: str, spot: str, amount_cents: int, bank_cents: int, covered_cents: int
) -> None:
    """A bet against the bank: not the banker's own, never more in total than the bank."""
    if player_id == banker:
        raise BankerCannotBet(f"{player_id} holds the bank and cannot bet against it")
    check_a_cheval(spot, amount_cents)
    uncovered = bank_cents - covered_cents
    if amount_cents > uncovered:
        raise BankCovered(
            f"the bank of {format_cents(bank_cents)} has {format_cents(uncovered)} "
            f"left to cover: a bet of {format_cents(amount_cents)} is too much",
            uncovered=format_cents(uncovered),
        )


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
