"""Provably fair shoes: a secret seed fixes the card order, its hash is published first.

Algorithm "fy-sha256-v1", precise enough to re-implement (see also docs/shuffle.md):

1. Seed: 32 bytes from the operating system's CSPRNG, written as 64 lowercase
   hexadecimal characters. Only `draw_seed` touches randomness; everything
   below is a pure function of the seed.
2. Commitment: SHA-256 of the 32 raw seed bytes (not of the hex text), as 64
   lowercase hexadecimal characters. It is published before bets are taken.
3. Generator: block k (k = 0, 1, 2, ...) is SHA-256(seed bytes || k as an
   8-byte big-endian unsigned integer). Each 32-byte block is read as four
   64-bit big-endian unsigned words, in order; blocks are used in order.
4. uniform_below(n), for 1 <= n <= 2**64: take the next word w; let
   limit = 2**64 - (2**64 mod n); if w < limit return w mod n, else discard w
   and take the next word. Every result 0..n-1 is equally likely.
5. Shuffle: the starting list is the unshuffled shoe of `domain/cards.py`
   (deck after deck; each deck AS, 2S, ..., KS, AH, ..., KH, AD, ..., KC).
   Fisher-Yates from the end: for i from len-1 down to 1, j = uniform_below(i + 1),
   swap the items at i and j. Index 0 of the result is the first card dealt.
6. Certification shoes (test mode only): the requested prefix comes first in
   dealing order. Each suited prefix card ("QH") removes the first remaining
   copy of that card from the unshuffled shoe; then each bare rank ("Q"), in
   prefix order, removes the first remaining card of that rank. What remains,
   still in unshuffled order, is shuffled as in step 5 with the seed and
   follows the prefix.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import itertools
import operator
import secrets
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from domain.cards import RANKS, build_shoe_cards, parse_cards

SHUFFLE_ALGORITHM = "fy-sha256-v1"
SHOE_CACHE_SIZE = 256
SEED_BYTES = 32
_WORD_RANGE = 2**64
_WORDS_PER_BLOCK = struct.Struct(">4Q")
# uniform_below's rejection limit for each n up to the largest shoe's length, made once.
_LIMITS_KEPT = 8 * 52 + 1
_LIMITS = (0, *(_WORD_RANGE - _WORD_RANGE % n for n in range(1, _LIMITS_KEPT)))
# Each block index as its 8 big-endian bytes, for the blocks the largest shoe needs.
_BLOCKS_KEPT = _LIMITS_KEPT // 4 + 1
_BLOCK_INDEXES = tuple(index.to_bytes(8, "big") for index in range(_BLOCKS_KEPT))


def _block_hash() -> Callable[[bytes], Any]:
    """SHA-256 as CPython builds it in: the same digest as OpenSSL's, and a fifth cheaper
    for a 40-byte block (OpenSSL's set-up costs more than hashing one block; callgrind,
    the 78 blocks of a six-deck shoe). hashlib's where it is not there."""
    for name in ("_sha2", "_sha256"):  # 3.12 on; 3.11
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found: Callable[[bytes], Any] | None = getattr(module, "sha256", None)
        if found is not None and found(b"abc").digest() == hashlib.sha256(b"abc").digest():
            return found
    return hashlib.sha256


_SHA256 = _block_hash()


class InvalidSeed(ValueError):
    """A seed that is not 64 hexadecimal characters."""


class CardNotInShoe(ValueError):
    """A certification prefix asks for a card the shoe no longer holds."""


def draw_seed() -> str:
    """A fresh 256-bit seed from the OS CSPRNG; the one impure function of this module."""
    return secrets.token_bytes(SEED_BYTES).hex()


def seed_bytes(seed_hex: str) -> bytes:
    """The 32 raw bytes of a seed written as 64 hexadecimal characters."""
    if len(seed_hex) != 2 * SEED_BYTES:
        raise InvalidSeed(f"a seed is {2 * SEED_BYTES} hexadecimal characters, not {len(seed_hex)}")
    try:
        seed = bytes.fromhex(seed_hex)
    except ValueError:  # a character that is no hexadecimal digit
        seed = b""
    # Fewer bytes than characters / 2: bytes.fromhex quietly skipped spaces.
    if len(seed) != SEED_BYTES:
        raise InvalidSeed("a seed must contain only hexadecimal characters")
    return seed


def commitment(seed_hex: str) -> str:
    """SHA-256 of the 32 raw seed bytes, as 64 lowercase hexadecimal characters."""
    return hashlib.sha256(seed_bytes(seed_hex)).hexdigest()


class SeededGenerator:
    """The deterministic word stream of step 3 and the unbiased draw of step 4."""

    def __init__(self, seed_hex: str) -> None:
        self._words = _word_stream(seed_bytes(seed_hex))

    def next_word(self) -> int:
        """The next 64-bit unsigned word of the stream."""
        return next(self._words)

    def uniform_below(self, n: int) -> int:
        """A uniform integer in 0..n-1, by rejection: no modulo bias."""
        assert 1 <= n <= _WORD_RANGE
        limit = _WORD_RANGE - _WORD_RANGE % n
        word = next(self._words)
        while word >= limit:
            word = next(self._words)
        return word % n


