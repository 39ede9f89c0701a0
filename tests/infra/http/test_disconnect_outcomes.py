"""Every disconnect case of rules.md 4 through the HTTP API, on both stores, checking
what it leaves behind: both sides' balances and holds, the commission (report and the
wallet's last round), dealer points, game history, and the round's audit trail.

Timeouts fire deterministically: the workers take `now`, so a clock reading past
the deadline ends the rounds without waiting. Shoes are in dealing order (see
tests/infra/test_http_p2p.py and tests/infra/test_http_blackjack.py).
"""

import time
from decimal import Decimal
from typing import Any

import pytest

from infra.store.store import Store
from infra.workers import AbandonedRoundWorker, IdleRoundWorker
from tests.conftest import Api, StoreFactory, every_store_event
from tests.infra.http.helpers import (
    Books,
    assert_voided,
    audit_of,
    books,
    commission,
    decisions,
    later,
    round_events,
    round_of,
    serving,
)
from tests.infra.http.test_baccarat import open_round as open_house_round
from tests.infra.http.test_blackjack import act, deal, dealt, open_round, played
from tests.infra.http.test_blackjack import bet as box_bet
from tests.infra.http.test_blackjack_interruptions import TWELVE_AGAINST_SIX  # stands on 12: +$10
from tests.infra.http.test_p2p import (
    PLAYER_WINS,
    WORKED_EXAMPLE,
    confirm,
    dealer,
    join,
    seated_table,
    sit,
)
from tests.infra.http.test_p2p import bet as spot_bet

TIMEOUT = 600  # CASINO_IDLE_TIMEOUT_SECONDS default
WINDOW = 600  # CASINO_RESUME_WINDOW_SECONDS default
WORST_CASE_II = "1803.50"
DEALER_GOES_ON = "continues; the table closes when it ends"
# Box 1: A, K (a blackjack, offered even money); box 2: 10, 7; the dealer A up, 6 in the hole.
EVEN_MONEY_AND_INSURANCE = ["A", "10", "A", "K", "7", "6"]
# One box: 10, 6 (16) against the A up; a K in the hole: a dealer blackjack.
INSURANCE_AGAINST_BLACKJACK = ["10", "A", "6", "K"]
# One box: 8, 8 against the 6 up, a 10 in the hole (16); the split deals 3 then K;
# the dealer then draws a 9 and busts.
EIGHTS_AGAINST_SIX = ["8", "6", "8", "10", "3", "K", "9"]
UNTOUCHED_PAT = Books("1000.00")
UNTOUCHED_DAN = Books("2000.00", points=100)


def plus(amount: str, change: str) -> str:
    return f"{Decimal(amount) + Decimal(change):.2f}"


def table_of(api: Api, table_id: str) -> dict[str, Any]:
    answer = api.get(f"/v1/p2p/tables/{table_id}")
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def round_at(api: Api, table_id: str, auto: bool, shoe: list[str] | None = None) -> str:
    """The table's open round: confirmed on its own with auto-confirm, else now."""
    if auto:
        round_id: str = table_of(api, table_id)["round_id"]
        return round_id
    answer = confirm(api, table_id, shoe)
    assert answer.status_code == 201, answer.text
    confirmed: str = answer.json()["round_id"]
    return confirmed


def disconnect(api: Api, player_id: str) -> list[dict[str, str]]:
    answer = api.post(f"/v1/players/{player_id}/disconnect")
    assert answer.status_code == 200, answer.text
    affected: list[dict[str, str]] = answer.json()["affected_rounds"]
    return affected


def reconnect(api: Api, player_id: str) -> list[dict[str, Any]]:
    answer = api.post(f"/v1/players/{player_id}/reconnect")
    assert answer.status_code == 200, answer.text
    rounds: list[dict[str, Any]] = answer.json()["open_rounds"]
    return rounds


def p2p_deal(api: Api, round_id: str, spot: str = "banker") -> dict[str, Any]:
    """Stake $10 and deal; the settled round."""
    assert spot_bet(api, round_id, spot, "10.00").status_code == 201
    answer = api.post(f"/v1/rounds/{round_id}/deal")
    assert answer.status_code == 200, answer.text
    settled: dict[str, Any] = answer.json()
    assert (settled["status"], settled["commission"]) == ("settled", "0.18")
    net = settled["net"]
    assert net["casino"] == "0.18" and sum(Decimal(amount) for amount in net.values()) == 0
    return settled


