import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infra.cli.rules import LINE_CHARS_MAX, rules_app

PROJECT_ROOT = Path(__file__).parents[3]
runner = CliRunner()


def run_rules(*arguments: str, input_text: str | None = None) -> tuple[int, str]:
    result = runner.invoke(rules_app, ["baccarat", *arguments], input=input_text)
    return result.exit_code, result.output


def test_the_api_example_lists_each_hands_cards_then_the_third_cards() -> None:
    status, output = run_rules("--cards", "10,3,K,10,10,Q")
    assert status == 0
    assert json.loads(output) == {
        "player": {"cards": ["10", "3", "10"], "total": 3},
        "banker": {"cards": ["K", "10", "Q"], "total": 0},
        "outcome": "player",
    }


def test_in_deal_order_the_same_cards_are_player_banker_player_banker() -> None:
    status, output = run_rules("--cards", "10,3,K,10,10,Q", "--order", "deal")
    assert status == 0
    assert json.loads(output) == {
        "player": {"cards": ["10", "K", "10"], "total": 0},
        "banker": {"cards": ["3", "10", "Q"], "total": 3},
        "outcome": "banker",
    }


def test_the_rule_books_worked_example_in_dealing_order_is_a_player_win() -> None:
    status, output = run_rules("--cards", "10,K,3,10,10,Q", "--variant", "house", "--order", "deal")
    assert status == 0
    assert json.loads(output) == {
        "player": {"cards": ["10", "3", "10"], "total": 3},
        "banker": {"cards": ["K", "10", "Q"], "total": 0},
        "outcome": "player",
    }


def test_suits_are_kept_and_spare_cards_ignored() -> None:
    status, output = run_rules("--cards", "9h,as,kd,10c,2,3,4", "--order", "deal")
    assert status == 0
    assert json.loads(output) == {
        "player": {"cards": ["9H", "KD"], "total": 9},
        "banker": {"cards": ["AS", "10C"], "total": 1},
        "outcome": "player",
    }


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--cards", "10,3,Z,1"], "'Z' is not a card"),
        (["--cards", "10,3,K"], "needs card 4"),
        (["--cards", "10,3,K,10"], "needs card 5"),
        ([], "exactly one of --cards, --stdin or --odds"),
        (["--cards", "10,3,K,10,10,Q", "--odds"], "exactly one of"),
        (["--cards", "10,3,K,10,10,Q", "--decks", "6"], "only with --odds"),
        (["--odds", "--variant", "macao"], "p2p, house"),
        (["--odds", "--decks", "9"], "--decks"),
        (["--odds", "--tie-pays", "0"], "--tie-pays"),
        (["--cards", "10,3,K,10,10,Q", "--order", "sideways"], "hands, deal"),
    ],
)
def test_bad_arguments_exit_with_status_2_and_say_why(arguments: list[str], message: str) -> None:
    status, output = run_rules(*arguments)
    assert status == 2
    assert message in " ".join(output.replace("│", " ").split())


def test_stdin_answers_every_line_in_order_and_bad_lines_get_an_error() -> None:
    lines = [
        '{"cards": ["10", "3", "K", "10", "10", "Q"]}',
        "not json",
        '{"cards": ["10", "K", "3", "10", "10", "Q"], "note": "extra keys are fine"}',
        "",
        '{"cards": [10, 3, "K", "10"]}',
        '["10", "3", "K", "10"]',
        '{"cards": ["10", "3", "K", "10"]}',
        '{"cards": ["10", "3", "K", "ZZ"]}',
        "[" * 3000 + "]" * 3000,
        '{"cards": ["' + "A" * LINE_CHARS_MAX + '"]}',
        '{"cards": ["8", "9", "K", "K"]}',
    ]
    status, output = run_rules("--stdin", "--order", "deal", input_text="\n".join(lines) + "\n")
    assert status == 0
    answers = [json.loads(line) for line in output.splitlines()]
    assert len(answers) == len(lines)
    assert answers[0]["outcome"] == "banker"
    assert answers[2]["outcome"] == "player"
    assert answers[10] == {
        "player": {"cards": ["8", "K"], "total": 8},
        "banker": {"cards": ["9", "K"], "total": 9},
        "outcome": "banker",
    }
    errors = {index: answer["error"] for index, answer in enumerate(answers) if "error" in answer}
    assert sorted(errors) == [1, 3, 4, 5, 6, 7, 8, 9]
    assert "not JSON" in errors[1]
    assert "empty line" in errors[3]
    assert "must be a string" in errors[4]
    assert "expected an object" in errors[5]
    assert "needs card 5" in errors[6]
    assert "'ZZ' is not a card" in errors[7]
    assert "recursion" in errors[8]
    assert "at most" in errors[9]


