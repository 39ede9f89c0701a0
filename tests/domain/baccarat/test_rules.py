import itertools
import json

import pytest

from domain.baccarat.rules import (
    HOUSE,
    P2P,
    SPOTS,
    VARIANTS,
    BaccaratVariant,
    Coup,
    NotEnoughCards,
    bet_net_cents,
    card_value,
    check_chips,
    chips_for,
    commission_cents,
    dealer_worst_case_cents,
    hand_total,
    play_coup,
    points_for_stake,
)
from domain.cards import InvalidCard, standard_deck
from domain.errors import InvalidStake, UnknownSpot

# The Banker's tableau exactly as rules.md section 2 states it, written out by hand
# rather than imported, so that the engine is checked against an independent oracle.
# Row: the Banker's two-card total. Column: the value of the Player's third card
# (0-9), then "-" for a Player who stood. D = the Banker draws, S = stands.
#                 0123456789-
BANKER_TABLEAU = {
    0: "DDDDDDDDDDD",
    1: "DDDDDDDDDDD",
    2: "DDDDDDDDDDD",
    3: "DDDDDDDDSDD",
    4: "SSDDDDDDSSD",
    5: "SSSSDDDDSSD",
    6: "SSSSSSDDSSS",
    7: "SSSSSSSSSSS",
}
PLAYER_STOOD_COLUMN = 10
# One rank per value; value 0 cycles through 10, J, Q and K by position.
RANK_OF_VALUE = ("10", "A", "2", "3", "4", "5", "6", "7", "8", "9")
ZERO_RANKS = ("10", "J", "Q", "K")


def oracle_coup(values: tuple[int, ...]) -> tuple[list[int], list[int], int, int, str]:
    """Positions each hand receives, totals and outcome, straight from the rule book."""
    player, banker = [0, 2], [1, 3]
    player_total = (values[0] + values[2]) % 10
    banker_total = (values[1] + values[3]) % 10
    if player_total < 8 and banker_total < 8:
        column = PLAYER_STOOD_COLUMN
        if player_total <= 5:
            player.append(4)
            column = values[4]
            player_total = (player_total + values[4]) % 10
        if BANKER_TABLEAU[banker_total][column] == "D":
            banker.append(len(player) + len(banker))
            banker_total = (banker_total + values[banker[-1]]) % 10
    outcome = "tie" if player_total == banker_total else "player"
    if banker_total > player_total:
        outcome = "banker"
    return player, banker, player_total, banker_total, outcome


def cards_for(values: tuple[int, ...]) -> list[str]:
    return [
        ZERO_RANKS[position % 4] if value == 0 else RANK_OF_VALUE[value]
        for position, value in enumerate(values)
    ]


def test_every_six_card_sequence_plays_out_as_the_rule_book_says() -> None:
    # All 10**6 sequences of six card values: every coup that can occur, spare cards included.
    for values in itertools.product(range(10), repeat=6):
        cards = cards_for(values)
        player, banker, player_total, banker_total, outcome = oracle_coup(values)
        coup = play_coup(cards)
        assert coup.player_cards == tuple(cards[position] for position in player), values
        assert coup.banker_cards == tuple(cards[position] for position in banker), values
        assert (coup.player_total, coup.banker_total, coup.outcome) == (
            player_total,
            banker_total,
            outcome,
        ), values


def test_a_coup_needs_exactly_the_cards_it_uses() -> None:
    # Which cards a coup uses depends on the first five values only.
    for first_five in itertools.product(range(10), repeat=5):
        cards = cards_for((*first_five, 0))
        used = play_coup(cards).cards_used
        assert play_coup(cards[:used]).cards_used == used
        with pytest.raises(NotEnoughCards):
            play_coup(cards[: used - 1])