def after_one_p2p_round(round_: dict[str, Any]) -> tuple[Books, Books]:
    """pat's and dan's books after one settled $10 round and nothing else."""
    round_id, net = round_["round_id"], round_["net"]
    pat_after, dan_after = plus("1000.00", net["player"]), plus("2000.00", net["dealer"])
    pat = Books(
        balance=pat_after,
        points=10,
        last_round=(round_id, net["player"], "0.00"),
        point_moves=[(round_id, 10, "player")],
        history=[(round_id, "player", "settled", net["player"], "0.00", "1000.00", pat_after)],
    )
    dan = Books(
        balance=dan_after,
        points=90,
        last_round=(round_id, net["dealer"], "0.18"),
        point_moves=[(round_id, -10, "dealer")],
        history=[(round_id, "dealer", "settled", net["dealer"], "0.18", "2000.00", dan_after)],
    )
    return pat, dan


@pytest.fixture
def alice(api: Api) -> str:
    return api.player("alice", real="500.00")


# P2P: the player gone.


def test_p2p_player_gone_before_the_deal_voids_the_round_and_leaves_only_the_earlier_one(
    api: Api,
) -> None:
    table_id = seated_table(api)
    first = confirm(api, table_id, WORKED_EXAMPLE).json()["round_id"]
    settled = p2p_deal(api, first)
    assert settled["net"] == {"player": "-10.00", "dealer": "9.82", "casino": "0.18"}
    second = confirm(api, table_id).json()["round_id"]
    spot_bet(api, second, "banker", "25.00")
    spot_bet(api, second, "tie", "5.00")
    assert (api.wallet("pat")["held"], api.wallet("dan")["held"]) == ("30.00", WORST_CASE_II)
    assert disconnect(api, "pat") == [{"round_id": second, "effect": "voided"}]
    assert_voided(api, second, "the player disconnected before the deal")
    pat, dan = after_one_p2p_round(settled)
    assert (books(api, "pat"), books(api, "dan")) == (pat, dan)
    assert pat.balance == "990.00" and dan.balance == "2009.82"
    assert commission(api) == ("0.18", 1)
    table = table_of(api, table_id)
    assert (table["status"], table["player"], table["round_id"]) == ("waiting", None, None)
    assert table["notice"] == "player pat disconnected and left the table"
    assert disconnect(api, "pat") == []  # twice: nothing more to do
    assert join(api).json()["table_id"] == table_id  # the seat is free, pat is back


def test_p2p_player_gone_before_any_bet_releases_the_dealers_hold(api: Api) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id).json()["round_id"]
    assert disconnect(api, "pat") == [{"round_id": round_id, "effect": "voided"}]
    assert_voided(api, round_id, "the player disconnected before the deal")
    assert (books(api, "pat"), books(api, "dan")) == (UNTOUCHED_PAT, UNTOUCHED_DAN)
    assert commission(api) == ("0.00", 0)


def test_p2p_player_gone_while_seated_with_no_round_frees_the_seat(api: Api) -> None:
    table_id = seated_table(api)
    assert disconnect(api, "pat") == []
    assert table_of(api, table_id)["status"] == "waiting"
    assert (books(api, "pat"), books(api, "dan")) == (UNTOUCHED_PAT, UNTOUCHED_DAN)


@pytest.mark.parametrize("auto", [False, True])
def test_p2p_player_gone_after_the_deal_keeps_the_settled_round(api: Api, auto: bool) -> None:
    """With auto-confirm the next round is already open and empty: it is voided."""
    table_id = seated_table(api, auto=auto)
    first = round_at(api, table_id, auto)
    settled = p2p_deal(api, first)
    following = table_of(api, table_id)["round_id"]
    assert (following is not None) is auto
    expected = [{"round_id": following, "effect": "voided"}] if auto else []
    assert disconnect(api, "pat") == expected
    if auto:
        assert_voided(api, following, "the player disconnected before the deal")
    assert (books(api, "pat"), books(api, "dan")) == after_one_p2p_round(settled)
    assert commission(api) == ("0.18", 1)
    assert round_of(api, first)["status"] == "settled"
    assert table_of(api, table_id)["status"] == "waiting"


