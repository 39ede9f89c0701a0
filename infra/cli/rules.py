"""`casino rules ...`: check game rules from the command line, one coup or a million.

Mounted in the main CLI as `app.add_typer(rules_app, name="rules")`: `casino rules
baccarat ...`, or `python -m infra.cli rules baccarat ...` without the installed script.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Annotated

import typer

from domain.baccarat.odds import BaccaratOdds, exact_odds
from domain.baccarat.rules import TIE_PAYS_MAX, VARIANTS, play_coup
from domain.cards import CARDS_PER_DECK, DECKS_MAX, parse_cards
from domain.tables.odds import chemin_de_fer_odds

# Limits on bulk input: no real coup needs more cards than the largest shoe.
CARDS_PER_REQUEST_MAX = CARDS_PER_DECK * DECKS_MAX
LINE_CHARS_MAX = 10_000
# Answers are written in batches: one write per line would dominate a bulk run.
_LINES_PER_WRITE = 4096
_SIGNIFICANT_DIGITS = 10
_REQUEST_EXAMPLE = '{"cards": ["10", "3", "K", "10"]}'

# One compact encoder for every line: json.dumps with options would build a new one each
# call, and answers are fresh trees, so the circular-reference check is wasted work.
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode

Reorder = Callable[[list[str]], list[str]]


def hands_to_deal_order(cards: list[str]) -> list[str]:
    """Player 1, player 2, banker 1, banker 2, thirds... -> the shoe's P, B, P, B, thirds..."""
    if len(cards) < 4:
        return cards  # The coup then names the card it is missing.
    return [cards[0], cards[2], cards[1], cards[3], *cards[4:]]


def as_dealt(cards: list[str]) -> list[str]:
    return cards


ORDERS: dict[str, Reorder] = {"hands": hands_to_deal_order, "deal": as_dealt}

rules_app = typer.Typer(
    rich_markup_mode="markdown",
    help="Check game rules: deal a coup from given cards, or compute odds.",
)


@rules_app.callback()
def rules() -> None:
    """Check game rules: deal a coup from given cards, or compute exact odds."""


@rules_app.command()
def baccarat(
    cards: Annotated[
        str | None,
        typer.Option(help="Cards, comma separated, in --order: 10,3,K,10,10,Q or with suits: QH."),
    ] = None,
    order: Annotated[
        str,
        typer.Option(
            help="hands: the player's two cards, the banker's two, then the third cards as "
            "drawn (api.md's example); deal: the shoe's order, Player, Banker, Player, Banker."
        ),
    ] = "hands",
    stdin: Annotated[
        bool,
        typer.Option("--stdin", help=f"Read one {_REQUEST_EXAMPLE} per line; answer per line."),
    ] = False,
    odds: Annotated[
        bool, typer.Option("--odds", help="Print exact odds and house edges by full enumeration.")
    ] = False,
    variant: Annotated[
        str, typer.Option(help="p2p or house: the default decks and tie payout for --odds.")
    ] = "p2p",
    decks: Annotated[
        int | None, typer.Option(min=1, max=DECKS_MAX, help="Decks in the shoe (--odds).")
    ] = None,
    tie_pays: Annotated[
        int | None, typer.Option(min=1, max=TIE_PAYS_MAX, help="A tie pays this to 1 (--odds).")
    ] = None,
) -> None:
    """Deal a baccarat coup (the rules are the same for every variant), or compute odds."""
    if variant not in VARIANTS:
        raise typer.BadParameter(f"expected one of {', '.join(VARIANTS)}", param_hint="--variant")
    _require_one_mode(cards, stdin, odds)
    if order not in ORDERS:
        raise typer.BadParameter(f"expected one of {', '.join(ORDERS)}", param_hint="--order")
    in_deal_order = ORDERS[order]
    if not odds and (decks is not None or tie_pays is not None):
        raise typer.BadParameter("--decks and --tie-pays apply only with --odds")
    if cards is not None:
        sys.stdout.write(_coup_answer(cards, in_deal_order) + "\n")
    elif stdin:
        answer_lines(sys.stdin, in_deal_order)
    else:
        chosen = VARIANTS[variant]
        result = exact_odds(decks or chosen.decks, tie_pays or chosen.tie_pays)
        sys.stdout.write(_encode(odds_to_dict(result)) + "\n")