@pytest.mark.parametrize(
    ("card", "value"),
    [
        ("A", 1),
        ("AS", 1),
        ("2H", 2),
        ("5", 5),
        ("9D", 9),
        ("10", 0),
        ("10C", 0),
        ("J", 0),
        ("QH", 0),
        ("KS", 0),
    ],
)
def test_card_values_are_face_value_with_tens_and_pictures_zero(card: str, value: int) -> None:
    assert card_value(card) == value


def test_every_card_of_the_deck_has_a_value() -> None:
    assert sum(card_value(card) for card in standard_deck()) == 4 * sum(range(1, 10))


def test_a_card_that_is_not_canonical_has_no_value() -> None:
    with pytest.raises(InvalidCard):
        card_value("qh")
    with pytest.raises(InvalidCard):
        play_coup(["10", "3", "K", "ZZ"])


@pytest.mark.parametrize(
    ("cards", "total"),
    [(["9", "9"], 8), (["K", "Q"], 0), (["A", "9"], 0), (["7", "8", "9"], 4), (["5H", "A"], 6)],
)
def test_a_hand_total_is_the_sum_modulo_ten(cards: list[str], total: int) -> None:
    assert hand_total(cards) == total


def test_the_rule_books_worked_example_dealt_player_banker_player_banker() -> None:
    coup = play_coup(["10", "K", "3", "10", "10", "Q"])
    assert coup == Coup(("10", "3", "10"), ("K", "10", "Q"), 3, 0, "player")
    assert coup.player_drew_third and coup.banker_drew_third and coup.cards_used == 6


def test_the_api_examples_cards_are_read_in_dealing_order() -> None:
    # api.md lists the worked example's cards hand by hand (10,3 | K,10 | 10 | Q);
    # dealt P, B, P, B they make a different coup, which the Banker wins.
    coup = play_coup(["10", "3", "K", "10", "10", "Q"])
    assert coup == Coup(("10", "K", "10"), ("3", "10", "Q"), 0, 3, "banker")


@pytest.mark.parametrize(
    ("cards", "player", "banker", "outcome"),
    [
        (["8", "K", "A", "9"], ("8", "A"), ("K", "9"), "tie"),  # Both naturals: 9 each.
        (["4", "5", "4", "4"], ("4", "4"), ("5", "4"), "banker"),  # Natural 9 beats 8.
        (["6", "6", "A", "A", "2"], ("6", "A"), ("6", "A"), "tie"),  # Both stand on 7.
        (["6", "5", "K", "J", "9"], ("6", "K"), ("5", "J", "9"), "player"),  # B draws, P stood.
        (["A", "3", "2", "K", "8", "4"], ("A", "2", "8"), ("3", "K"), "banker"),  # B 3 vs an 8.
        (["3", "6", "A", "K", "6", "5"], ("3", "A", "6"), ("6", "K", "5"), "banker"),  # B 6 vs 6.
        (["10", "7", "5", "K", "4", "9"], ("10", "5", "4"), ("7", "K"), "player"),  # B stands 7.
    ],
)
def test_coups_from_the_rule_book(
    cards: list[str], player: tuple[str, ...], banker: tuple[str, ...], outcome: str
) -> None:
    coup = play_coup([*cards, "2", "2"])  # Spare cards are never used.
    assert (coup.player_cards, coup.banker_cards, coup.outcome) == (player, banker, outcome)


def test_a_coup_serialises_to_the_api_shape_with_lists() -> None:
    coup = play_coup(["10", "KH", "3", "10", "10", "Q"])
    as_dict = coup.to_dict()
    assert as_dict == {
        "player": {"cards": ["10", "3", "10"], "total": 3},
        "banker": {"cards": ["KH", "10", "Q"], "total": 0},
        "outcome": "player",
    }
    assert json.loads(json.dumps(as_dict)) == as_dict


def test_the_cards_running_out_is_a_clear_error() -> None:
    with pytest.raises(NotEnoughCards, match="needs card 5 but only 4 were given"):
        play_coup(["10", "3", "K", "10"])
    with pytest.raises(NotEnoughCards, match="needs card 4"):
        play_coup(["10", "3", "K"])


