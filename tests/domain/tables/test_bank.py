"""What the bank covers (rules.md 2.3, 2.4), given / when / then on a coup: at chemin
de fer bets arrive in any order and the bank covers them at the deal, seat by seat in
play order, what it does not cover going back; at en banque a punter bets on their
own side's hand or à cheval, each ordinary bet smaller than the bank, never more in
all than the bank."""

from __future__ import annotations

import pytest

from domain.errors import BankCovered, WrongSide
from domain.tables.bank import uncovered_parts
from domain.tables.chemin_de_fer import CHEMIN_DE_FER_RULES
from domain.tables.coup import Coup
from domain.tables.en_banque import EN_BANQUE_RULES
from domain.unit import MemoryBox
from tests.domain.events import given, kinds, then

SEED = "00" * 32
DEADLINE = "2026-12-01T12:00:30+00:00"
BANKER_WINS = ["K", "9", "Q", "K"]  # punto 0, banker a natural 9
BANKERS_NATURAL = ["10", "K", "9", "8", "2", "K"]  # right 8, left 2, banker 9
# The banker, ann, sits at seat 1: play order from her next seat.
ORDER = ["bob", "cat", "dan"]


def banked(variant: str, shoe: list[str], bank_cents: int = 10_000) -> Coup:
    return Coup.open(table_id="t1", variant=variant, mode="real", decks=6, tie_pays=0,
                     limits=(100, 1_000_000), box=MemoryBox(), seed=SEED, shoe_prefix=shoe,
                     banker_id="ann", bank_cents=bank_cents,
                     commission_basis_points=500)  # fmt: skip


def chemin_de_fer(*bets: tuple[str, int]) -> Coup:
    """A $100 bank; each bet on the punto, in the order given (the order they arrive)."""
    return given(
        banked("chemin_de_fer", BANKER_WINS),
        *(lambda c, b=bet: c.place_bet(CHEMIN_DE_FER_RULES, b[0], "punto", b[1]) for bet in bets),
    )


@pytest.mark.parametrize(
    ("bets", "order", "returned"),
    [
        ({"bob": 3_000, "cat": 5_000}, ORDER, []),  # all within the bank
        ({"bob": 3_000, "cat": 5_000, "dan": 8_000}, ORDER, [("dan", 6_000, 2_000)]),
        ({"dan": 8_000, "cat": 5_000, "bob": 3_000}, ORDER, [("dan", 6_000, 2_000)]),
        ({"bob": 6_000, "cat": 4_000, "dan": 2_000}, ORDER, [("dan", 2_000, 0)]),  # exact
        # The banker at seat 3: play order goes round from seat 4.
        (
            {"bob": 6_000, "cat": 6_000, "dan": 6_000},
            ["dan", "bob", "cat"],
            [("bob", 2_000, 4_000), ("cat", 6_000, 0)],
        ),
    ],
)
def test_the_bank_covers_seat_by_seat_in_play_order_whatever_the_order_of_arrival(
    bets: dict[str, int], order: list[str], returned: list[tuple[str, int, int]]
) -> None:
    on_the_punto = {player: {"punto": cents} for player, cents in bets.items()}
    due = [(player, "punto", cents, covered) for player, cents, covered in returned]
    assert uncovered_parts(on_the_punto, order, 10_000) == due


def test_chemin_de_fer_takes_bets_past_the_bank_and_returns_the_uncovered_at_the_deal() -> None:
    coup = chemin_de_fer(("dan", 8_000), ("cat", 5_000))
    coup.place_bet(CHEMIN_DE_FER_RULES, "bob", "punto", 3_000)  # $160 asked of a $100 bank
    assert kinds(coup) == ["BetPlaced"]
    returned = coup.deal(CHEMIN_DE_FER_RULES, ORDER, set(), DEADLINE)
    events = then(coup)
    assert events[:2] == [
        (
            "UncoveredBetReturned",
            {"player_id": "dan", "spot": "punto", "amount_cents": 6_000, "covered_cents": 2_000},
        ),
        # The highest bet that stands plays the punto: cat's $50, not dan's $80 as placed.
        ("PlayersChosen", {"playing": {"banker": "ann", "punto": "cat"}, "order": ORDER}),
    ]
    assert returned == [("dan", "punto", 6_000)]
    payouts = {e["player_id"]: e["stake_cents"] for kind, e in events if kind == "PayoutMade"}
    assert payouts == {"bob": 3_000, "cat": 5_000, "dan": 2_000}
    assert (coup.bank_after_cents, coup.commission_cents) == (19_500, 500)  # 5% of $100


