"""The auditor's page checks shoes in JavaScript (infra/http/static/audit/verify.js): it must
agree with the Python shuffle on the published test vector, on whole shoes of every size
and on certification shoes, all computed here by domain/shoe.py and handed to node."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from domain.cards import build_shoe_cards
from domain.ids import wallet_uuid
from domain.money import format_cents
from domain.shoe import SeededGenerator, certification_shoe, committed_shoe
from tests.domain.test_shoe import (
    VECTOR_BLOCK_ONE_FIRST_WORD,
    VECTOR_COMMITMENT,
    VECTOR_EIGHT_DECKS,
    VECTOR_FIRST_WORDS,
    VECTOR_SEED,
    VECTOR_SIX_DECKS,
)

ROOT = Path(__file__).parents[3]
NODE_TEST = ROOT / "tests" / "browser" / "verify.test.mjs"
NODE_SECONDS_MAX = 120
BIASED_N = 2**63 + 1  # Almost half of all words lie above its limit and must be skipped.
CERTIFICATION_PREFIXES = [
    (["10", "K", "3", "10", "10", "Q"], 6),  # The seed's worked example (rules.md 2.1).
    (["K", "KS", "qh", "K"], 1),
    (["A", "AS", "9H", "K", "10", " 7 ", "jd"], 8),
    (["10", "6", "7", "9"], 2),
]


def _seed(index: int) -> str:
    return index.to_bytes(32, "big").hex()


def vectors() -> dict[str, object]:
    generator = SeededGenerator(VECTOR_SEED)
    return {
        "seed": VECTOR_SEED,
        "commitment": VECTOR_COMMITMENT,
        "bad_seeds": ["", "00" * 31, "00" * 33, "zz" * 32, "0 " * 32, " " + "0" * 63],
        "first_words": [str(w) for w in [*VECTOR_FIRST_WORDS, VECTOR_BLOCK_ONE_FIRST_WORD]],
        "biased_n": str(BIASED_N),
        "biased_draws": [str(generator.uniform_below(BIASED_N)) for _ in range(12)],
        "unshuffled_two_decks": build_shoe_cards(2),
        "six_decks_first_20": VECTOR_SIX_DECKS,
        "eight_decks_first_20": VECTOR_EIGHT_DECKS,
        "shoes": [
            {"seed": seed, "decks": decks, "shoe": committed_shoe(seed, decks)}
            for seed in (VECTOR_SEED, _seed(1), _seed(2**255))
            for decks in range(1, 9)
        ],
        "certification": [
            {"prefix": p, "decks": decks, "shoe": certification_shoe(p, VECTOR_SEED, decks)}
            for p, decks in CERTIFICATION_PREFIXES
        ],
        "impossible_prefixes": [
            {"prefix": ["K"] * 25, "decks": 6},
            {"prefix": ["KH"] * 7, "decks": 6},
            {"prefix": ["10S", "10"] * 5, "decks": 2},
        ],
        "money": [
            [cents, format_cents(cents)] for cents in (0, 5, -5, 100, -1000, 982, 200982, 10**14)
        ],
        "wallets": [
            {"player_id": player, "mode": mode, "wallet_id": str(wallet_uuid(player, mode))}
            for player, mode in (("pat", "real"), ("dan", "real"), ("alice", "play"))
        ],
    }


def test_the_pages_shuffle_agrees_with_the_python_shuffle(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed for the auditor's page tests: install Node.js 20 or newer")
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps(vectors()), encoding="utf-8")
    result = subprocess.run(
        [node, "--test", str(NODE_TEST)],
        env={"VECTORS": str(path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=NODE_SECONDS_MAX,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    written = len(re.findall(r"^test\(", NODE_TEST.read_text(encoding="utf-8"), re.MULTILINE))
    assert f"# pass {written}\n# fail 0" in result.stdout.replace("# suites 0\n", ""), result.stdout