@pytest.mark.parametrize(
    ("spot", "stake_cents", "outcome", "tie_pays", "net_cents"),
    [
        ("player", 1000, "player", 8, 1000),
        ("player", 1000, "banker", 8, -1000),
        ("player", 1000, "tie", 8, 0),
        ("banker", 1000, "banker", 8, 950),
        ("banker", 1001, "banker", 9, 950),  # 950.95 cents, rounded down.
        ("banker", 15, "banker", 8, 14),  # 14.25 cents, rounded down.
        ("banker", 1000, "player", 8, -1000),
        ("banker", 1000, "tie", 9, 0),
        ("tie", 1000, "tie", 8, 8000),
        ("tie", 1000, "tie", 9, 9000),
        ("tie", 1000, "player", 9, -1000),
        ("tie", 1000, "banker", 8, -1000),
    ],
)
def test_bets_settle_player_even_banker_19_to_20_and_tie_per_variant(
    spot: str, stake_cents: int, outcome: str, tie_pays: int, net_cents: int
) -> None:
    assert bet_net_cents(spot, stake_cents, outcome, tie_pays) == net_cents


def test_a_bet_on_an_unknown_spot_is_refused() -> None:
    with pytest.raises(UnknownSpot, match="'dragon'"):
        bet_net_cents("dragon", 1000, "tie", 8)


def test_the_spots_are_plain_strings() -> None:
    assert SPOTS == ("player", "banker", "tie")


def test_the_default_variants_are_p2p_six_decks_9_to_1_and_house_eight_decks_8_to_1() -> None:
    assert (P2P.name, P2P.decks, P2P.tie_pays) == ("p2p", 6, 9)
    assert (HOUSE.name, HOUSE.decks, HOUSE.tie_pays) == ("house", 8, 8)
    assert VARIANTS == {"p2p": P2P, "house": HOUSE}


@pytest.mark.parametrize(("decks", "tie_pays"), [(0, 8), (9, 8), (6, 0), (6, 101)])
def test_a_variant_with_impossible_settings_is_refused(decks: int, tie_pays: int) -> None:
    with pytest.raises(ValueError, match="baccarat variant 'odd'"):
        BaccaratVariant(name="odd", decks=decks, tie_pays=tie_pays)


# The P2P money rules, each written once (rules.md 2.1).


@pytest.mark.parametrize(
    ("stake_cents", "basis_points", "commission"),
    [(1000, 175, 18), (1200, 175, 21), (100, 175, 2), (10_000, 175, 175), (0, 175, 0), (2, 175, 0)],
)
def test_the_p2p_commission_is_its_rate_of_the_total_stake_half_up_to_the_cent(
    stake_cents: int, basis_points: int, commission: int
) -> None:
    assert commission_cents(stake_cents, basis_points) == commission


@pytest.mark.parametrize(
    ("stake_max_cents", "worst_case"),
    [(10_000, 90_175), (20_000, 180_350), (35_000, 315_613)],
    ids=["I $901.75", "II $1,803.50", "III $3,156.13"],
)
def test_a_dealers_worst_case_is_every_stake_on_a_winning_tie_and_its_commission(
    stake_max_cents: int, worst_case: int
) -> None:
    assert dealer_worst_case_cents(9, stake_max_cents, 175) == worst_case


def test_a_stake_moves_one_dealer_point_per_whole_dollar() -> None:
    assert [points_for_stake(cents) for cents in (100, 2500, 199, 0)] == [1, 25, 1, 0]


def test_stakes_are_whole_dollars_shown_as_the_fewest_chips() -> None:
    assert chips_for(13_100) == [100, 25, 5, 1]  # $131
    assert chips_for(3_100) == [25, 5, 1]
    assert chips_for(20_000) == [100, 100]
    assert chips_for(700) == [5, 1, 1]
    for cents in (0, -100, 150, 1):
        with pytest.raises(InvalidStake):
            check_chips(cents)
