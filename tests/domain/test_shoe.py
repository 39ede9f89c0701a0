import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from domain import shoe as shoe_module
from domain.cards import InvalidCard, build_shoe_cards, rank_of, standard_deck
from domain.shoe import (
    SHUFFLE_ALGORITHM,
    CardNotInShoe,
    InvalidSeed,
    SeededGenerator,
    certification_shoe,
    commitment,
    draw_seed,
    shuffle,
    shuffled_shoe,
)

# The test vector of docs/shuffle.md.
VECTOR_SEED = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
VECTOR_COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
VECTOR_FIRST_WORDS = [
    0xA9D6E500293A88BD,
    0x38CBE213D07AB71F,
    0x8CB2258552072A01,
    0xBDF1C40BE527F4D0,
]
VECTOR_BLOCK_ONE_FIRST_WORD = 0x6061C4386D7A1788
VECTOR_SIX_DECKS = [
    "3S",
    "6D",
    "6D",
    "2D",
    "8H",
    "5H",
    "QC",
    "9S",
    "6S",
    "9D",
    "AD",
    "QH",
    "JC",
    "9C",
    "7H",
    "8S",
    "7C",
    "3H",
    "6D",
    "3D",
]
VECTOR_EIGHT_DECKS = [
    "9D",
    "QC",
    "3S",
    "3C",
    "JD",
    "5C",
    "7D",
    "AC",
    "3C",
    "7H",
    "9H",
    "5H",
    "10D",
    "6S",
    "8S",
    "JS",
    "6D",
    "7D",
    "6H",
    "6H",
]

# Chi-square critical values at p = 0.001: a fair shuffle fails one in a thousand seed sets.
CHI_SQUARE_CRITICAL_23_DEGREES = 49.728
CHI_SQUARE_CRITICAL_51_DEGREES = 87.968

Shuffler = Callable[[Sequence[str], str], list[str]]


def test_the_algorithm_has_a_stable_name() -> None:
    assert SHUFFLE_ALGORITHM == "fy-sha256-v1"


def test_the_commitment_is_the_sha256_of_the_raw_seed_bytes() -> None:
    assert commitment(VECTOR_SEED) == VECTOR_COMMITMENT
    assert commitment(VECTOR_SEED) == hashlib.sha256(bytes(range(32))).hexdigest()
    assert commitment(VECTOR_SEED.upper()) == VECTOR_COMMITMENT


def test_the_generator_reads_sha256_blocks_of_seed_and_counter_as_big_endian_words() -> None:
    generator = SeededGenerator(VECTOR_SEED)
    assert [generator.next_word() for _ in range(4)] == VECTOR_FIRST_WORDS
    assert generator.next_word() == VECTOR_BLOCK_ONE_FIRST_WORD
    block_zero = hashlib.sha256(bytes(range(32)) + bytes(8)).digest()
    assert int.from_bytes(block_zero[:8], "big") == VECTOR_FIRST_WORDS[0]


def test_the_shoes_match_the_published_test_vector() -> None:
    assert shuffled_shoe(VECTOR_SEED, 6)[:20] == VECTOR_SIX_DECKS
    assert shuffled_shoe(VECTOR_SEED, 8)[:20] == VECTOR_EIGHT_DECKS


def test_the_docs_publish_the_same_test_vector() -> None:
    text = (Path(__file__).parents[2] / "docs" / "shuffle.md").read_text(encoding="utf-8")
    for published in (VECTOR_SEED, VECTOR_COMMITMENT, " ".join(VECTOR_SIX_DECKS)):
        assert published in text
    assert " ".join(VECTOR_EIGHT_DECKS) in text


def test_a_drawn_seed_is_64_hex_characters_and_never_repeats() -> None:
    seeds = {draw_seed() for _ in range(100)}
    assert len(seeds) == 100
    assert all(re.fullmatch("[0-9a-f]{64}", seed) for seed in seeds)


@pytest.mark.parametrize("seed", ["", "00" * 31, "00" * 33, "zz" * 32, "0 " * 32, " " + "0" * 63])
def test_a_seed_that_is_not_64_hex_characters_is_refused(seed: str) -> None:
    with pytest.raises(InvalidSeed):
        commitment(seed)
    with pytest.raises(InvalidSeed):
        shuffled_shoe(seed, 6)


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_a_shuffled_shoe_holds_each_card_exactly_once_per_deck(decks: int) -> None:
    shoe = shuffled_shoe(draw_seed(), decks)
    assert len(shoe) == 52 * decks
    assert Counter(shoe) == Counter(build_shoe_cards(decks))


def test_the_same_seed_gives_the_same_shoe_and_another_seed_another() -> None:
    assert shuffled_shoe(VECTOR_SEED, 6) == shuffled_shoe(VECTOR_SEED, 6)
    assert shuffled_shoe(VECTOR_SEED, 6) != shuffled_shoe(_seed(1), 6)