def test_a_bet_the_bank_no_longer_covers_at_all_goes_back_whole() -> None:
    coup = chemin_de_fer(("dan", 2_000), ("bob", 6_000), ("cat", 4_000))
    coup.deal(CHEMIN_DE_FER_RULES, ORDER, set(), DEADLINE)
    assert then(coup)[0] == (
        "UncoveredBetReturned",
        {"player_id": "dan", "spot": "punto", "amount_cents": 2_000, "covered_cents": 0},
    )
    assert sorted(coup.bets) == ["bob", "cat"] and coup.returned[0]["player_id"] == "dan"


def test_only_a_bet_alone_larger_than_the_bank_is_refused_at_once_naming_the_bank() -> None:
    coup = chemin_de_fer(("bob", 9_000))
    coup.place_bet(CHEMIN_DE_FER_RULES, "cat", "punto", 10_000)  # the whole bank: taken
    with pytest.raises(BankCovered) as refused:
        coup.place_bet(CHEMIN_DE_FER_RULES, "bob", "punto", 2_000)  # bob's $110 alone
    assert refused.value.facts == {"bank": "100.00", "uncovered": "0.00"}
    assert kinds(coup) == ["BetPlaced"]


def en_banque(*bets: tuple[str, str, str, int], bank_cents: int = 20_000) -> Coup:
    """A $200 bank; each bet (player, seat, spot, cents)."""
    return given(
        banked("en_banque", BANKERS_NATURAL, bank_cents),
        *(lambda c, b=bet: c.place_bet(EN_BANQUE_RULES, b[0], b[2], b[3], b[1]) for bet in bets),
    )


@pytest.mark.parametrize(("seat", "side"), [("R2", "right"), ("L4", "left")])
def test_a_punter_bets_on_their_own_side_or_a_cheval_never_on_the_other_side_alone(
    seat: str, side: str
) -> None:
    coup = en_banque()
    coup.place_bet(EN_BANQUE_RULES, "cat", side, 1_000, seat)
    coup.place_bet(EN_BANQUE_RULES, "cat", "both", 2_000, seat)
    other = "left" if side == "right" else "right"
    with pytest.raises(WrongSide) as refused:
        coup.place_bet(EN_BANQUE_RULES, "cat", other, 1_000, seat)
    assert refused.value.facts == {"seat": seat, "side": side}
    assert kinds(coup) == ["BetPlaced", "BetPlaced"]


def test_an_ordinary_bet_is_smaller_than_the_bank_a_stake_of_it_all_is_a_banco() -> None:
    coup = en_banque()
    with pytest.raises(BankCovered, match="is a banco") as refused:
        coup.place_bet(EN_BANQUE_RULES, "bob", "left", 20_000, "L1")
    assert refused.value.facts == {"bank": "200.00", "uncovered": "200.00"}
    coup.place_bet(EN_BANQUE_RULES, "bob", "left", 15_000, "L1")
    with pytest.raises(BankCovered, match="is a banco"):  # split over spots, still all of it
        coup.place_bet(EN_BANQUE_RULES, "bob", "both", 5_000, "L1")
    assert kinds(coup) == ["BetPlaced"]


def test_en_banque_bets_never_add_up_past_the_bank_and_once_covered_none_is_taken() -> None:
    coup = en_banque(("bob", "L1", "left", 15_000))
    with pytest.raises(BankCovered) as refused:
        coup.place_bet(EN_BANQUE_RULES, "cat", "right", 6_000, "R2")
    assert refused.value.facts == {"bank": "200.00", "uncovered": "50.00"}
    coup.place_bet(EN_BANQUE_RULES, "cat", "right", 5_000, "R2")
    with pytest.raises(BankCovered):
        coup.place_bet(EN_BANQUE_RULES, "dan", "right", 100, "R3")
    assert kinds(coup) == ["BetPlaced"]
    coup.deal(EN_BANQUE_RULES, ["bob", "cat"], set(), DEADLINE)
    assert "UncoveredBetReturned" not in kinds(coup)