def _word_stream(seed: bytes) -> Iterator[int]:
    """Four big-endian 64-bit words from each SHA-256(seed || block index) block, in order."""
    for block_index in itertools.count():
        block = hashlib.sha256(seed + block_index.to_bytes(8, "big")).digest()
        yield from _WORDS_PER_BLOCK.unpack(block)


def shuffle(cards: Sequence[str], seed_hex: str) -> list[str]:
    """A new list: `cards` in the Fisher-Yates order fixed by the seed (step 5).

    Every audit of a round shuffles its whole shoe again, so the draws are made in
    bulk: the words a shoe needs in one go, and, when none of them can be rejected by
    uniform_below (all but about one in 2**46 shuffles), every j = word mod n at once;
    else the draws one by one (`_shuffle_drawing`). Either way the same cards."""
    seed = seed_bytes(seed_hex)
    shuffled = list(cards)
    steps = len(shuffled) - 1
    if steps < 1:
        return shuffled
    words = _blocks_of_words(seed, 0, -(-steps // 4))
    sizes = range(steps + 1, 1, -1)  # n = i + 1 for i from len - 1 down to 1
    # uniform_below(n) rejects only words from 2**64 - (2**64 mod n) on, and
    # 2**64 mod n < n <= len: below 2**64 - len no word is rejected, whatever its n.
    # (One max over the words: a fifth of the comparisons word by word, measured.)
    if max(words) < _WORD_RANGE - len(shuffled):
        for i, j in zip(range(steps, 0, -1), map(operator.mod, words, sizes), strict=False):
            shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
        return shuffled
    return _shuffle_drawing(shuffled, seed, words)


def _shuffle_drawing(shuffled: list[str], seed: bytes, words: list[int]) -> list[str]:
    """Fisher-Yates in place, each j drawn by uniform_below from the word stream of
    `seed`, whose first words are `words`: a rejected word takes the next one."""
    taken = 0
    for i in range(len(shuffled) - 1, 0, -1):
        n = i + 1
        limit = _LIMITS[n] if n < _LIMITS_KEPT else _WORD_RANGE - _WORD_RANGE % n
        while True:
            if taken == len(words):
                words += _blocks_of_words(seed, len(words) // 4, 1)
            word = words[taken]
            taken += 1
            if word < limit:
                break
        j = word % n
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled


def _blocks_of_words(seed: bytes, first: int, count: int) -> list[int]:
    """The words of `count` blocks of step 3 from block `first` on."""
    sha256, kept = _SHA256, _BLOCK_INDEXES
    blocks = b"".join([
        sha256(seed + (kept[i] if i < _BLOCKS_KEPT else i.to_bytes(8, "big"))).digest()
        for i in range(first, first + count)
    ])  # fmt: skip
    return list(struct.unpack(f">{4 * count}Q", blocks))


def shuffled_shoe(seed_hex: str, decks: int) -> list[str]:
    """The whole shoe of `decks` decks in the order fixed by the seed."""
    return shuffle(build_shoe_cards(decks), seed_hex)


def certification_shoe(prefix: Sequence[str], seed_hex: str, decks: int) -> list[str]:
    """The prefix in dealing order, then the rest of the shoe shuffled with the seed (step 6)."""
    requested = parse_cards(prefix)
    remaining = build_shoe_cards(decks)
    chosen: list[str | None] = [None] * len(requested)
    # Suited cards first, so that a bare rank never takes a card named later in the prefix.
    for index, card in enumerate(requested):
        if card not in RANKS:
            chosen[index] = _take_card(remaining, card, decks)
    for index, card in enumerate(requested):
        if card in RANKS:
            chosen[index] = _take_rank(remaining, card, decks)
    dealt = [card for card in chosen if card is not None]
    assert len(dealt) == len(requested)
    return dealt + shuffle(remaining, seed_hex)


def _take_card(remaining: list[str], card: str, decks: int) -> str:
    """Remove the first copy of `card` from `remaining`, or refuse."""
    if card not in remaining:
        raise CardNotInShoe(f"a shoe of {decks} decks holds only {decks} of {card}")
    remaining.remove(card)
    return card


def _take_rank(remaining: list[str], rank: str, decks: int) -> str:
    """Remove the first remaining card of `rank` (in unshuffled order), or refuse."""
    for index, card in enumerate(remaining):
        if card[:-1] == rank:
            return remaining.pop(index)
    raise CardNotInShoe(f"a shoe of {decks} decks holds only {4 * decks} cards of rank {rank}")


@functools.lru_cache(maxsize=SHOE_CACHE_SIZE)
def _committed_shoe(seed_hex: str, decks: int, prefix: tuple[str, ...]) -> tuple[str, ...]:
    if prefix:
        return tuple(certification_shoe(prefix, seed_hex, decks))
    return tuple(shuffled_shoe(seed_hex, decks))


def committed_shoe(seed_hex: str, decks: int, prefix: Sequence[str] = ()) -> list[str]:
    """The shoe a round committed to: certification prefix (if any), the rest shuffled.

    Cached, because each command of a round takes a few cards from the same shoe.
    """
    return list(_committed_shoe(seed_hex, decks, tuple(prefix)))