# P2P: the dealer gone.


@pytest.mark.parametrize("auto", [False, True])
def test_p2p_dealer_gone_after_confirming_the_round_settles_then_the_dealer_leaves(
    api: Api, auto: bool
) -> None:
    table_id = seated_table(api, auto=auto)
    round_id = round_at(api, table_id, auto, PLAYER_WINS)
    assert disconnect(api, "dan") == [{"round_id": round_id, "effect": DEALER_GOES_ON}]
    table = table_of(api, table_id)
    assert (table["status"], table["auto_confirm"], table["round_id"]) == (
        "seated",
        False,
        round_id,
    )
    assert api.wallet("dan")["held"] == WORST_CASE_II  # still covering the round
    settled = p2p_deal(api, round_id, "player")  # the player bets and deals as usual
    if not auto:
        assert settled["net"] == {"player": "10.00", "dealer": "-10.18", "casino": "0.18"}
    assert [e["type"] for e in round_events(api, round_id)][-2:] == ["CommissionCharged", "Settled"]
    assert (books(api, "pat"), books(api, "dan")) == after_one_p2p_round(settled)
    assert commission(api) == ("0.18", 1)
    table = table_of(api, table_id)  # no next round, even with auto-confirm chosen
    assert (table["status"], table["round_id"]) == ("closed", None)
    assert table["notice"] == "dealer dan left: the table is closed"
    new_table = sit(api)  # both seats are free: dan deals again, pat joins him
    assert new_table.status_code == 201, new_table.text
    assert join(api).json()["table_id"] == new_table.json()["table_id"]


@pytest.mark.parametrize("with_player", [True, False])
def test_p2p_dealer_gone_before_confirming_closes_the_table_at_once(
    api: Api, with_player: bool
) -> None:
    if with_player:
        table_id = seated_table(api)
    else:
        dealer(api)
        api.player("pat", real="1000.00")
        table_id = sit(api).json()["table_id"]
    assert disconnect(api, "dan") == []
    assert table_of(api, table_id)["status"] == "closed"
    refused = join(api)  # the table left the queue; pat's seat, if any, is free
    assert (refused.status_code, refused.json()["code"]) == (409, "no_dealer_available")
    dealer(api, "dora")
    assert join(api, "pat").status_code == 409  # dora has not sat down yet
    dora_table = sit(api, "dora").json()["table_id"]
    assert join(api).json()["table_id"] == dora_table
    assert (books(api, "pat"), books(api, "dan")) == (UNTOUCHED_PAT, UNTOUCHED_DAN)
    assert commission(api) == ("0.00", 0)


def test_p2p_both_gone_voids_the_round_and_closes_the_table(api: Api) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id).json()["round_id"]
    spot_bet(api, round_id, "player", "50.00")
    assert disconnect(api, "dan") == [{"round_id": round_id, "effect": DEALER_GOES_ON}]
    assert disconnect(api, "pat") == [{"round_id": round_id, "effect": "voided"}]
    assert_voided(api, round_id, "the player disconnected before the deal")
    assert table_of(api, table_id)["status"] == "closed"
    assert (books(api, "pat"), books(api, "dan")) == (UNTOUCHED_PAT, UNTOUCHED_DAN)
    assert commission(api) == ("0.00", 0)
    assert sit(api).status_code == 201  # dan's seat was freed with the table


def test_p2p_dealer_disconnecting_twice_records_it_once(api: Api, store: Store) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id).json()["round_id"]
    disconnect(api, "dan")
    table, audit = table_of(api, table_id), audit_of(api, round_id)
    assert disconnect(api, "dan") == [{"round_id": round_id, "effect": DEALER_GOES_ON}]
    assert (table_of(api, table_id), audit_of(api, round_id)) == (table, audit)
    topics = [type(event).TOPIC for event in every_store_event(store)]
    assert topics.count("casino:P2PTable.DealerDisconnected") == 1
    assert topics.count("casino:Player.Disconnected") == 1
    p2p_deal(api, round_id)
    assert table_of(api, table_id)["status"] == "closed"