def test_stdin_lines_default_to_the_same_order_as_cards() -> None:
    status, output = run_rules(
        "--stdin", input_text='{"cards": ["10", "3", "K", "10", "10", "Q"]}\n'
    )
    assert status == 0
    assert json.loads(output)["player"] == {"cards": ["10", "3", "10"], "total": 3}


def test_stdin_keeps_up_with_many_lines() -> None:
    requests = [f'{{"cards": ["{n % 9 + 1}", "3", "K", "10", "4", "QS"]}}' for n in range(20_000)]
    status, output = run_rules("--stdin", input_text="\n".join(requests))
    assert status == 0
    assert len(output.splitlines()) == len(requests)
    assert output.splitlines()[-1] == output.splitlines()[-10]


def test_odds_print_the_exact_probabilities_and_house_edges() -> None:
    status, output = run_rules("--odds", "--decks", "8", "--tie-pays", "8")
    assert status == 0
    odds = json.loads(output)
    assert set(odds) == {"player", "banker", "tie", "house_edge"}
    assert round(odds["banker"], 6) == 0.458597
    assert round(odds["player"], 6) == 0.446247
    assert round(odds["tie"], 6) == 0.095156
    assert [round(odds["house_edge"][spot] * 100, 2) for spot in ("banker", "player", "tie")] == [
        1.06,
        1.24,
        14.36,
    ]
    assert odds["banker"] == 0.4585974226  # Ten significant digits.


@pytest.mark.parametrize(
    ("arguments", "tie_edge_percent"),
    [
        ([], 4.931),
        (["--variant", "house"], 14.360),
        (["--variant", "house", "--tie-pays", "9"], 4.844),
    ],
)
def test_odds_default_to_the_variants_decks_and_tie_payout(
    arguments: list[str], tie_edge_percent: float
) -> None:
    status, output = run_rules("--odds", *arguments)
    assert status == 0
    assert round(json.loads(output)["house_edge"]["tie"] * 100, 3) == tie_edge_percent


def run_module(*arguments: str, input_text: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "infra.cli", "rules", "baccarat", *arguments],
        input=input_text,
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        check=False,
        timeout=60,
    )


def test_the_module_runs_as_a_command() -> None:
    result = run_module("--cards", "10,3,K,10,10,Q")
    assert result.returncode == 0
    assert json.loads(result.stdout)["outcome"] == "player"


def test_the_module_reads_stdin_line_by_line() -> None:
    result = run_module("--stdin", input_text='{"cards": ["9", "8", "K", "K"]}\n{}\n')
    assert result.returncode == 0
    assert [json.loads(line) for line in result.stdout.splitlines()][1] == {
        "error": 'expected an object such as {"cards": ["10", "3", "K", "10"]}'
    }


def test_the_module_exits_with_status_2_on_a_bad_card() -> None:
    result = run_module("--cards", "10,3,X,10")
    assert result.returncode == 2
    assert "'X' is not a card" in result.stderr


def test_chemin_de_fer_odds_print_both_sides_edges_by_full_enumeration() -> None:
    result = runner.invoke(rules_app, ["chemin-de-fer", "--odds", "--decks", "6"])
    assert result.exit_code == 0, result.output
    odds = json.loads(result.output)
    assert round(odds["punto"] + odds["banker"] + odds["tie"], 9) == 1
    assert odds["punters_edge"] == odds["banker_edge"]["before_commission"] == 0.01237414899
    assert odds["banker_edge"]["after_commission"] == -0.01055848695
    refused = runner.invoke(rules_app, ["chemin-de-fer"])
    assert refused.exit_code == 2
