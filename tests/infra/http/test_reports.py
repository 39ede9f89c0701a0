"""The revenue and RTP reports through the HTTP API, over a scripted day of play with
certification shoes, on both stores (api.md, Operators; rules.md 7)."""

from __future__ import annotations

import csv
import datetime
import io
from decimal import Decimal
from typing import Any

import pytest

from domain.baccarat.odds import exact_odds
from infra.audit.rebuild import compare_with_rebuild
from infra.store.store import Store
from projections import revenue
from tests.conftest import AUDITOR, OPERATOR, SERVICE, Api
from tests.infra.http import test_baccarat as house
from tests.infra.http import test_blackjack as blackjack
from tests.infra.http import test_p2p as p2p
from tests.infra.http import test_player_banked as banked
from tests.infra.http import test_tables as tables
from tests.provider_client import register

TODAY = datetime.datetime.now(datetime.UTC).date()
CASINO = ("casino:bank", "casino:commission")


def play_a_day(api: Api) -> None:
    """One round of five games, each figure worked out by hand beside it."""
    api.player("alice", real="500.00")
    # House baccarat: $10 on each spot, the banker wins: +9.50, -10, -10.
    round_id = house.open_round(api, house.BANKER_WINS)["round_id"]
    for spot in ("player", "banker", "tie"):
        assert house.bet(api, round_id, spot, "10.00").status_code == 201
    assert house.deal(api, round_id).status_code == 200
    # Blackjack, hall 1: $10 on a blackjack pays 3:2, $15.
    assert blackjack.dealt(api, ["A", "9", "K", "7"], {1: "10.00"}, hall="1")["net"] == {
        "player": "15.00",
        "casino": "-15.00",
    }
    # Chemin de fer: ann's $100 bank wins $50 of punto bets; the casino takes 5%, $2.50.
    table_id = banked.table(api, "chemin_de_fer", "ann", "bob", "cat")
    assert banked.bank(api, table_id, "ann", "100.00").status_code == 201
    coup = banked.coup(api, table_id, banked.BANKER_WINS)
    assert banked.bet(api, coup, "bob", "punto", "30.00").status_code == 201
    assert banked.bet(api, coup, "cat", "punto", "20.00").status_code == 201
    assert banked.deal(api, coup)["commission"] == "2.50"
    # Punto banco at a house table: dave's $20 on the player hand wins 1:1.
    table_id = tables.open_table(api)
    api.player("dave", real="100.00")
    assert tables.sit(api, table_id, "dave", "1").status_code == 201
    coup = tables.open_coup(api, table_id, ["9", "K", "K", "K"])
    assert tables.bet(api, coup, "dave", "player", "20.00").status_code == 201
    assert banked.deal(api, coup)["outcome"] == "player"
    # P2P, the rule book's worked example: pat's $10 banker bet loses to dan, who pays
    # the casino 1.75% of it, $0.18.
    round_id = p2p.confirm(api, p2p.seated_table(api), p2p.WORKED_EXAMPLE).json()["round_id"]
    assert p2p.bet(api, round_id, "banker", "10.00").status_code == 201
    assert house.deal(api, round_id).json()["commission"] == "0.18"


def report(api: Api, path: str, headers: dict[str, str] | None = None) -> Any:
    answer = api.get(path, headers={**OPERATOR, **(headers or {})})
    assert answer.status_code == 200, answer.text
    return answer.json() if "csv" not in answer.headers["content-type"] else answer.text


def figures(rounds: int, stakes: str, returns: str, ggr: str, commission: str) -> Any:
    """A row or total without bonus money: NGR is GGR (rules.md 9)."""
    return {"rounds": rounds, "stakes": stakes, "returns": returns, "ggr": ggr,
            "commission": commission, "bonus_stakes": "0.00", "bonus_returns": "0.00",
            "bonus_converted": "0.00", "ngr": ggr}  # fmt: skip


@pytest.fixture
def day(api: Api) -> Api:
    play_a_day(api)
    return api