# Reconnecting, with or without a disconnect first.


def test_a_disconnect_or_reconnect_with_nothing_in_play_changes_nothing(
    api: Api, alice: str
) -> None:
    assert disconnect(api, "alice") == []
    assert disconnect(api, "alice") == []
    assert reconnect(api, "alice") == []
    assert reconnect(api, "alice") == []
    assert books(api, "alice") == Books("500.00")
    for path in ("disconnect", "reconnect"):
        unknown = api.post(f"/v1/players/nobody/{path}")
        assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_player")


def test_a_reconnect_without_a_disconnect_lists_the_rounds_and_changes_nothing(
    api: Api, alice: str
) -> None:
    table_id = seated_table(api)
    p2p_round = confirm(api, table_id).json()["round_id"]
    blackjack = dealt(api, TWELVE_AGAINST_SIX)
    table, blackjack_audit = table_of(api, table_id), audit_of(api, blackjack["round_id"])
    for player_id in ("dan", "pat"):
        assert [r["round_id"] for r in reconnect(api, player_id)] == [p2p_round]
    assert reconnect(api, "alice") == [blackjack]  # exactly as it was, hole card hidden
    assert (table_of(api, table_id), audit_of(api, blackjack["round_id"])) == (
        table,
        blackjack_audit,
    )


# House baccarat: the player gone.


def test_a_house_baccarat_round_waits_for_its_player_then_settles(api: Api, alice: str) -> None:
    round_id = open_house_round(api, PLAYER_WINS)["round_id"]
    spot_bet(api, round_id, "player", "10.00")
    assert disconnect(api, "alice") == []  # no decision pending: nothing to void
    assert round_of(api, round_id)["status"] == "open"
    assert books(api, "alice") == Books("500.00", held="10.00")
    assert [r["round_id"] for r in reconnect(api, "alice")] == [round_id]
    assert deal(api, round_id).json()["net"] == {"player": "10.00", "casino": "-10.00"}
    assert books(api, "alice") == Books(
        "510.00",
        points=10,
        last_round=(round_id, "10.00", "0.00"),
        point_moves=[(round_id, 10, "player")],
        history=[(round_id, "player", "settled", "10.00", "0.00", "500.00", "510.00")],
    )
    assert commission(api) == ("0.00", 0)


# Blackjack.


def test_a_blackjack_round_not_yet_dealt_is_not_interrupted(api: Api, alice: str) -> None:
    round_id = open_round(api, TWELVE_AGAINST_SIX)["round_id"]
    box_bet(api, round_id, 1, "10.00")
    assert disconnect(api, "alice") == []
    assert round_of(api, round_id)["status"] == "open"
    assert books(api, "alice") == Books("500.00", held="10.00")
    back = reconnect(api, "alice")
    assert [(r["round_id"], r["status"]) for r in back] == [(round_id, "open")]
    assert deal(api, round_id).json()["status"] == "in_play"


def test_blackjack_resumes_exactly_after_a_split_and_the_system_finishes_it_later(
    api: Api, store: Store, alice: str
) -> None:
    round_id = dealt(api, EIGHTS_AGAINST_SIX)["round_id"]
    before = played(api, round_id, (1, 0, "split"))
    hands = [[card[:-1] for card in h["cards"]] for h in before["boxes"][0]["hands"]]
    assert hands == [["8", "3"], ["8", "K"]]
    assert disconnect(api, "alice") == [{"round_id": round_id, "effect": "interrupted"}]
    held = round_of(api, round_id)
    assert (held["status"], held["held"], held["next"]) == (
        "interrupted",
        "20.00",
        {"box": 1, "hand": 0},
    )
    assert books(api, "alice") == Books("500.00", held="20.00")  # no history yet
    assert reconnect(api, "alice") == [before]  # exactly as it was
    played(api, round_id, (1, 0, "stand"))
    disconnect(api, "alice")
    worker = AbandonedRoundWorker(store, WINDOW)
    assert worker.finish_abandoned_rounds(later(WINDOW - 60)) == []
    assert worker.finish_abandoned_rounds(later(WINDOW + 1)) == [round_id]
    assert decisions(api, round_id) == [
        (1, 0, "split", "player"),
        (1, 0, "stand", "player"),
        (1, 1, "stand", "system"),
    ]
    settled = round_of(api, round_id)
    assert (settled["status"], settled["net"]["player"]) == ("settled", "20.00")  # 16 + 9 busts
    assert books(api, "alice") == Books(
        "520.00",
        last_round=(round_id, "20.00", "0.00"),
        history=[(round_id, "player", "settled", "20.00", "0.00", "500.00", "520.00")],
    )
    assert [e["type"] for e in round_events(api, round_id)].count("Interrupted") == 2


