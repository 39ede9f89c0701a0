"""The auditor's pages (api.md, Auditor's pages): shells that hold no data, assets served
from the package under a strict Content-Security-Policy, and, in a real browser, the
round page and the index against a real `casino serve`."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import AUDITOR, OPERATOR, Api
from tests.infra.http.test_blackjack import bet as blackjack_bet
from tests.infra.http.test_blackjack import deal as blackjack_deal
from tests.infra.http.test_blackjack import open_round as open_blackjack_round
from tests.infra.http.test_p2p import WORKED_EXAMPLE, bet, confirm, dealer, join, sit
from tests.infra.store.test_crash_recovery import Server
from tests.provider_client import ProviderClient, open_session, register


def test_the_pages_are_served_as_shells_that_hold_no_data(api: Api) -> None:
    for path, title in (
        ("/audit/rounds", "<title>Rounds"),
        ("/audit/rounds/1d8e5d1e-0000-4000-8000-000000000000", "<title>Round record"),
    ):
        page = api.client.get(path)  # no key: the page asks for one
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert title in page.text
        policy = page.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "unsafe-inline" not in policy
        assert page.headers["referrer-policy"] == "no-referrer"
        assert "<script>" not in page.text and " style=" not in page.text


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("page.js", "text/javascript; charset=utf-8"),
        ("verify.js", "text/javascript; charset=utf-8"),
        ("ledger.js", "text/javascript; charset=utf-8"),
        ("audit.css", "text/css; charset=utf-8"),
    ],
)
def test_assets_come_from_the_package_and_are_revalidated(
    api: Api, name: str, content_type: str
) -> None:
    asset = api.client.get(f"/audit/assets/{name}")
    assert asset.status_code == 200
    assert asset.headers["content-type"] == content_type
    assert asset.headers["cache-control"] == "no-cache"
    assert asset.headers["x-content-type-options"] == "nosniff"
    etag = asset.headers["etag"]
    again = api.client.get(f"/audit/assets/{name}", headers={"If-None-Match": etag})
    assert (again.status_code, again.content) == (304, b"")


@pytest.mark.parametrize("name", ["nothing.js", "..%2F..%2Fconfig.py", "__init__.py"])
def test_nothing_else_is_served_as_an_asset(api: Api, name: str) -> None:
    assert api.client.get(f"/audit/assets/{name}").status_code == 404


# In a real browser: Debian's chromium driven by playwright-core (tests/browser/run.mjs),
# against `casino serve` on a SQLite store, and on a copy of it with cards rewritten.

ROOT = Path(__file__).parents[3]
BROWSER_TESTS = ROOT / "tests" / "browser"
SCREENSHOTS = ROOT / "var" / "screenshots"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
BROWSER_SECONDS_MAX = 120
TAMPERED_CARD = "9S"  # Replaces the worked example's 3S, the player's second card.
IN_PLAY_SHOE = ["10", "6", "7", "9"]  # Box 17 against a 6 up: the player must act.
A4_PT = (595.28, 841.89)  # 210 x 297 mm
SYSTEM_FINISH_SECONDS_MAX = 15


@dataclass(frozen=True)
class Casino:
    """Two servers: one on the store the rounds were played on, one on a copy of it in
    which an insider rewrote cards."""

    base: str
    tampered_base: str
    p2p: str  # the seed's worked example, settled
    house: str  # a house round on a shoe of the seed alone, settled
    blackjack: str  # dealt, the player to act: the hole card is face down
    abandoned: str  # blackjack, finished by the system once its player stayed away
    coup: str  # three players' coup at an American table, on a shuffled shoe, settled
    bonus: str  # a house round staked half with cash, half with bonus money, won
    external: str  # a provider's round: two bets, a rollback, a win, ended
    external_bonus: str  # a provider's round staked partly with a bonus it converted
    house_banker_card: str  # the house round's banker card as dealt
    house_rewritten_card: str  # what the insider wrote in its place, in the copy


def _browser_tools() -> str:
    node = shutil.which("node")
    missing = [
        what
        for what, there in (
            ("node (Node.js 20 or newer)", node is not None),
            (f"{CHROMIUM} (apt-get install chromium)", CHROMIUM.exists()),
            (
                "playwright-core (npm ci --prefix tests/browser)",
                (BROWSER_TESTS / "node_modules" / "playwright-core").is_dir(),
            ),
        )
        if not there
    ]
    if missing:
        pytest.fail(
            f"the browser tests need {', '.join(missing)}: `make browser-deps` installs them"
        )
    assert node is not None
    return node


def _play_rounds(api: Api) -> dict[str, str]:
    dealer(api, points=50)
    api.player("pat", real="100.00")
    table_id = sit(api).json()["table_id"]
    assert join(api).status_code == 201
    p2p = confirm(api, table_id, WORKED_EXAMPLE).json()["round_id"]
    assert bet(api, p2p, "banker", "10.00").status_code == 201
    assert api.post(f"/v1/rounds/{p2p}/deal").status_code == 200
    api.player("alice", real="100.00")
    house = api.post("/v1/baccarat/rounds", {"player_id": "alice", "mode": "real"}).json()
    assert bet(api, house["round_id"], "player", "5.00").status_code == 201
    assert api.post(f"/v1/rounds/{house['round_id']}/deal").status_code == 200
    blackjack = open_blackjack_round(api, IN_PLAY_SHOE)["round_id"]
    assert blackjack_bet(api, blackjack, 1, "10.00").status_code == 201
    assert blackjack_deal(api, blackjack).json()["status"] == "in_play"
    rounds = {"p2p": p2p, "house": house["round_id"], "blackjack": blackjack}
    return {**rounds, "coup": _coup(api), "bonus": _bonus_round(api), "external": _slot(api),
            "external_bonus": _bonus_slot(api)}  # fmt: skip


def _slot(api: Api) -> str:
    """A provider's round (rules.md 10): Sam bets $10 and $5, the $5 is rolled back, he
    wins $25, and the provider ends the round."""
    register(api.client)
    api.player("sam", real="100.00")
    token, provider = open_session(api.client, "sam"), ProviderClient(api.client)
    calls = (
        provider.bet(token, "b1", "spin-1", "10.00"),
        provider.bet(token, "b2", "spin-1", "5.00"),
        provider.rollback(token, "rb1", "b2"),
        provider.win(token, "w1", "spin-1", "25.00"),
        provider.end_round(token, "spin-1"),
    )
    return _round_played(api, "sam", calls)


def _bonus_slot(api: Api) -> str:
    """Bo bets $30 at a provider that allows bonus money: $10 cash, $20 of a bonus at
    1x, which the round's end converts (its trail then holds the wagering and the
    conversion beside the calls)."""
    register(api.client, "bonusy", bonus_allowed=True)
    api.player("bo", real="10.00")
    grant = {"amount": "20.00", "wagering": 1, "expires_in_days": 30}
    assert api.post("/v1/players/bo/bonuses", grant, headers=OPERATOR).status_code == 201
    token, provider = open_session(api.client, "bo", "bonusy"), ProviderClient(api.client, "bonusy")
    calls = (
        provider.bet(token, "b1", "spin-1", "30.00"),
        provider.win(token, "w1", "spin-1", "12.00"),
        provider.end_round(token, "spin-1"),
    )
    return _round_played(api, "bo", calls)


def _round_played(api: Api, player_id: str, calls: tuple[Any, ...]) -> str:
    """The id of the player's one round, each of the provider's calls in it answered."""
    for call in calls:
        assert call.status_code == 200, call.text
    found = api.get(f"/v1/rounds?player_id={player_id}", headers=AUDITOR).json()["rounds"]
    round_id: str = found[0]["round_id"]
    return round_id


def _bonus_round(api: Api) -> str:
    """Bea stakes $10 on Player: $5 cash and $5 of a bonus (rules.md 9); Player wins."""
    api.player("bea", real="5.00")
    grant = {"amount": "20.00", "wagering": 10, "expires_in_days": 30}
    assert api.post("/v1/players/bea/bonuses", grant, headers=OPERATOR).status_code == 201
    body = {"player_id": "bea", "mode": "real", "shoe": ["9", "K", "K", "K"]}
    round_id: str = api.post("/v1/baccarat/rounds", body).json()["round_id"]
    assert bet(api, round_id, "player", "10.00").status_code == 201
    assert api.post(f"/v1/rounds/{round_id}/deal").status_code == 200
    return round_id


def _coup(api: Api) -> str:
    """A coup at an American table: three players, each on their own spots."""
    table_id = api.post("/v1/tables", {"game": "punto_banco", "mode": "real"}).json()["table_id"]
    for seat, name in enumerate(("tia", "tom", "ted"), start=1):
        api.player(name, real="100.00")
        api.post(f"/v1/tables/{table_id}/seats", {"player_id": name, "seat": str(seat)})
    round_id: str = api.post(f"/v1/tables/{table_id}/coups").json()["round_id"]
    for name, spot in (("tia", "player"), ("tom", "banker"), ("ted", "tie"), ("tia", "tie")):
        body = {"player_id": name, "spot": spot, "amount": "5.00"}
        assert api.post(f"/v1/rounds/{round_id}/bets", body).status_code == 201
    assert api.post(f"/v1/rounds/{round_id}/deal").json()["status"] == "settled"
    return round_id


def _abandoned_round(api: Api) -> str:
    """A blackjack round whose player went away: once the resume window closes, the
    server finishes it with the house defaults, decisions by the system (rules.md 4)."""
    api.player("bob", real="100.00")
    round_id: str = open_blackjack_round(api, IN_PLAY_SHOE, player="bob")["round_id"]
    assert blackjack_bet(api, round_id, 1, "10.00").status_code == 201
    assert blackjack_deal(api, round_id).status_code == 200
    assert api.post("/v1/players/bob/disconnect").status_code == 200
    deadline = time.monotonic() + SYSTEM_FINISH_SECONDS_MAX
    while api.get(f"/v1/rounds/{round_id}").json()["status"] != "settled":
        assert time.monotonic() < deadline, "the abandoned round was not finished in time"
        time.sleep(0.1)
    return round_id


def _card_event(api: Api, round_id: str, position: int) -> dict[str, Any]:
    return _event(
        api, round_id, lambda e: e["type"] == "CardDealt" and e["data"]["position"] == position
    )


def _event(api: Api, round_id: str, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    events = api.get(f"/v1/rounds/{round_id}/audit", headers=AUDITOR).json()["events"]
    return next(event for event in events if wanted(event))


def _rewrite_card(copy: Path, round_id: str, version: int, card: str) -> None:
    """What an insider with the database's credentials could do to a copy: drop the
    trigger that refuses UPDATE and rewrite a stored CardDealt event's card. (The
    audit trail reads the event from the log: there is no copy to rewrite as well.)"""
    _rewrite_event(copy, round_id, version, "card", card)


def _rewrite_event(copy: Path, aggregate_id: str, version: int, field: str, value: Any) -> None:
    """One field of a stored event rewritten in a copy of the store, as an insider could."""
    connection = sqlite3.connect(copy, isolation_level=None)
    try:
        connection.execute("DROP TRIGGER IF EXISTS stored_events_refuse_update")
        key = (uuid.UUID(aggregate_id).hex, version)
        (state,) = connection.execute(
            "SELECT state FROM stored_events WHERE originator_id = ? AND originator_version = ?",
            key,
        ).fetchone()
        event = json.loads(state)
        event[field] = value
        connection.execute(
            "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = ?",
            (json.dumps(event, separators=(",", ":")).encode(), *key),
        )
    finally:
        connection.close()


@pytest.fixture(scope="module")
def casino(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Casino]:
    workdir = tmp_path_factory.mktemp("audit-pages")
    original, copy = workdir / "casino.sqlite", workdir / "tampered.sqlite"
    env = {name: value for name, value in os.environ.items() if not name.startswith("CASINO_")}
    server = Server({**env, "CASINO_DATABASE_URL": f"sqlite:///{original}"}, workdir)
    tampered = Server({**env, "CASINO_DATABASE_URL": f"sqlite:///{copy}"}, workdir)
    try:
        server.start(
            CASINO_TEST_MODE="1", CASINO_LOG_LEVEL="warning", CASINO_RESUME_WINDOW_SECONDS="1"
        )
        with httpx.Client(base_url=server.base, timeout=10) as client:
            api = Api(client)  # type: ignore[arg-type]
            rounds = {**_play_rounds(api), "abandoned": _abandoned_round(api)}
            p2p_card = _card_event(api, rounds["p2p"], 2)
            house_card = _card_event(api, rounds["house"], 1)
            win = _event(api, rounds["external"], lambda e: e["data"].get("kind") == "win")
        with sqlite3.connect(original) as source, sqlite3.connect(copy) as target:
            source.backup(target)
        _rewrite_card(copy, rounds["p2p"], p2p_card["version"], TAMPERED_CARD)
        other = "AS" if house_card["data"]["card"] != "AS" else "2S"
        _rewrite_card(copy, rounds["house"], house_card["version"], other)
        # The win's credit grown by $100 in the wallet's event; the round's call says $25.
        _rewrite_event(copy, win["aggregate_id"], win["version"], "amount_cents", 12_500)
        tampered.start(CASINO_LOG_LEVEL="warning")
        yield Casino(
            server.base,
            tampered.base,
            **rounds,
            house_banker_card=house_card["data"]["card"],
            house_rewritten_card=other,
        )
    finally:
        server.close()
        tampered.close()


def _scenarios(casino: Casino) -> list[dict[str, Any]]:
    hands = {
        f"{hand}_cards": f'[aria-labelledby="hand-{hand}"] .card .code'
        for hand in ("player", "banker")
    }
    record = {
        "verdict": "#verdict",
        "deal_order": "#deal-order tbody tr",
        "summary": "#summary .facts > div",
        "balances": "#balance-lines tbody tr",
        "ledger": "#ledger-lines tbody tr",
        "bets": "#bet-lines tbody tr",
        "mismatched": ".card.mismatch .check",
        "checks": ".card .check",
        "refusal": "#refusal:not([hidden])",
        "content": "#content:not([hidden])",
        **hands,
    }
    verdict = {"verdict": ["#verdict", "data-verdict"]}
    round_page = f"/audit/rounds/{casino.p2p}"
    return [
        {
            "name": "p2p-round-verified",
            "path": f"{round_page}#key=dev-auditor",
            "extract": record,
            "attributes": {**verdict, "ledger_links": ["#ledger-lines a.log", "href"]},
            "print": True,
            "print_hidden": ["#key-form", "nav", "#message"],
        },
        {
            "name": "house-round-verified",
            "path": f"/audit/rounds/{casino.house}#key=dev-operator",
            "extract": record,
            "attributes": verdict,
        },
        {
            "name": "blackjack-open-hole-card-face-down",
            "path": f"/audit/rounds/{casino.blackjack}#key=dev-auditor",
            "extract": {
                **record,
                "dealer": '[aria-labelledby="hand-dealer"] .card',
                "box": '[aria-labelledby="hand-box-1-0"] .card .code',
                "backs": ".card.back",
                "fairness": "#fairness .facts > div",
            },
            "attributes": {
                **verdict,
                "dealer_labels": ['[aria-labelledby="hand-dealer"] .card', "aria-label"],
            },
        },
        {
            "name": "blackjack-finished-by-the-system",
            "path": f"/audit/rounds/{casino.abandoned}#key=dev-auditor",
            "extract": {
                **record,
                "decisions": "#decision-lines tbody tr",
                "dealer": '[aria-labelledby="hand-dealer"] .card',
                "backs": ".card.back",
            },
            "attributes": verdict,
        },
        {
            "name": "house-round-with-bonus",
            "path": f"/audit/rounds/{casino.bonus}#key=dev-auditor",
            "extract": record,
            "attributes": verdict,
        },
        {
            "name": "table-coup-verified",
            "path": f"/audit/rounds/{casino.coup}#key=dev-auditor",
            "extract": record,
            "attributes": verdict,
        },
        {
            "name": "provider-round-money-checked",
            "path": f"/audit/rounds/{casino.external}#key=dev-auditor",
            "extract": {
                **record,
                "calls": "#call-lines tbody tr",
                "sections": "#content section h2",
                "links": "#contents a:not([hidden])",
            },
            "attributes": verdict,
        },
        {
            "name": "provider-round-with-bonus",
            "path": f"/audit/rounds/{casino.external_bonus}#key=dev-auditor",
            "extract": {**record, "calls": "#call-lines tbody tr"},
            "attributes": verdict,
        },
        {
            "name": "tampered-provider-credit-mismatch",
            "base": casino.tampered_base,
            "path": f"/audit/rounds/{casino.external}#key=dev-auditor",
            "extract": {**record, "calls": "#call-lines tbody tr"},
            "attributes": verdict,
        },
        {
            "name": "wrong-key-refused",
            "path": round_page,
            "key": "not-a-key-of-this-casino",
            "extract": record,
        },
        {
            "name": "service-key-refused",
            "path": f"{round_page}#key=dev-service",
            "extract": record,
        },
        {
            "name": "index-of-a-players-rounds",
            "path": "/audit/rounds?player_id=pat#key=dev-auditor",
            "extract": {
                "rows": "#rounds tbody tr",
                "links": "#rounds tbody a",
                "message": "#message",
                "content": "#content",
                "next": "#next-page",
            },
            "follow": "#rounds tbody a",
            "follow_extract": {"verdict": "#verdict", **hands},
        },
        {
            "name": "tampered-card-mismatch",
            "base": casino.tampered_base,
            "path": f"{round_page}#key=dev-auditor",
            "extract": record,
            "attributes": verdict,
        },
        {
            "name": "tampered-house-card-mismatch",
            "base": casino.tampered_base,
            "path": f"/audit/rounds/{casino.house}#key=dev-auditor",
            "extract": record,
            "attributes": verdict,
        },
    ]


@pytest.fixture(scope="module")
def seen(casino: Casino, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every scenario, run once in one browser: what each page showed, by name."""
    node = _browser_tools()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    workdir = tmp_path_factory.mktemp("browser")
    spec, results = workdir / "spec.json", workdir / "results.json"
    scenarios = _scenarios(casino)
    spec.write_text(
        json.dumps({"base": casino.base, "screenshots": str(SCREENSHOTS), "scenarios": scenarios})
    )
    run = subprocess.run(
        [node, str(BROWSER_TESTS / "run.mjs"), str(spec), str(results)],
        cwd=BROWSER_TESTS,
        capture_output=True,
        text=True,
        timeout=BROWSER_SECONDS_MAX,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    found = {result["name"]: result for result in json.loads(results.read_text())}
    assert list(found) == [scenario["name"] for scenario in scenarios]
    return found


def _page(seen: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """One scenario's result, after what every page must do: no script error (a refused
    key's 401 or 403 aside), no asset refused by the policy, no request off the server,
    the key in no address, and a screenshot saved."""
    result = seen[name]
    assert "failure" not in result, result.get("failure")
    refusals = [f"the server responded with a status of {status}" for status in (401, 403)]
    errors = [
        message
        for message in result["console"]
        if not (result["state"] == "refused" and any(r in message for r in refusals))
    ]
    assert errors == [] and result["violations"] == [], result
    origin = urlsplit(result["url"])
    for request in result["requests"]:
        assert urlsplit(request["url"]).netloc == origin.netloc, request
        assert "key=" not in request["url"], request
    assert "key=" not in result["url"]
    assert (SCREENSHOTS / f"{name}.png").stat().st_size > 10_000
    return result


def _reads_with(result: dict[str, Any], key: str) -> list[str]:
    """The JSON routes the page read, each sent with the key as a bearer token."""
    reads = [r for r in result["requests"] if urlsplit(r["url"]).path.startswith("/v1/")]
    assert all(r["authorization"] == f"Bearer {key}" for r in reads), reads
    return [urlsplit(r["url"]).path for r in reads]


def test_a_settled_p2p_round_shows_the_seed_examples_cards_verified(
    seen: dict[str, dict[str, Any]], casino: Casino
) -> None:
    result = _page(seen, "p2p-round-verified")
    texts = result["texts"]
    assert result["state"] == "done"
    assert result["attributes"]["verdict"] == ["verified"]
    assert texts["verdict"][0].startswith(
        "✓ VERIFIED: SHA-256 of the revealed seed is the commitment"
    )
    assert "each of the 6 cards dealt" in texts["verdict"][0]
    assert "certification round: its first 6 cards were chosen in test mode" in texts["verdict"][0]
    assert texts["player_cards"] == ["10S", "3S", "10D"]
    assert texts["banker_cards"] == ["KS", "10H", "QS"]
    assert texts["checks"] == ["✓ as the shoe"] * 6 and texts["mismatched"] == []
    assert [row.split("\t")[:3] for row in texts["deal_order"]] == [
        ["0", "Player hand", "first card"],
        ["1", "Banker hand", "first card"],
        ["2", "Player hand", "second card"],
        ["3", "Banker hand", "second card"],
        ["4", "Player hand", "third card"],
        ["5", "Banker hand", "third card"],
    ]
    summary = dict(row.split("\n", 1) for row in texts["summary"])
    assert summary["Game"] == "Baccarat, P2P (a player deals)"
    assert summary["Players and roles"] == "dan (dealer)\npat (player)"
    assert summary["Status"] == "settled"
    assert summary["Outcome"] == "player wins, player 3 against banker 0"
    balances = [row.split("\t")[:6] for row in texts["balances"]]
    assert balances == [
        ["dan", "dealer", "2000.00", "2009.82", "+9.82", "0.18"],
        ["pat", "player", "100.00", "90.00", "-10.00", "0.00"],
    ]
    assert texts["bets"][0].split("\t")[2:5] == ["banker", "placed", "10.00"]
    assert len(texts["ledger"]) == 7  # two holds, two results, a commission, two point moves
    assert all(link.startswith("#event-") for link in result["attributes"]["ledger_links"])
    path = f"/v1/rounds/{casino.p2p}"
    assert sorted(_reads_with(result, "dev-auditor")) == ["/v1/rounds", path, f"{path}/audit"]
    assert result["session_key"] == "dev-auditor"


def test_the_round_prints_on_a4_as_a_dispute_record(seen: dict[str, dict[str, Any]]) -> None:
    printed = _page(seen, "p2p-round-verified")["print"]
    assert all(printed["hidden"].values()), printed["hidden"]
    assert printed["size_pt"] == pytest.approx(A4_PT, abs=1.5)
    assert 1 <= printed["pages"] <= 6
    assert (SCREENSHOTS / "p2p-round-verified-print.png").exists()


def test_a_house_round_on_a_shuffled_shoe_is_verified(
    seen: dict[str, dict[str, Any]], casino: Casino
) -> None:
    result = _page(seen, "house-round-verified")
    assert result["attributes"]["verdict"] == ["verified"]
    assert "certification" not in result["texts"]["verdict"][0]
    assert result["texts"]["banker_cards"][0] == casino.house_banker_card
    dealt = len(result["texts"]["player_cards"]) + len(result["texts"]["banker_cards"])
    assert f"each of the {dealt} cards dealt" in result["texts"]["verdict"][0]
    assert len(result["texts"]["checks"]) == dealt


def test_a_round_staked_with_bonus_money_shows_each_parts_result(
    seen: dict[str, dict[str, Any]],
) -> None:
    result = _page(seen, "house-round-with-bonus")
    assert result["attributes"]["verdict"] == ["verified"]
    [row] = [line.split("\t") for line in result["texts"]["balances"]]
    # $10 won back $20: $10 (20 x 5/10) to the bonus, $10 to cash, which had $5.
    assert (row[:5], row[-1]) == (["bea", "player", "5.00", "10.00", "+5.00"], "+5.00")
    ledger = [line.split("\t")[3] for line in result["texts"]["ledger"]]
    assert "bonus stake held" in ledger and "bonus result (bonus hold released)" in ledger


def test_a_coup_of_many_players_at_a_table_is_verified_with_every_bet(
    seen: dict[str, dict[str, Any]],
) -> None:
    result = _page(seen, "table-coup-verified")
    assert result["attributes"]["verdict"] == ["verified"]
    dealt = len(result["texts"]["player_cards"]) + len(result["texts"]["banker_cards"])
    assert len(result["texts"]["checks"]) == dealt >= 4
    bets = " ".join(result["texts"]["bets"])
    assert all(name in bets for name in ("tia", "tom", "ted"))
    assert len(result["texts"]["bets"]) == 4


def test_an_open_blackjack_round_shows_the_hole_card_face_down_and_no_seed(
    seen: dict[str, dict[str, Any]],
) -> None:
    result = _page(seen, "blackjack-open-hole-card-face-down")
    texts = result["texts"]
    assert result["attributes"]["verdict"] == ["pending"]
    assert texts["verdict"][0].startswith("… CANNOT BE CHECKED YET: the seed stays secret")
    assert result["attributes"]["dealer_labels"] == [
        "6 of spades; #1 · up card",
        "face down; #3 · hole card",
    ]
    assert len(texts["backs"]) == 1
    assert texts["box"] == ["10S", "7S"]
    fairness = dict(row.split("\n", 1) for row in texts["fairness"])
    assert fairness["Seed"] == "secret until the round is over"
    assert len(fairness["Commitment (published at opening)"]) == 64
    assert texts["checks"] == []
    assert [row.split("\t")[:3] for row in texts["balances"]] == [
        ["alice", "player", "no money moved"]
    ]


def test_decisions_say_whether_the_player_or_the_system_made_them(
    seen: dict[str, dict[str, Any]],
) -> None:
    result = _page(seen, "blackjack-finished-by-the-system")
    texts = result["texts"]
    assert result["attributes"]["verdict"] == ["verified"]
    assert [row.split("\t")[2:5] for row in texts["decisions"]] == [
        ["—", "interrupted: player bob disconnected", "system"],
        ["box 1, hand 1", "stand", "system"],
    ]
    assert texts["backs"] == []  # the round is over: the hole card is face up
    assert len(texts["dealer"]) >= 3  # 6 up, 9 in the hole: the dealer draws to 17
    assert texts["checks"] == ["✓ as the shoe"] * (2 + len(texts["dealer"]))


def test_a_wrong_key_is_clearly_refused_and_shows_nothing(seen: dict[str, dict[str, Any]]) -> None:
    result = _page(seen, "wrong-key-refused")
    assert result["first_state"] == "needs-key"
    assert result["tabs_to_key"] is not None  # reached with the keyboard alone
    assert result["state"] == "refused"
    assert result["texts"]["refusal"] == [
        "The key was refused: the API key is not known (401 unauthenticated). "
        "Enter a key of the operator or auditor role."
    ]
    assert result["texts"]["content"] == [] and result["session_key"] is None
    _reads_with(result, "not-a-key-of-this-casino")


def test_a_service_key_is_refused_the_pages_are_for_operators_and_auditors(
    seen: dict[str, dict[str, Any]],
) -> None:
    result = _page(seen, "service-key-refused")
    assert result["state"] == "refused"
    assert "(403 forbidden_role)" in result["texts"]["refusal"][0]
    assert "needs: operator, auditor" in result["texts"]["refusal"][0]
    assert result["texts"]["content"] == []


def test_the_index_lists_a_players_rounds_and_links_to_each(
    seen: dict[str, dict[str, Any]], casino: Casino
) -> None:
    result = _page(seen, "index-of-a-players-rounds")
    assert result["state"] == "done"
    assert result["texts"]["links"] == [casino.p2p]
    assert result["texts"]["message"] == ["1 round shown."]
    assert result["texts"]["next"] == []
    assert "null" not in result["texts"]["content"][0]
    assert result["texts"]["rows"][0].split("\t")[1:6] == [
        "baccarat",
        "p2p",
        "real",
        "settled",
        "dan (dealer), pat (player)",
    ]
    followed = result["followed"]  # by the keyboard, with the key kept for the tab
    assert (followed["state"], urlsplit(followed["url"]).path) == (
        "done",
        f"/audit/rounds/{casino.p2p}",
    )
    assert followed["texts"]["verdict"][0].startswith("✓ VERIFIED")


def test_a_card_rewritten_in_the_store_is_named_as_the_first_mismatch(
    seen: dict[str, dict[str, Any]],
) -> None:
    result = _page(seen, "tampered-card-mismatch")
    texts = result["texts"]
    assert result["attributes"]["verdict"] == ["mismatch"]
    assert texts["verdict"][0].startswith(
        "✗ MISMATCH: shoe position 2 (Player hand, second card; CardDealt at log position "
    )
    assert texts["verdict"][0].endswith(
        f"the audit trail records {TAMPERED_CARD}, the shoe re-derived from the seed holds 3S"
    )
    assert texts["player_cards"] == ["10S", TAMPERED_CARD, "10D"]
    assert texts["mismatched"] == ["✗ shoe holds 3S"]
    bad = [row for row in texts["deal_order"] if "differs" in row]
    assert [row.split("\t")[:4] for row in bad] == [
        ["2", "Player hand", "second card", TAMPERED_CARD]
    ]


def test_a_card_rewritten_in_the_log_shows_in_the_trail_read_from_it(
    seen: dict[str, dict[str, Any]], casino: Casino
) -> None:
    """The trail is read from the log, not kept as a copy beside it: a rewritten event
    cannot hide behind a trail that still shows what was dealt."""
    result = _page(seen, "tampered-house-card-mismatch")
    verdict = result["texts"]["verdict"][0]
    assert result["attributes"]["verdict"] == ["mismatch"]
    assert verdict.startswith("✗ MISMATCH: shoe position 1 (Banker hand, first card; ")
    assert verdict.endswith(
        f"the audit trail records {casino.house_rewritten_card},"
        f" the shoe re-derived from the seed holds {casino.house_banker_card}"
    )


def test_a_providers_round_shows_its_calls_each_matched_to_the_wallet(
    seen: dict[str, dict[str, Any]],
) -> None:
    """No cards and no seed in a provider's round: the page checks the casino's side,
    each call against the wallet event that moved its money."""
    result = _page(seen, "provider-round-money-checked")
    texts = result["texts"]
    assert result["attributes"]["verdict"] == ["verified"]
    assert texts["verdict"][0] == (
        "✓ VERIFIED: each of the 4 calls moved exactly its amount in the wallet; stakes"
        " 15.00 = rollbacks 5.00 + wins 25.00 + the house's result -15.00 (on casino:games:acme)"
    )
    calls = [row.split("\t")[2:6] for row in texts["calls"]]
    assert calls == [
        ["bet", "b1", "—", "-10.00"],
        ["bet", "b2", "—", "-5.00"],
        ["rollback", "rb1", "b2", "+5.00"],
        ["win", "w1", "—", "+25.00"],
    ]
    [balance] = [row.split("\t")[:5] for row in texts["balances"]]
    assert balance == ["sam", "player", "100.00", "115.00", "+15.00"]
    assert "Cards" not in " ".join(texts["sections"]) and "Decisions" not in texts["links"]
    assert texts["links"][1:3] == ["Money check", "Calls"]
    assert texts["deal_order"] == texts["bets"] == []


def test_a_providers_credit_rewritten_in_the_store_is_named(
    seen: dict[str, dict[str, Any]],
) -> None:
    result = _page(seen, "tampered-provider-credit-mismatch")
    verdict = result["texts"]["verdict"][0]
    assert result["attributes"]["verdict"] == ["mismatch"]
    said = r"the win w1 \(log position \d+\) says 25\.00, the wallet moved 125\.00"
    assert re.fullmatch(rf"✗ MISMATCH: {said} \(log position \d+\)", verdict), verdict


def test_a_providers_round_under_a_bonus_is_verified_with_its_wagering_beside_it(
    seen: dict[str, dict[str, Any]],
) -> None:
    result = _page(seen, "provider-round-with-bonus")
    assert result["attributes"]["verdict"] == ["verified"], result["texts"]["verdict"]
    calls = [row.split("\t")[2:7] for row in result["texts"]["calls"]]
    assert calls == [["bet", "b1", "—", "-30.00", "20.00"], ["win", "w1", "—", "+12.00", "8.00"]]
    ledger = [line.split("\t")[3] for line in result["texts"]["ledger"]]
    assert "stakes counted towards the bonus" in ledger and "bonus converted to cash" in ledger