def test_shuffling_leaves_its_input_alone() -> None:
    cards = standard_deck()
    shuffle(cards, VECTOR_SEED)
    assert cards == standard_deck()


def _drawing_shuffle(cards: Sequence[str], words: Iterator[int]) -> list[str]:
    """docs/shuffle.md's reference Fisher-Yates, over a given word stream."""
    shuffled = list(cards)
    for i in range(len(shuffled) - 1, 0, -1):
        n = i + 1
        limit = 2**64 - 2**64 % n
        j = next(word for word in words if word < limit) % n
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled


def _words(seed_hex: str) -> Iterator[int]:
    generator = SeededGenerator(seed_hex)
    return iter(generator.next_word, None)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 8, 9, 52, 53, 311, 312, 415, 416])
def test_the_shuffle_draws_as_the_reference_does_at_every_shoe_length(size: int) -> None:
    cards = [f"c{index}" for index in range(size)]
    for index in range(40):
        assert shuffle(cards, _seed(index)) == _drawing_shuffle(cards, _words(_seed(index)))


@pytest.mark.parametrize("rejected_at", [0, 1, 100, 410, 413])
def test_a_rejected_word_is_skipped_as_uniform_below_skips_it(
    rejected_at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The word at index k is drawn below n = 416 - k; 2**64 - 1 passes only where n is a
    # power of two, which no n of these steps is: it is rejected.
    def words_of(seed_hex: str) -> list[int]:
        stream = _words(seed_hex)
        found = [next(stream) for _ in range(440)]
        found.insert(rejected_at, 2**64 - 1)
        return found

    def blocks(seed: bytes, first: int, count: int) -> list[int]:
        return words_of(seed.hex())[4 * first : 4 * (first + count)]

    cards = build_shoe_cards(8)
    taking_every_word = list(cards)
    for i, word in zip(range(415, 0, -1), words_of(VECTOR_SEED), strict=False):
        j = word % (i + 1)
        taking_every_word[i], taking_every_word[j] = taking_every_word[j], taking_every_word[i]
    monkeypatch.setattr(shoe_module, "_blocks_of_words", blocks)

    shuffled = shuffle(cards, VECTOR_SEED)

    # The word is skipped, and each draw after it takes the word after its own.
    assert shuffled == _drawing_shuffle(cards, iter(words_of(VECTOR_SEED)))
    assert shuffled == _drawing_shuffle(cards, _words(VECTOR_SEED))
    assert shuffled != taking_every_word


@pytest.mark.parametrize("n", [1, 2, 3, 10, 416, 2**63 + 1, 2**64])
def test_uniform_below_stays_in_range(n: int) -> None:
    generator = SeededGenerator(VECTOR_SEED)
    assert all(0 <= generator.uniform_below(n) < n for _ in range(200))


def test_uniform_below_rejects_the_words_that_would_bias_the_modulo() -> None:
    # With n = 2**63 + 1 almost half of all words lie above the limit and must be skipped.
    n = 2**63 + 1
    limit = 2**64 - 2**64 % n
    reference, generator = SeededGenerator(VECTOR_SEED), SeededGenerator(VECTOR_SEED)
    accepted = [word % n for word in (reference.next_word() for _ in range(40)) if word < limit]
    assert [generator.uniform_below(n) for _ in range(len(accepted))] == accepted
    assert len(accepted) < 40


# Statistical tests. The seeds are fixed, so these are deterministic; each check
# is shown to have teeth by the biased shuffles below, which it must flag.


def _seed(index: int) -> str:
    return index.to_bytes(32, "big").hex()


def _chi_square(counts: Counter[str] | Counter[int], cells: int, trials: int) -> float:
    assert len(counts) <= cells
    expected = trials / cells
    observed = list(counts.values()) + [0] * (cells - len(counts))
    return sum((count - expected) ** 2 / expected for count in observed)


def _permutation_chi_square(shuffler: Shuffler) -> float:
    """How far from uniform the 24 orders of a 4-card deck are over 6000 fixed seeds."""
    trials = 6000
    orders = ("".join(shuffler(["a", "b", "c", "d"], _seed(index))) for index in range(trials))
    counts = Counter(orders)
    return _chi_square(counts, 24, trials)


def _position_chi_square(shuffler: Shuffler) -> float:
    """How far from uniform the position of AS in one deck is over 5200 fixed seeds."""
    trials = 5200
    positions: Counter[int] = Counter(
        shuffler(standard_deck(), _seed(index)).index("AS") for index in range(trials)
    )
    return _chi_square(positions, 52, trials)


def _off_by_one_shuffle(cards: Sequence[str], seed_hex: str) -> list[str]:
    """j below i instead of i + 1 (Sattolo's cycle): no card ever stays in place."""
    generator, shuffled = SeededGenerator(seed_hex), list(cards)
    for i in range(len(shuffled) - 1, 0, -1):
        j = generator.uniform_below(i)
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled


def _naive_shuffle(cards: Sequence[str], seed_hex: str) -> list[str]:
    """Swap each position with any position: n**n paths onto n! orders, unevenly."""
    generator, shuffled = SeededGenerator(seed_hex), list(cards)
    for i in range(len(shuffled) - 1, 0, -1):
        j = generator.uniform_below(len(shuffled))
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled


def _modulo_biased_shuffle(cards: Sequence[str], seed_hex: str) -> list[str]:
    """Fisher-Yates with `word mod n` on 3-bit words: the modulo bias, exaggerated."""
    generator, shuffled = SeededGenerator(seed_hex), list(cards)
    for i in range(len(shuffled) - 1, 0, -1):
        j = (generator.next_word() & 0b111) % (i + 1)
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled


def test_every_order_of_a_small_deck_is_equally_likely() -> None:
    assert _permutation_chi_square(shuffle) < CHI_SQUARE_CRITICAL_23_DEGREES


@pytest.mark.parametrize("biased", [_off_by_one_shuffle, _naive_shuffle, _modulo_biased_shuffle])
def test_the_order_check_flags_a_biased_shuffle(biased: Shuffler) -> None:
    assert _permutation_chi_square(biased) > CHI_SQUARE_CRITICAL_23_DEGREES


def test_a_card_is_equally_likely_at_every_position_of_a_deck() -> None:
    assert _position_chi_square(shuffle) < CHI_SQUARE_CRITICAL_51_DEGREES


def test_the_position_check_flags_an_off_by_one_shuffle() -> None:
    assert _position_chi_square(_off_by_one_shuffle) > CHI_SQUARE_CRITICAL_51_DEGREES


def test_the_first_card_of_a_six_deck_shoe_is_any_of_the_52_cards_alike() -> None:
    trials = 3000
    firsts = Counter(shuffled_shoe(_seed(index), 6)[0] for index in range(trials))
    assert set(firsts) == set(standard_deck())
    assert _chi_square(firsts, 52, trials) < CHI_SQUARE_CRITICAL_51_DEGREES


# Certification shoes.


def test_a_certification_shoe_deals_the_prefix_first() -> None:
    prefix = ["10", "3", "K", "10", "10", "Q"]
    shoe = certification_shoe(prefix, VECTOR_SEED, 6)
    assert [rank_of(card) for card in shoe[:6]] == prefix
    assert shoe[:6] == ["10S", "3S", "KS", "10H", "10D", "QS"]


def test_a_suited_prefix_card_is_dealt_exactly_and_bare_ranks_avoid_it() -> None:
    shoe = certification_shoe(["K", "KS", "qh", "K"], VECTOR_SEED, 1)
    assert shoe[:4] == ["KH", "KS", "QH", "KD"]


def test_the_rest_of_a_certification_shoe_is_the_shoe_minus_the_prefix_shuffled() -> None:
    prefix = ["A", "AS", "9H", "K", "10"]
    shoe = certification_shoe(prefix, VECTOR_SEED, 8)
    assert Counter(shoe) == Counter(build_shoe_cards(8))
    remaining = build_shoe_cards(8)
    for card in shoe[: len(prefix)]:
        remaining.remove(card)
    assert shoe[len(prefix) :] == shuffle(remaining, VECTOR_SEED)


def test_an_empty_prefix_gives_the_ordinary_shoe() -> None:
    assert certification_shoe([], VECTOR_SEED, 6) == shuffled_shoe(VECTOR_SEED, 6)


@pytest.mark.parametrize(
    ("prefix", "decks"),
    [
        (["K"] * 25, 6),
        (["KH"] * 7, 6),
        (["KH", "K", "K", "K", "K"], 1),
        (["10S", "10"] * 5, 2),
    ],
)
def test_a_prefix_asking_for_more_cards_than_the_shoe_holds_is_refused(
    prefix: list[str], decks: int
) -> None:
    with pytest.raises(CardNotInShoe, match=f"{decks} decks holds only"):
        certification_shoe(prefix, VECTOR_SEED, decks)


def test_a_prefix_may_take_every_card_of_a_rank() -> None:
    shoe = certification_shoe(["K"] * 24, VECTOR_SEED, 6)
    assert all(rank_of(card) != "K" for card in shoe[24:])


def test_a_prefix_with_a_card_that_does_not_exist_is_refused() -> None:
    with pytest.raises(InvalidCard):
        certification_shoe(["10", "1"], VECTOR_SEED, 6)


def test_a_fair_shuffle_reaches_every_order_of_a_small_deck() -> None:
    orders = {"".join(shuffle(["a", "b", "c", "d"], _seed(index))) for index in range(2000)}
    assert orders == {"".join(order) for order in itertools.permutations("abcd")}