def test_blackjack_gone_at_the_insurance_decision_the_system_declines_insurance_and_even_money(
    api: Api, store: Store, alice: str
) -> None:
    round_id = dealt(api, EVEN_MONEY_AND_INSURANCE, {1: "10.00", 2: "10.00"})["round_id"]
    assert round_of(api, round_id)["legal_actions"]["actions"] == ["no_insurance", "even_money"]
    assert disconnect(api, "alice") == [{"round_id": round_id, "effect": "interrupted"}]
    assert books(api, "alice") == Books("500.00", held="20.00")
    assert AbandonedRoundWorker(store, WINDOW).finish_abandoned_rounds(later(WINDOW + 1)) == [
        round_id
    ]
    assert decisions(api, round_id) == [
        (1, 0, "no_insurance", "system"),
        (2, 0, "no_insurance", "system"),
        (2, 0, "stand", "system"),
    ]
    settled = round_of(api, round_id)
    assert [(b["insurance"], b["even_money"]) for b in settled["boxes"]] == [(None, False)] * 2
    assert [[h["result"] for h in b["hands"]] for b in settled["payouts"]] == [
        ["blackjack"],
        ["push"],
    ]  # the dealer's soft 17 stands
    assert books(api, "alice") == Books(
        "515.00",
        last_round=(round_id, "15.00", "0.00"),
        history=[(round_id, "player", "settled", "15.00", "0.00", "500.00", "515.00")],
    )
    assert round_events(api, round_id)[-1]["data"]["seed"] == settled["seed"] is not None


def test_blackjack_insurance_taken_stays_held_while_away_and_pays_when_finished(
    api: Api, store: Store, alice: str
) -> None:
    round_id = dealt(api, INSURANCE_AGAINST_BLACKJACK)["round_id"]
    played(api, round_id, (1, 0, "insurance"))
    disconnect(api, "alice")
    assert round_of(api, round_id)["held"] == "15.00"
    assert books(api, "alice") == Books("500.00", held="15.00")
    assert act(api, round_id, 1, "stand").json()["code"] == "round_interrupted"
    AbandonedRoundWorker(store, WINDOW).finish_abandoned_rounds(later(WINDOW + 1))
    assert decisions(api, round_id) == [(1, 0, "insurance", "player"), (1, 0, "stand", "system")]
    settled = round_of(api, round_id)
    assert settled["outcome"]["dealer_blackjack"] is True
    assert (settled["payouts"][0]["insurance"], settled["net"]["player"]) == ("10.00", "0.00")
    assert books(api, "alice") == Books(
        "500.00",
        last_round=(round_id, "0.00", "0.00"),
        history=[(round_id, "player", "settled", "0.00", "0.00", "500.00", "500.00")],
    )
    assert reconnect(api, "alice") == []  # too late: nothing left to resume


# Idle timeouts.


def test_an_idle_house_baccarat_round_is_voided_with_no_points_and_no_history(
    api: Api, store: Store, alice: str
) -> None:
    round_id = open_house_round(api)["round_id"]
    spot_bet(api, round_id, "tie", "10.00")
    disconnect(api, "alice")
    worker = IdleRoundWorker(store, TIMEOUT)
    assert worker.void_idle_rounds(later(TIMEOUT - 60)) == []
    assert worker.void_idle_rounds(later(TIMEOUT + 1)) == [round_id]
    assert_voided(api, round_id, "no action before the idle timeout")
    assert books(api, "alice") == Books("500.00")
    assert worker.void_idle_rounds(later(TIMEOUT * 3)) == []