def test_a_days_revenue_per_game_is_the_hand_computed_figures(day: Api) -> None:
    revenue = report(day, "/v1/reports/revenue?mode=real")
    today = TODAY.isoformat()
    assert revenue["rows"] == [
        {"period": today, "game": "baccarat", "variant": "chemin_de_fer",
         **figures(1, "50.00", "0.00", "2.50", "2.50")},
        {"period": today, "game": "baccarat", "variant": "house",
         **figures(1, "30.00", "19.50", "10.50", "0.00")},
        {"period": today, "game": "baccarat", "variant": "p2p",
         **figures(1, "10.00", "0.00", "0.18", "0.18")},
        {"period": today, "game": "baccarat", "variant": "punto_banco",
         **figures(1, "20.00", "40.00", "-20.00", "0.00")},
        {"period": today, "game": "blackjack", "variant": "1",
         **figures(1, "10.00", "25.00", "-15.00", "0.00")},
    ]  # fmt: skip
    total = figures(5, "120.00", "84.50", "-21.82", "2.68")
    assert revenue["totals"] == {"period": total, "mtd": total, "ytd": total, "ltd": total}
    assert (revenue["from"], revenue["to"], revenue["group"]) == (None, today, "day")


def test_the_days_ggr_is_what_the_casinos_accounts_moved(day: Api, store: Store) -> None:
    books = {a["account"]: Decimal(a["balance"]) for a in day.trial_balance()["accounts"]}
    assert (books["casino:bank"], books["casino:commission"]) == (
        Decimal("-24.50"),
        Decimal("2.68"),
    )
    totals = report(day, "/v1/reports/revenue")["totals"]["ltd"]
    assert Decimal(totals["ggr"]) == books["casino:bank"] + books["casino:commission"]
    assert Decimal(totals["commission"]) == books["casino:commission"]
    assert compare_with_rebuild(store, lambda _: None).differences == []


def test_a_report_of_too_many_rows_is_refused_naming_the_way_out(
    day: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(revenue, "ROWS_MAX", 4)  # the day has five rows
    answer = day.get("/v1/reports/revenue", headers=OPERATOR)
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "report_too_large"
    assert "group by month" in answer.json()["detail"]


def test_by_month_the_rows_add_up_and_totals_are_relative_to_to(day: Api) -> None:
    month = report(day, "/v1/reports/revenue?group=month")
    assert {row["period"] for row in month["rows"]} == {TODAY.isoformat()[:7]}
    assert sum(row["rounds"] for row in month["rows"]) == 5
    tomorrow = (TODAY + datetime.timedelta(days=1)).isoformat()
    later = report(day, f"/v1/reports/revenue?from={tomorrow}&to={tomorrow}")
    assert later["rows"] == [] and later["totals"]["period"]["rounds"] == 0
    assert later["totals"]["ltd"]["rounds"] == 5  # life to date includes today
    yesterday = (TODAY - datetime.timedelta(days=1)).isoformat()
    earlier = report(day, f"/v1/reports/revenue?to={yesterday}")
    assert earlier["totals"]["ltd"] == figures(0, "0.00", "0.00", "0.00", "0.00")


def test_the_revenue_report_comes_as_csv_when_asked(day: Api) -> None:
    text = report(day, "/v1/reports/revenue", {"Accept": "text/csv"})
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0] == ["period", "game", "variant", "rounds", "stakes", "returns", "ggr",
                        "commission", "bonus_stakes", "bonus_returns", "bonus_converted",
                        "ngr"]  # fmt: skip
    assert lines[2] == [TODAY.isoformat(), "baccarat", "house", "1", "30.00", "19.50", "10.50",
                        "0.00", "0.00", "0.00", "0.00", "10.50"]  # fmt: skip
    assert [line[0] for line in lines[6:]] == ["period", "mtd", "ytd", "ltd"]
    assert lines[-1] == ["ltd", "all", "all", "5", "120.00", "84.50", "-21.82", "2.68", "0.00",
                         "0.00", "0.00", "-21.82"]  # fmt: skip
    preferred = "application/json;q=0.9, text/csv"  # by quality, then by order
    assert report(day, "/v1/reports/revenue", {"Accept": preferred}).startswith("period,")
    for json_first in ("application/json, text/csv", "text/csv;q=0.5, */*"):
        assert "rows" in report(day, "/v1/reports/revenue", {"Accept": json_first})