def _require_one_mode(cards: str | None, stdin: bool, odds: bool) -> None:
    modes = [cards is not None, stdin, odds]
    if modes.count(True) != 1:
        raise typer.BadParameter("give exactly one of --cards, --stdin or --odds")


def _coup_answer(cards_text: str, in_deal_order: Reorder) -> str:
    """The coup for `--cards`, or a usage error naming what is wrong."""
    try:
        return _encode(play_coup(in_deal_order(parse_cards(cards_text.split(",")))).to_dict())
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--cards") from None


def answer_lines(lines: Iterable[str], in_deal_order: Reorder = hands_to_deal_order) -> None:
    """Answer each request line with one line, in order; a bad line gets an error line."""
    answers: list[str] = []
    for line in lines:
        answers.append(answer_line(line, in_deal_order))
        if len(answers) >= _LINES_PER_WRITE:
            sys.stdout.write("\n".join(answers) + "\n")
            answers.clear()
    if answers:
        sys.stdout.write("\n".join(answers) + "\n")
    sys.stdout.flush()


def answer_line(line: str, in_deal_order: Reorder = hands_to_deal_order) -> str:
    """One request line -> one answer line (without the newline)."""
    try:
        return _encode(play_coup(in_deal_order(_request_cards(line))).to_dict())
    except (ValueError, RecursionError) as error:
        # RecursionError: absurdly nested JSON is a bad line like any other.
        return _encode({"error": str(error) or type(error).__name__})


def _request_cards(line: str) -> list[str]:
    if len(line) > LINE_CHARS_MAX:
        raise ValueError(f"a line may hold at most {LINE_CHARS_MAX} characters")
    if not line.strip():
        raise ValueError(f"empty line: expected an object such as {_REQUEST_EXAMPLE}")
    try:
        request = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error}") from None
    cards = request.get("cards") if isinstance(request, dict) else None
    if not isinstance(cards, list):
        raise ValueError(f"expected an object such as {_REQUEST_EXAMPLE}")
    if len(cards) > CARDS_PER_REQUEST_MAX:
        raise ValueError(f"at most {CARDS_PER_REQUEST_MAX} cards per line")
    return parse_cards(cards)


def odds_to_dict(odds: BaccaratOdds) -> dict[str, object]:
    """api.md's odds answer: exact fractions printed as decimals of 10 significant digits."""
    return {
        "player": _decimal(odds.player),
        "banker": _decimal(odds.banker),
        "tie": _decimal(odds.tie),
        "house_edge": {
            "player": _decimal(odds.house_edge_player),
            "banker": _decimal(odds.house_edge_banker),
            "tie": _decimal(odds.house_edge_tie),
        },
    }


@rules_app.command("chemin-de-fer")
def chemin_de_fer(
    odds: Annotated[
        bool, typer.Option("--odds", help="Print exact odds and edges by full enumeration.")
    ] = False,
    decks: Annotated[int, typer.Option(min=1, max=DECKS_MAX, help="Decks in the shoe.")] = 6,
    commission_basis_points: Annotated[
        int, typer.Option(min=0, max=5000, help="The casino's rate on the banker's winnings.")
    ] = 500,
) -> None:
    """Chemin de fer's exact odds with the system's default choices (rules.md 2.3): the
    punters' edge, and the banker's before and after the commission."""
    if not odds:
        raise typer.BadParameter("give --odds", param_hint="--odds")
    found = chemin_de_fer_odds(decks, commission_basis_points)
    answer = {
        "punto": _decimal(found.punto),
        "banker": _decimal(found.banker),
        "tie": _decimal(found.tie),
        "punters_edge": _decimal(found.punters_edge),
        "banker_edge": {
            "before_commission": _decimal(found.banker_edge_before_commission),
            "after_commission": _decimal(found.banker_edge_after_commission),
        },
        "commission_per_unit_covered": _decimal(found.commission_per_unit),
    }
    sys.stdout.write(_encode(answer) + "\n")


def _decimal(value: Fraction) -> float:
    return float(f"{float(value):.{_SIGNIFICANT_DIGITS}g}")
