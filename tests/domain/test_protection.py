"""Player protection (rules.md 7) through the application, on the in-memory store:
deposit and loss limits on rolling windows with the clock passed in, the cooling-off
of a raise, time-outs and self-exclusion, and a refusal that changes nothing."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from domain.application import CasinoApplication
from domain.errors import (
    DepositLimitExceeded,
    InvalidLimit,
    LossLimitExceeded,
    PlayerExcluded,
    UnknownPeriod,
)
from domain.protection import Activity, Protection, add_months
from domain.protection_record import ENTRIES_MAX
from domain.settings import GameSettings
from infra.commands import with_commands
from tests.domain.tables.test_steps import NOW, Clock

DAY = datetime.timedelta(days=1)
MICROSECOND = datetime.timedelta(microseconds=1)
MINUTE = datetime.timedelta(minutes=1)
SECOND = datetime.timedelta(seconds=1)
PLAYER_WINS = ["10", "K", "3", "10", "10", "Q"]  # house baccarat: player 3, banker 0


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(clock: Clock) -> Iterator[CasinoApplication]:
    application = with_commands(games=GameSettings(test_mode=True), clock=clock)
    application.register_player("pat", "Pat")
    application.deposit("pat", "real", 100_000)
    yield application
    application.close()


def events_of(app: CasinoApplication) -> int:
    return app.recorder.max_notification_id() or 0


def refused(app: CasinoApplication, error: type[Exception], call: Any, *args: Any) -> Any:
    """Then: the call is refused and nothing at all was saved."""
    before = events_of(app)
    with pytest.raises(error) as caught:
        call(*args)
    assert events_of(app) == before
    return caught.value


def test_a_deposit_counts_against_the_day_until_exactly_24_hours_later(
    app: CasinoApplication, clock: Clock
) -> None:
    app.set_limits("pat", {"deposit:day": 10_000})
    app.deposit("pat", "real", 6_000)
    clock.now = NOW + DAY - MICROSECOND
    error = refused(app, DepositLimitExceeded, app.deposit, "pat", "real", 4_001)
    assert error.facts == {
        "limit": "100.00",
        "period": "day",
        "remaining": "40.00",
        "resets_at": (NOW + DAY).isoformat(timespec="microseconds"),
    }
    app.deposit("pat", "real", 4_000)  # exactly what is left fits
    clock.now = NOW + DAY
    app.deposit("pat", "real", 6_000)  # the first deposit has left the window
    assert app.wallet("pat", "real").balance_cents == 100_000 + 16_000


def test_the_week_and_month_windows_count_what_the_day_has_forgotten(
    app: CasinoApplication, clock: Clock
) -> None:
    app.set_limits("pat", {"deposit:day": 10_000, "deposit:week": 15_000})
    app.deposit("pat", "real", 10_000)
    clock.now = NOW + 2 * DAY
    error = refused(app, DepositLimitExceeded, app.deposit, "pat", "real", 6_000)
    assert (error.facts["period"], error.facts["remaining"]) == ("week", "50.00")
    clock.now = NOW + 7 * DAY
    app.deposit("pat", "real", 10_000)


def test_play_money_has_no_limits(app: CasinoApplication) -> None:
    app.set_limits("pat", {"deposit:day": 0})
    app.deposit("pat", "play", 1_000_000)
    refused(app, DepositLimitExceeded, app.deposit, "pat", "real", 1)


def test_lowering_takes_effect_at_once_and_raising_after_the_cooling_off(
    app: CasinoApplication, clock: Clock
) -> None:
    app.set_limits("pat", {"deposit:day": 10_000})
    _, effective = app.set_limits("pat", {"deposit:day": 20_000}).result or (None, {})
    assert effective == {"deposit:day": (NOW + DAY).isoformat(timespec="microseconds")}
    refused(app, DepositLimitExceeded, app.deposit, "pat", "real", 10_001)
    clock.now = NOW + DAY
    app.deposit("pat", "real", 20_000)
    _, lowered = app.set_limits("pat", {"deposit:day": 5_000}).result or (None, {})
    assert lowered == {"deposit:day": clock.now.isoformat(timespec="microseconds")}


def test_a_second_raise_within_the_cooling_off_replaces_the_pending_one(
    app: CasinoApplication, clock: Clock
) -> None:
    app.set_limits("pat", {"deposit:day": 10_000})
    app.set_limits("pat", {"deposit:day": 50_000})
    clock.now = NOW + DAY / 2
    app.set_limits("pat", {"deposit:day": 30_000})  # the later request wins, from now
    clock.now = NOW + DAY
    refused(app, DepositLimitExceeded, app.deposit, "pat", "real", 10_001)  # still 100.00
    clock.now = NOW + DAY + DAY / 2
    refused(app, DepositLimitExceeded, app.deposit, "pat", "real", 30_001)
    app.deposit("pat", "real", 30_000)


def test_removing_a_limit_is_a_raise(app: CasinoApplication, clock: Clock) -> None:
    app.set_limits("pat", {"deposit:day": 0})
    app.set_limits("pat", {"deposit:day": None})
    refused(app, DepositLimitExceeded, app.deposit, "pat", "real", 1)
    clock.now = NOW + DAY
    app.deposit("pat", "real", 1_000_000)
    protection = app.protection("pat")
    assert protection is not None and protection.limit_at("deposit:day", clock.now) is None


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"deposit:day": -1}, InvalidLimit),
        ({"loss:week": 100_000_000_000_001}, InvalidLimit),
        ({"deposit:year": 100}, UnknownPeriod),
        ({"win:day": 100}, UnknownPeriod),
    ],
)
def test_a_bad_limit_changes_nothing(
    app: CasinoApplication, changes: dict[str, int], error: type[Exception]
) -> None:
    refused(app, error, app.set_limits, "pat", changes)
    assert app.protection("pat") is None


def test_a_stake_counts_as_lost_until_its_round_settles(
    app: CasinoApplication, clock: Clock
) -> None:
    app.set_limits("pat", {"loss:day": 5_000})
    round_ = app.open_house_round("pat", "real", PLAYER_WINS).result
    assert round_ is not None
    app.place_bet(round_.round_id, "player", 3_000)
    error = refused(app, LossLimitExceeded, app.place_bet, round_.round_id, "banker", 2_100)
    assert (error.facts["period"], error.facts["remaining"]) == ("day", "20.00")
    assert error.facts["resets_at"] is None  # nothing lost yet: only stakes at risk
    app.place_bet(round_.round_id, "banker", 2_000)
    app.deal(round_.round_id)  # player wins 30.00 back even, banker's 20.00 lost
    protection = app.protection("pat")
    assert protection is not None
    assert protection.used_cents("loss:day", clock.now) == 2_000 - 3_000


def test_a_lost_stake_stays_counted_for_the_window(app: CasinoApplication, clock: Clock) -> None:
    app.set_limits("pat", {"loss:day": 5_000})
    round_ = app.open_house_round("pat", "real", PLAYER_WINS).result
    assert round_ is not None
    app.place_bet(round_.round_id, "banker", 5_000)
    app.deal(round_.round_id)
    next_round = app.open_house_round("pat", "real").result
    assert next_round is not None
    error = refused(app, LossLimitExceeded, app.place_bet, next_round.round_id, "banker", 100)
    assert error.facts["resets_at"] == (NOW + DAY).isoformat(timespec="microseconds")
    clock.now = NOW + DAY
    app.place_bet(next_round.round_id, "banker", 5_000)


def test_a_blackjack_double_is_a_stake_against_the_loss_limit(app: CasinoApplication) -> None:
    app.set_limits("pat", {"loss:day": 1_500})
    round_ = app.open_blackjack_round("pat", "real", "2", ["5", "9", "6", "10"]).result
    assert round_ is not None
    app.place_bet(round_.round_id, "1", 1_000)
    app.deal(round_.round_id)  # 11 against a 9
    error = refused(app, LossLimitExceeded, app.act, round_.round_id, 1, 0, "double")
    assert error.facts["remaining"] == "5.00"


def test_the_record_of_recent_amounts_is_bounded(app: CasinoApplication, clock: Clock) -> None:
    app.set_limits("pat", {"deposit:month": 10_000_000})
    for minute in range(ENTRIES_MAX + 20):
        clock.now = NOW + datetime.timedelta(minutes=minute)
        app.deposit("pat", "real", 100)
    protection = app.protection("pat")
    assert protection is not None and len(protection.deposits) == 2 * ENTRIES_MAX  # at, cents
    assert protection.used_cents("deposit:month", clock.now) == (ENTRIES_MAX + 20) * 100
    clock.now = NOW + 31 * DAY
    app.deposit("pat", "real", 100)
    assert len(app.protection("pat").deposits) == 2  # type: ignore[union-attr]


def test_a_full_record_still_forgets_what_is_older_than_its_window() -> None:
    # Given a player who won 1,000.00 long ago, then lost 1.00 every 30 minutes for 40
    # days: more entries than the record keeps in any 30 days.
    protection = Protection("pat")
    protection.set_limit("loss:month", 150_000, NOW)
    protection.record(Activity("pat", settled={"big win": -100_000}), NOW)
    now = NOW
    for step in range(1, 48 * 40 + 1):
        now = NOW + step * 30 * MINUTE
        protection.record(Activity("pat", settled={f"round {step}": 100}), now)
    # Then the month counts about its own 30 days of losses, not the win of 40 days ago.
    used = protection.used_cents("loss:month", now)
    assert 48 * 30 * 100 <= used <= 48 * 30 * 100 + 2 * 100  # an hour's merge at most
    with pytest.raises(LossLimitExceeded):
        protection.check(Activity("pat", stakes={"next": 10_000}), now)


def test_a_deposit_dated_by_a_clock_ahead_of_this_one_counts_at_once() -> None:
    # Given a deposit recorded by a server whose clock runs a second ahead of this one.
    protection = Protection("pat")
    protection.set_limit("deposit:day", 10_000, NOW)
    protection.record(Activity("pat", deposit_cents=10_000), NOW + SECOND)
    # Then this server counts it too, and refuses a second deposit past the limit.
    assert protection.used_cents("deposit:day", NOW) == 10_000
    with pytest.raises(DepositLimitExceeded):
        protection.check(Activity("pat", deposit_cents=1), NOW)


def test_an_exclusion_refuses_deposits_bets_and_seats_but_not_withdrawals(
    app: CasinoApplication, clock: Clock
) -> None:
    round_ = app.open_house_round("pat", "real").result
    table = app.open_table("punto_banco", "real").result
    assert round_ is not None and table is not None
    app.adjust_points("pat", "real", 100, "may deal")
    exclusion, _ = app.exclude("pat", "time_out", 1).result or ({}, [])
    ends = (NOW + DAY).isoformat(timespec="microseconds")
    assert exclusion == {
        "kind": "time_out",
        "period": "P1D",
        "from": NOW.isoformat(timespec="microseconds"),
        "until": ends,
    }
    for call, args in (
        (app.deposit, ("pat", "play", 100)),
        (app.place_bet, (round_.round_id, "banker", 1_000)),
        (app.sit_at_table, (table.table_id, "pat", "1")),
        (app.sit_as_dealer, ("pat", "real", "I", False)),
        (app.exclude, ("pat", "self_exclusion", 60)),
    ):
        assert refused(app, PlayerExcluded, call, *args).facts == {"until": ends}
    app.withdraw("pat", "real", 50_000)
    assert app.wallet("pat", "real").balance_cents == 50_000


def test_an_exclusion_cannot_be_lifted_early_and_ends_when_due(
    app: CasinoApplication, clock: Clock
) -> None:
    app.exclude("pat", "self_exclusion", 6)
    clock.now = datetime.datetime(2027, 6, 1, 11, 59, tzinfo=datetime.UTC)
    assert app.end_exclusion("pat", clock.now).result is False
    refused(app, PlayerExcluded, app.deposit, "pat", "real", 100)
    clock.now = datetime.datetime(2027, 6, 1, 12, 0, tzinfo=datetime.UTC)
    app.deposit("pat", "real", 100)  # over at its end, whether or not the worker came yet
    assert app.end_exclusion("pat", clock.now).result is True
    protection: Any = app.protection("pat")
    assert protection.exclusion is None
    assert [past["period"] for past in protection.past(clock.now)] == ["P6M"]


def test_an_unlisted_exclusion_length_changes_nothing(app: CasinoApplication) -> None:
    for kind, length in (("time_out", 0), ("time_out", 43), ("self_exclusion", 3), ("ban", 6)):
        refused(app, UnknownPeriod, app.exclude, "pat", kind, length)
    assert app.protection("pat") is None


def test_an_unlisted_exclusion_of_a_player_excluded_already_is_refused_as_unlisted(
    app: CasinoApplication,
) -> None:
    app.exclude("pat", "time_out", 3)
    # What is asked is judged before whether it may be: 3 months is never a length.
    refused(app, UnknownPeriod, app.exclude, "pat", "self_exclusion", 3)
    refused(app, PlayerExcluded, app.exclude, "pat", "self_exclusion", 6)


@pytest.mark.parametrize(
    ("start", "months", "end"),
    [
        ((2026, 12, 1), 6, (2027, 6, 1)),
        ((2026, 8, 31), 6, (2027, 2, 28)),
        ((2028, 2, 29), 12, (2029, 2, 28)),
        ((2026, 1, 15), 60, (2031, 1, 15)),
    ],
)
def test_self_exclusions_run_calendar_months(
    start: tuple[int, int, int], months: int, end: tuple[int, int, int]
) -> None:
    moment = datetime.datetime(*start, 9, 30, tzinfo=datetime.UTC)
    assert add_months(moment, months) == datetime.datetime(*end, 9, 30, tzinfo=datetime.UTC)


def test_an_exclusion_ends_the_players_open_rounds_of_every_game_as_a_disconnect(
    app: CasinoApplication, clock: Clock
) -> None:
    # Given Pat plays a P2P round against Dan, a coup at a table and a blackjack round.
    app.register_player("dan", "Dan")
    app.deposit("dan", "real", 500_000)
    app.adjust_points("dan", "real", 100, "may deal")
    p2p = app.sit_as_dealer("dan", "real", "I", False).result
    assert p2p is not None
    app.join_as_player("pat", "real", "I")
    p2p_round = app.confirm(p2p.table_id, PLAYER_WINS).result
    table = app.open_table("punto_banco", "real").result
    assert p2p_round is not None and table is not None
    app.sit_at_table(table.table_id, "pat", "1")
    coup = app.open_coup(table.table_id, PLAYER_WINS).result
    blackjack = app.open_blackjack_round("pat", "real", "2", ["5", "9", "6", "10"]).result
    assert coup is not None and blackjack is not None
    app.place_bet(p2p_round.round_id, "player", 1_000)
    app.place_bet(coup.round_id, "player", 1_000, player_id="pat")
    app.place_bet(blackjack.round_id, "1", 1_000)
    app.deal(blackjack.round_id)
    # When Pat is excluded.
    _, affected = app.exclude("pat", "self_exclusion", 12).result or ({}, [])
    # Then the P2P round is voided, the coup goes on, the blackjack round is held.
    assert [a["round_id"] for a in affected] == [
        p2p_round.round_id,
        coup.round_id,
        blackjack.round_id,
    ]
    assert app.round(p2p_round.round_id).status == "voided"
    assert app.round(blackjack.round_id).status == "interrupted"
    app.deal(coup.round_id)  # the coup settles Pat's bet and frees the seat
    assert "pat" not in app.table(table.table_id).seats.values()
    # And once the resume window has passed, the system finishes the blackjack round.
    # (An interruption is dated by its event's own timestamp, not by the clock.)
    window_closed = datetime.datetime.now(datetime.UTC)
    assert app.finish_abandoned_round(blackjack.round_id, window_closed).result is not None
    assert app.wallet("pat", "real").held_cents == 0
    assert app.player("pat").blackjack_rounds == {}


def test_an_excluded_player_cannot_deal_their_open_house_round(app: CasinoApplication) -> None:
    # Given Pat bet on a house round, then took a time-out before it was dealt.
    round_ = app.open_house_round("pat", "real", PLAYER_WINS).result
    assert round_ is not None
    app.place_bet(round_.round_id, "player", 10_000)
    app.exclude("pat", "time_out", 2)
    # When Pat deals it, then that is refused: the round waits for the idle timeout,
    # which gives the stake back.
    refused(app, PlayerExcluded, app.deal, round_.round_id)
    idle_since = datetime.datetime.now(datetime.UTC)  # dated by its events' timestamps
    assert app.end_idle_round(round_.round_id, idle_since).result
    assert app.round(round_.round_id).status == "voided"
    assert app.wallet("pat", "real").available_cents == 100_000


def test_an_excluded_player_reconnecting_resumes_nothing(
    app: CasinoApplication, clock: Clock
) -> None:
    round_ = app.open_blackjack_round("pat", "real", "2", ["5", "9", "6", "10"]).result
    assert round_ is not None
    app.place_bet(round_.round_id, "1", 1_000)
    app.deal(round_.round_id)
    app.exclude("pat", "time_out", 2)
    reconnection = app.reconnect("pat").result
    assert reconnection is not None and reconnection.blackjack_rounds == []
    assert app.round(round_.round_id).status == "interrupted"  # the system finishes it


def test_a_limit_set_to_what_it_is_records_nothing(app: CasinoApplication) -> None:
    app.set_limits("pat", {"deposit:week": 10_000})
    protection: Any = app.protection("pat")
    app.set_limits("pat", {"deposit:week": 10_000, "loss:day": None})
    again: Any = app.protection("pat")
    assert again.version == protection.version  # only the significant event was saved


def test_a_dealers_hold_and_a_bank_are_exposure_not_refused_by_a_loss_limit(
    app: CasinoApplication,
) -> None:
    # Given Dan, who may lose nothing at all, deals P2P and puts up a bank.
    app.register_player("dan", "Dan")
    app.deposit("dan", "real", 500_000)
    app.adjust_points("dan", "real", 100, "may deal")
    app.set_limits("dan", {"loss:day": 0})
    p2p = app.sit_as_dealer("dan", "real", "I", False).result
    assert p2p is not None
    app.join_as_player("pat", "real", "I")
    # When the round is confirmed, the dealer's worst case is held all the same.
    round_ = app.confirm(p2p.table_id, PLAYER_WINS).result
    assert round_ is not None and app.wallet("dan", "real").held_cents > 0
    table = app.open_table("chemin_de_fer", "real").result
    assert table is not None
    app.sit_at_table(table.table_id, "dan", "1")
    app.put_up_bank(table.table_id, "dan", 10_000)
    # Then a stake of Dan's own is refused: that is a loss he may not risk.
    house = app.open_house_round("dan", "real").result
    assert house is not None
    refused(app, LossLimitExceeded, app.place_bet, house.round_id, "banker", 100)
    # And what the P2P round takes from him counts once it settles.
    app.place_bet(round_.round_id, "player", 1_000)
    app.deal(round_.round_id)  # the player wins: the dealer loses 10.00
    protection: Any = app.protection("dan")
    assert protection.used_cents("loss:day", NOW) == 1_000 + 18  # and the 1.75% commission


def test_a_banker_past_their_loss_limit_may_put_up_no_other_bank(app: CasinoApplication) -> None:
    # Given Dan, who may lose 5.00 a day, banks at chemin de fer and loses a 20.00 bank.
    app.register_player("dan", "Dan")
    app.deposit("dan", "real", 500_000)
    table = app.open_table("chemin_de_fer", "real").result
    assert table is not None
    app.sit_at_table(table.table_id, "dan", "1")
    app.set_limits("dan", {"loss:day": 500})
    app.sit_at_table(table.table_id, "pat", "2")
    app.put_up_bank(table.table_id, "dan", 2_000)
    coup = app.open_coup(table.table_id, PLAYER_WINS).result
    assert coup is not None
    app.call_banco(coup.round_id, "pat")
    app.deal(coup.round_id)  # punto wins: the bank is lost and offered on
    assert app.wallet("dan", "real").balance_cents == 500_000 - 2_000
    # When he puts up another bank, then it is refused: one bank past the limit is as
    # far as a banker's exposure may take him.
    app.decline_bank(table.table_id, "pat")
    error = refused(app, LossLimitExceeded, app.put_up_bank, table.table_id, "dan", 2_000)
    assert (error.facts["period"], error.facts["remaining"]) == ("day", "0.00")


def test_a_new_exclusion_after_one_is_over_keeps_the_old_one_as_past(
    app: CasinoApplication, clock: Clock
) -> None:
    app.exclude("pat", "time_out", 1)
    clock.now = NOW + 2 * DAY  # over, and the worker has not come by
    app.exclude("pat", "time_out", 3)
    protection: Any = app.protection("pat")
    assert [past["period"] for past in protection.past(clock.now)] == ["P1D"]
    assert protection.excluded_until(clock.now) == NOW + 5 * DAY