@pytest.mark.parametrize("dealer_gone", [False, True])
def test_an_idle_p2p_round_is_voided_and_the_dealers_hold_released(
    api: Api, store: Store, dealer_gone: bool
) -> None:
    table_id = seated_table(api)
    round_id = confirm(api, table_id).json()["round_id"]
    spot_bet(api, round_id, "banker", "25.00")
    if dealer_gone:
        disconnect(api, "dan")
    assert IdleRoundWorker(store, TIMEOUT).void_idle_rounds(later(TIMEOUT + 1)) == [round_id]
    assert_voided(api, round_id, "no action before the idle timeout")
    assert (books(api, "pat"), books(api, "dan")) == (UNTOUCHED_PAT, UNTOUCHED_DAN)
    assert commission(api) == ("0.00", 0)
    table = table_of(api, table_id)
    if dealer_gone:  # the round was all the disconnected dealer stayed for
        assert table["status"] == "closed"
        assert join(api).json()["code"] == "no_dealer_available"  # pat's seat is free
    else:  # the pair stays seated; the dealer may confirm again
        assert (table["status"], table["player"]["player_id"], table["round_id"]) == (
            "seated",
            "pat",
            None,
        )
        assert table["notice"] == f"round {round_id} was voided: idle timeout"
        assert confirm(api, table_id).status_code == 201


def test_an_idle_blackjack_round_never_dealt_is_voided(api: Api, store: Store, alice: str) -> None:
    round_id = open_round(api)["round_id"]
    box_bet(api, round_id, 1, "10.00")
    box_bet(api, round_id, 3, "5.00")
    assert IdleRoundWorker(store, TIMEOUT).void_idle_rounds(later(TIMEOUT + 1)) == [round_id]
    assert_voided(api, round_id, "no action before the idle timeout")
    assert books(api, "alice") == Books("500.00")


def test_an_idle_blackjack_round_in_play_is_finished_by_the_system(
    api: Api, store: Store, alice: str
) -> None:
    round_id = dealt(api, TWELVE_AGAINST_SIX)["round_id"]
    assert IdleRoundWorker(store, TIMEOUT).void_idle_rounds(later(TIMEOUT + 1)) == [round_id]
    events = audit_of(api, round_id)
    interrupted = next(e for e in events if e["type"] == "Interrupted")
    assert interrupted["data"] == {"reason": "no action before the idle timeout"}
    assert decisions(api, round_id) == [(1, 0, "stand", "system")]
    assert books(api, "alice") == Books(
        "510.00",
        last_round=(round_id, "10.00", "0.00"),
        history=[(round_id, "player", "settled", "10.00", "0.00", "500.00", "510.00")],
    )


def test_an_interrupted_blackjack_round_waits_for_the_resume_window_not_the_idle_timeout(
    api: Api, store: Store, alice: str
) -> None:
    round_id = dealt(api, TWELVE_AGAINST_SIX)["round_id"]
    disconnect(api, "alice")
    assert IdleRoundWorker(store, TIMEOUT).void_idle_rounds(later(TIMEOUT * 3)) == []
    assert round_of(api, round_id)["status"] == "interrupted"
    assert books(api, "alice") == Books("500.00", held="10.00")


# Restarts: every deadline missed while the process was down still fires.

ROUND_NAMES = ("p2p", "house", "undealt", "bob", "erin")


def build_every_kind_of_idle_round(api: Api) -> dict[str, str]:
    """One round of each kind left idle, by name, and the P2P table."""
    table_id = seated_table(api)  # dan deals to pat
    rounds = {"table": table_id, "p2p": confirm(api, table_id).json()["round_id"]}
    spot_bet(api, rounds["p2p"], "banker", "25.00")
    disconnect(api, "dan")  # the round goes on; nobody acts on it
    for name in ("carol", "alice", "bob", "erin"):
        api.player(name, real="500.00")
    rounds["house"] = open_house_round(api, player="carol")["round_id"]
    spot_bet(api, rounds["house"], "player", "10.00")
    rounds["undealt"] = open_round(api, player="alice")["round_id"]
    box_bet(api, rounds["undealt"], 1, "10.00")
    for name in ("bob", "erin"):
        rounds[name] = open_round(api, TWELVE_AGAINST_SIX, player=name)["round_id"]
        box_bet(api, rounds[name], 1, "10.00")
        assert deal(api, rounds[name]).json()["status"] == "in_play"
    disconnect(api, "erin")
    return rounds