def test_house_baccarats_rtp_sets_the_actual_beside_the_exact_figure(day: Api) -> None:
    rtp = report(day, "/v1/reports/rtp?game=baccarat&variant=house")
    odds = exact_odds(8, 8)
    edges = odds.house_edge_player + odds.house_edge_banker + odds.house_edge_tie
    rtp_of_each = (3 - edges) / 3  # the same stake on each spot
    theoretical = Decimal(rtp_of_each.numerator) / Decimal(rtp_of_each.denominator)
    assert rtp == {
        "mode": "real", "game": "baccarat", "variant": "house", "from": None, "to": None,
        "rounds": 1, "stakes": "30.00", "returns": "19.50", "actual_rtp": "0.650000",
        "theoretical_rtp": str(theoretical.quantize(Decimal("0.000001"))),
        "theoretical_source": rtp["theoretical_source"],
        "difference": str((Decimal("0.65") - theoretical).quantize(Decimal("0.000001"))),
        "difference_ci95": None,  # one round has no variance to speak of
    }  # fmt: skip
    assert rtp["theoretical_source"].startswith("exact")


def test_rtp_of_every_variant_of_a_game_and_as_csv(day: Api) -> None:
    rtp = report(day, "/v1/reports/rtp?game=baccarat")
    assert (rtp["rounds"], rtp["stakes"], rtp["returns"]) == (4, "110.00", "59.50")
    assert rtp["theoretical_rtp"] is not None
    played = report(day, "/v1/reports/rtp?game=blackjack&variant=1")
    assert (played["actual_rtp"], played["theoretical_source"][:10]) == ("2.500000", "simulation")
    text = report(day, "/v1/reports/rtp?game=blackjack", {"Accept": "text/csv"})
    header, row = list(csv.reader(io.StringIO(text)))
    assert dict(zip(header, row, strict=True))["actual_rtp"] == "2.500000"
    nothing = report(day, "/v1/reports/rtp?game=blackjack&variant=vip")
    assert (nothing["rounds"], nothing["actual_rtp"], nothing["difference_ci95"]) == (0, None, None)


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("revenue?from=2026-02-01&to=2026-01-31", "invalid_request"),
        ("revenue?group=week", "invalid_request"),
        ("revenue?mode=fake", "unknown_mode"),
        ("revenue?to=2026-13-01", "invalid_request"),
        ("rtp", "invalid_request"),
        ("rtp?game=roulette", "invalid_request"),
        ("rtp?game=baccarat&variant=House%20Edge", "invalid_request"),
        ("rtp?game=baccarat&from=2026-02-01&to=2026-01-31", "invalid_request"),
    ],
)
def test_bad_report_queries_are_a_422_naming_why(api: Api, query: str, code: str) -> None:
    answer = api.get(f"/v1/reports/{query}", headers=OPERATOR)
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == code


def date_parameters(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each GET's query parameters that are dates or instants: path, name, format."""
    return [
        (path, parameter["name"], schema["format"])
        for path, methods in document["paths"].items()
        for parameter in methods.get("get", {}).get("parameters", [])
        for schema in [parameter["schema"], *parameter["schema"].get("anyOf", [])]
        if parameter["in"] == "query" and schema.get("format") in ("date", "date-time")
    ]


def test_every_date_parameter_takes_a_date_and_refuses_a_bare_number(api: Api) -> None:
    found = date_parameters(api.get("/openapi.json").json())
    assert {path for path, _, _ in found} >= {
        "/v1/reports/commission",
        "/v1/reports/revenue",
        "/v1/reports/rtp",
        "/v1/significant-events",
    }
    written = {"date": "2026-01-31", "date-time": "2026-01-31T12:00:00Z"}
    register(api.client, "acme")  # a provider's reconciliation takes dates too
    for path, name, form in found:
        query = f"{path.replace('{provider_id}', 'acme')}?game=baccarat&{name}="
        assert api.get(query + written[form], headers=OPERATOR).status_code == 200, path
        for number in ("0", "1700000000", "20260131"):
            refused = api.get(query + number, headers=OPERATOR)
            assert (refused.status_code, refused.json()["code"]) == (422, "invalid_request"), (
                path,
                name,
                number,
            )


def test_reports_are_for_operators_and_auditors(api: Api) -> None:
    assert api.get("/v1/reports/revenue", headers=SERVICE).status_code == 403
    assert api.get("/v1/reports/rtp?game=baccarat", headers=AUDITOR).status_code == 200
