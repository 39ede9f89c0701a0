"""A day of bonus money worked out by hand (docs/rules.md 9, "A day worked by hand"),
through the HTTP API on both stores: a $100 bonus at 10x, deposits, house rounds (a
hedge refused, a small hedge allowed and counted net, a tie counted nothing),
blackjack, the conversion, and the books after each step."""

from __future__ import annotations

from typing import Any

from tests.conftest import OPERATOR, Api
from tests.infra.http import test_blackjack as blackjack
from tests.infra.http.test_baccarat import BANKER_WINS, PLAYER_WINS, TIE, bet, deal, open_round

ACCOUNTS = ("player:alice", "bonus:alice", "casino:bank", "casino:bonus", "cashier")


def books(api: Api) -> tuple[str, ...]:
    """The trial balance's accounts of the day, in ACCOUNTS' order; the total is zero."""
    trial = api.trial_balance()
    assert trial["total"] == "0.00"
    found = {row["account"]: row["balance"] for row in trial["accounts"]}
    return tuple(found.get(account, "0.00") for account in ACCOUNTS)


def bonus(api: Api) -> tuple[str, str, str] | None:
    """The wallet's bonus: (balance, held, wagered)."""
    shown = api.wallet("alice")["bonus"]
    return None if shown is None else (shown["balance"], shown["held"], shown["wagered"])


def refused(answer: Any) -> dict[str, Any]:
    assert answer.status_code == 409, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_a_day_of_bonus_money_worked_by_hand(api: Api) -> None:
    api.player("alice", real="50.00")
    granted = api.post(
        "/v1/players/alice/bonuses",
        {"amount": "100.00", "wagering": 10, "expires_in_days": 30},
        headers=OPERATOR,
    ).json()
    assert granted["wagering_required"] == "1000.00"
    assert books(api) == ("50.00", "100.00", "0.00", "-100.00", "-50.00")

    # 1. Player $80: $50 cash, then $30 bonus. A Banker hedge would stake $60 of bonus
    # on a surebet, past half the $100: refused. Banker wins: $80 lost, $80 counted.
    first = open_round(api, BANKER_WINS)["round_id"]
    assert bet(api, first, "player", "80.00").status_code == 201
    assert bonus(api) == ("100.00", "30.00", "0.00")
    hedge = refused(bet(api, first, "banker", "30.00"))
    assert (hedge["code"], hedge["limit"], hedge["bonus_staked"]) == (
        "bonus_surebet",
        "50.00",
        "60.00",
    )
    deal(api, first)
    assert bonus(api) == ("70.00", "0.00", "80.00")
    assert books(api) == ("0.00", "70.00", "80.00", "-100.00", "-50.00")

    # 2. No cash left: Player $30 and Banker $10 from the bonus would be $40 on a
    # surebet, past $35: refused. Banker $5 is allowed; Player wins 30 and Banker loses
    # 5: +$25 to the bonus, and |30 - 5| = $25 counted.
    second = open_round(api, PLAYER_WINS)["round_id"]
    assert bet(api, second, "player", "30.00").status_code == 201
    assert refused(bet(api, second, "banker", "10.00"))["limit"] == "35.00"
    assert bet(api, second, "banker", "5.00").status_code == 201
    deal(api, second)
    assert bonus(api) == ("95.00", "0.00", "105.00")
    assert books(api) == ("0.00", "95.00", "55.00", "-100.00", "-50.00")

    # 3. $20 deposited. Player $20 cash and Banker $10 bonus (a surebet within $47):
    # a tie returns both, and counts nothing.
    api.deposit("alice", "20.00")
    third = open_round(api, TIE)["round_id"]
    assert bet(api, third, "player", "20.00").status_code == 201
    assert bet(api, third, "banker", "10.00").status_code == 201
    deal(api, third)
    assert bonus(api) == ("95.00", "0.00", "105.00")
    assert books(api) == ("20.00", "95.00", "55.00", "-100.00", "-70.00")

    # 4. Blackjack, $100 on box 1: $20 cash and $80 bonus. 20 against the dealer's 17
    # wins $100: $200 back, $160 (200 x 80/100) to the bonus and $40 to cash.
    round_id = blackjack.open_round(api, ["10", "10", "K", "7"], hall="2")["round_id"]
    assert blackjack.bet(api, round_id, 1, "100.00").status_code == 201
    blackjack.deal(api, round_id)
    stood = blackjack.act(api, round_id, 1, "stand").json()
    assert stood["net_split"] == {"alice": {"net_cash": "20.00", "net_bonus": "80.00"}}
    assert bonus(api) == ("175.00", "0.00", "205.00")
    assert books(api) == ("40.00", "175.00", "-45.00", "-100.00", "-70.00")

    # 5. $800 deposited and staked on Player, all cash; it wins, and its $800 makes
    # $1,005 wagered: the $175 bonus converts to cash in the round's save.
    api.deposit("alice", "800.00")
    last = open_round(api, PLAYER_WINS)["round_id"]
    assert bet(api, last, "player", "800.00").status_code == 201
    deal(api, last)
    assert bonus(api) is None
    assert books(api) == ("1815.00", "0.00", "-845.00", "-100.00", "-870.00")
    [converted] = api.get("/v1/players/alice/bonuses").json()["past"]
    assert (converted["status"], converted["wagered"]) == ("converted", "1005.00")

    # 6. All the cash can be withdrawn.
    withdrawn = api.post("/v1/players/alice/withdrawals", {"mode": "real", "amount": "1815.00"})
    assert withdrawn.status_code == 201, withdrawn.text
    assert books(api) == ("0.00", "0.00", "-845.00", "-100.00", "945.00")
    report = api.get("/v1/reports/bonus", headers=OPERATOR).json()["days"]
    assert [(d["granted"], d["converted"], d["outstanding"]) for d in report] == [
        ("100.00", "175.00", "0.00")
    ]
    figures = ("stakes", "returns", "ggr", "bonus_stakes", "bonus_returns", "bonus_converted",
               "ngr")  # fmt: skip
    revenue = api.get("/v1/reports/revenue?mode=real", headers=OPERATOR).json()["rows"]
    assert {(row["game"], row["variant"]): tuple(row[f] for f in figures) for row in revenue} == {
        # Cash: $870 staked, $1,620 back; bonus: $75 staked ($30 + $35 + $10), $70 back
        # ($60 + the tie's $10); the $175 converted in the last round.
        ("baccarat", "house"): ("870.00", "1620.00", "-750.00", "75.00", "70.00", "175.00",
                                "-925.00"),
        ("blackjack", "2"): ("20.00", "40.00", "-20.00", "80.00", "160.00", "0.00", "-20.00"),
    }  # fmt: skip