def check_every_kind_of_idle_round_ended(api: Api, rounds: dict[str, str]) -> None:
    reason = "no action before the idle timeout"
    for name in ("p2p", "house", "undealt"):
        assert_voided(api, rounds[name], reason)
    assert table_of(api, rounds["table"])["status"] == "closed"  # its dealer had gone
    for name in ("bob", "erin"):
        assert decisions(api, rounds[name]) == [(1, 0, "stand", "system")]
        won = (rounds[name], "player", "settled", "10.00", "0.00", "500.00", "510.00")
        assert books(api, name) == Books("510.00", last_round=won[:1] + won[3:5], history=[won])
    assert (books(api, "pat"), books(api, "dan")) == (UNTOUCHED_PAT, UNTOUCHED_DAN)
    assert books(api, "carol") == books(api, "alice") == Books("500.00")
    assert commission(api) == ("0.00", 0)


def test_after_a_restart_one_pass_of_the_workers_ends_every_round_whose_deadline_passed(
    api: Api, stores: StoreFactory, store: Store
) -> None:
    rounds = build_every_kind_of_idle_round(api)
    stores.close(store)
    restarted = stores.open()
    idle, abandoned = IdleRoundWorker(restarted, TIMEOUT), AbandonedRoundWorker(restarted, WINDOW)
    assert idle.void_idle_rounds(later(TIMEOUT - 60)) == []
    assert abandoned.finish_abandoned_rounds(later(WINDOW - 60)) == []
    idle_ones = sorted(rounds[name] for name in ROUND_NAMES if name != "erin")
    assert sorted(idle.void_idle_rounds(later(TIMEOUT + 1))) == idle_ones
    assert abandoned.finish_abandoned_rounds(later(WINDOW + 1)) == [rounds["erin"]]
    assert idle.void_idle_rounds(later(TIMEOUT * 3)) == []
    assert abandoned.finish_abandoned_rounds(later(WINDOW * 3)) == []
    with serving(restarted) as after:
        check_every_kind_of_idle_round_ended(after, rounds)


def test_after_a_restart_the_servers_own_workers_fire_the_missed_deadlines(
    api: Api, stores: StoreFactory, store: Store
) -> None:
    rounds = build_every_kind_of_idle_round(api)
    stores.close(store)
    restarted = stores.open()
    timeouts = {"idle_timeout_seconds": 1, "resume_window_seconds": 1}  # checked every 0.25 s
    with serving(restarted, background=True, **timeouts) as after:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            statuses = {round_of(after, rounds[name])["status"] for name in ROUND_NAMES}
            if statuses <= {"settled", "voided"}:
                break
            time.sleep(0.1)
        check_every_kind_of_idle_round_ended(after, rounds)


def test_open_rounds_carry_on_after_a_restart(
    api: Api, stores: StoreFactory, store: Store, alice: str
) -> None:
    table_id = seated_table(api)
    p2p_round = confirm(api, table_id, PLAYER_WINS).json()["round_id"]
    disconnect(api, "dan")
    blackjack = dealt(api, TWELVE_AGAINST_SIX)
    disconnect(api, "alice")
    stores.close(store)
    with serving(stores.open()) as after:
        settled = p2p_deal(after, p2p_round, "player")
        assert settled["net"] == {"player": "10.00", "dealer": "-10.18", "casino": "0.18"}
        assert (books(after, "pat"), books(after, "dan")) == after_one_p2p_round(settled)
        assert table_of(after, table_id)["status"] == "closed"
        assert reconnect(after, "alice") == [blackjack]  # resumed exactly as dealt
        assert played(after, blackjack["round_id"], (1, 0, "stand"))["net"]["player"] == "10.00"
        assert decisions(after, blackjack["round_id"]) == [(1, 0, "stand", "player")]
        assert books(after, "alice").balance == "510.00"
        assert commission(after) == ("0.18", 1)
