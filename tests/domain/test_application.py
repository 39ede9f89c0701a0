"""The application's commands through its seam, on the library's in-memory store: every
command saves what it touched in one atomic save, retries a conflict, answers a
repeated request once, and dispatches each round command to the round's game.

The same commands on SQLite and PostgreSQL, with real concurrency, are in
tests/infra/store/test_application.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from domain.application import CasinoApplication
from domain.errors import (
    IllegalAction,
    InsufficientFunds,
    InvalidBox,
    NoPreviousBets,
    UnknownRound,
)
from domain.outcome import Receipt
from domain.settings import GameSettings
from domain.wallet import load_wallet
from infra.commands import with_commands

EXAMPLE = ["10", "K", "3", "10", "10", "Q"]  # rules.md 2.1: the player hand wins


class Saves:
    """Counts the saves reaching the recorder, and the events in each."""

    def __init__(self, app: CasinoApplication) -> None:
        self.sizes: list[int] = []
        insert = app.recorder.insert_events

        def counted(events: Any, **kwargs: Any) -> Any:
            self.sizes.append(len(events))
            return insert(events, **kwargs)

        app.recorder.insert_events = counted  # type: ignore[method-assign]


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def app(sleeps: list[float]) -> Iterator[CasinoApplication]:
    application = with_commands(games=GameSettings(test_mode=True), sleep=sleeps.append)
    for name, cents in (("dan", 500_000), ("pat", 10_000)):
        application.register_player(name, name.title())
        application.deposit(name, "real", cents)
    application.adjust_points("dan", "real", 100, "qualifies")
    yield application
    application.close()


def p2p_round(app: CasinoApplication) -> str:
    table = app.sit_as_dealer("dan", "real", "II", False).result
    assert table is not None
    app.join_as_player("pat", "real", "II")
    round_ = app.confirm(table.table_id, EXAMPLE).result
    assert round_ is not None
    return round_.round_id


def test_a_p2p_deal_saves_the_round_both_wallets_and_the_table_in_one_save(
    app: CasinoApplication,
) -> None:
    round_id = p2p_round(app)
    app.place_bet(round_id, "banker", 1000)
    saves = Saves(app)
    outcome = app.deal(round_id)
    # 9 round events, the player's settlement and points, the dealer's settlement,
    # commission and points, and the table's RoundEnded: one save, one transaction.
    assert saves.sizes == [15]
    assert outcome.position == app.recorder.max_notification_id()
    assert (app.wallet("pat", "real").balance_cents, app.wallet("dan", "real").balance_cents) == (
        9_000,
        500_982,
    )


def test_a_refused_command_saves_nothing(app: CasinoApplication) -> None:
    saves = Saves(app)
    with pytest.raises(InsufficientFunds):
        app.withdraw("pat", "real", 10_001)
    assert saves.sizes == []


def test_a_conflict_runs_the_command_again_on_fresh_state_after_a_pause(
    app: CasinoApplication, sleeps: list[float]
) -> None:
    attempts = []

    def withdraw_while_another_deposits(unit: Any) -> None:
        wallet = load_wallet(unit, "pat", "real")
        attempts.append(wallet.balance_cents)
        if len(attempts) == 1:
            app.deposit("pat", "real", 500)  # saved first: this attempt's save conflicts
        wallet.withdraw("t", 100)

    app.commands.run(withdraw_while_another_deposits)
    assert attempts == [10_000, 10_500]
    assert len(sleeps) == 1 and 0 <= sleeps[0] <= 0.001
    assert app.wallet("pat", "real").balance_cents == 10_400


def test_a_refusal_reached_on_state_another_command_moved_on_is_decided_again(
    app: CasinoApplication, sleeps: list[float]
) -> None:
    attempts = []

    def withdraw_what_a_deposit_just_brought(unit: Any) -> None:
        wallet = load_wallet(unit, "pat", "real")
        attempts.append(wallet.balance_cents)
        if len(attempts) == 1:
            app.deposit("pat", "real", 500)
        wallet.withdraw("t", 10_500)  # refused on the state first read, not on the new one

    app.commands.run(withdraw_what_a_deposit_just_brought)
    assert attempts == [10_000, 10_500]
    assert app.wallet("pat", "real").balance_cents == 0


def test_a_repeated_request_is_answered_once_and_applied_once(app: CasinoApplication) -> None:
    def receipt() -> Receipt[Any]:
        return Receipt("key-1", "body", lambda moved: {"balance": moved.wallet.balance_cents})

    first = app.deposit.with_receipt(receipt(), "pat", "real", 250)
    again = app.deposit.with_receipt(receipt(), "pat", "real", 250)
    assert (first.replayed, again.replayed) == (False, True)
    assert first.answer == again.answer == {"balance": 10_250}
    assert app.wallet("pat", "real").balance_cents == 10_250


def test_round_commands_go_to_the_rounds_own_game(app: CasinoApplication) -> None:
    baccarat = app.open_house_round("pat", "real").result
    blackjack = app.open_blackjack_round("pat", "real", "2").result
    assert baccarat is not None and blackjack is not None
    with pytest.raises(IllegalAction, match="not a blackjack round"):
        app.act(baccarat.round_id, 1, 0, "hit")
    with pytest.raises(NoPreviousBets, match="not a blackjack round"):
        app.repeat_bets(baccarat.round_id)
    with pytest.raises(InvalidBox):
        app.place_bet(blackjack.round_id, "banker", 1000)
    app.place_bet(blackjack.round_id, "3", 1000)
    assert app.round(blackjack.round_id).bets == {3: 1000}


def test_an_id_of_another_kind_is_no_round(app: CasinoApplication) -> None:
    table = app.sit_as_dealer("dan", "real", "II", False).result
    assert table is not None
    for round_id in (table.table_id, "not-a-uuid"):
        with pytest.raises(UnknownRound):
            app.deal(round_id)
