"""A blackjack round's hole card is not in the database while the round is in play
(rules.md 5(c)): its deal stores only the card's place in a shoe whose seed is sealed.
The round still plays on after a restart, and once it is over the audit trail, the
event feed, the export and verify show and check the hole card. Both stores."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import psycopg

from infra.audit.export import Export, selection
from infra.audit.verify import verify
from infra.store.store import Store
from tests.conftest import AUDITOR, OPERATOR, POSTGRES_URL, StoreFactory
from tests.infra.http.helpers import serving
from tests.infra.http.test_blackjack import act, dealt

# Box 1: 10, 2; the dealer: 6 up, the queen of diamonds in the hole; then 3, K.
SHOE = ["10H", "6S", "2H", "QD", "3H", "KC"]
HOLE = "QD"


def database_text(stores: StoreFactory) -> str:
    """Every row of every table the store keeps (events, receipts, read models), as
    text: what someone with the database's credentials can read."""
    if stores.backend == "sqlite":
        with sqlite3.connect(stores.url.removeprefix("sqlite:///")) as connection:
            names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            tables = [name for (name,) in names.fetchall()]
            rows = [row for name in tables for row in connection.execute(f'SELECT * FROM "{name}"')]
    else:
        with psycopg.connect(POSTGRES_URL) as connection:
            names = connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (stores.schema,),
            )
            tables = [name for (name,) in names.fetchall()]
            rows = [
                row
                for name in tables
                for row in connection.execute(f'SELECT * FROM {stores.schema}."{name}"')  # type: ignore[arg-type]
            ]
    assert len(tables) > 10 and rows
    return "\n".join(_text(value) for row in rows for value in row)


def _text(value: Any) -> str:
    if isinstance(value, bytes | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def test_no_row_of_the_database_holds_the_hole_card_of_a_round_in_play(
    store: Store, stores: StoreFactory
) -> None:
    # Given a round dealt from a shoe with the queen of diamonds in the hole,
    with serving(store) as api:
        api.player("alice", real="100.00")
        round_id = dealt(api, SHOE)["round_id"]
        assert act(api, round_id, 1, "hit").json()["status"] == "in_play"  # 15
        assert api.get(f"/v1/rounds/{round_id}/audit", OPERATOR).status_code == 200
    # then no table, read models and receipts included, has the card as a value: the
    # certification shoe and the seed that would give it are sealed (`"QD"` with its
    # quotes, which no sealed text, base64, can hold).
    text = database_text(stores)
    assert round_id in text and '"6S"' in text  # the round is there, its up card too
    assert f'"{HOLE}"' not in text


def test_a_round_in_play_plays_on_after_a_restart_and_turns_the_right_hole_card(
    stores: StoreFactory,
) -> None:
    # Given a round in play, and the server restarted (a new application, no cache),
    first = stores.open()
    with serving(first) as api:
        api.player("alice", real="100.00")
        round_id = dealt(api, SHOE)["round_id"]
    stores.close(first)
    again = stores.open()
    with serving(again) as api:
        # the round reads as it was, the hole card face down,
        shown = api.get(f"/v1/rounds/{round_id}").json()
        assert (shown["phase"], shown["dealer"]["cards"]) == ("players", ["6S"])
        assert shown["dealer"]["hole_card_hidden"] is True
        assert shown["legal_actions"]["actions"] == ["hit", "stand"]
        # and plays on: 12 stands, the dealer turns the queen over (16) and draws a 3.
        settled = act(api, round_id, 1, "stand").json()
    assert (settled["status"], settled["dealer"]["cards"]) == ("settled", ["6S", HOLE, "3H"])
    assert settled["net"]["player"] == "-10.00"
    assert verify(again, None, lambda _: None).problems == []


def test_once_over_the_trail_the_feed_the_export_and_verify_show_the_hole_card(
    store: Store,
) -> None:
    with serving(store) as api:
        api.player("alice", real="100.00")
        round_id = dealt(api, SHOE)["round_id"]
        while_in_play = api.get(f"/v1/rounds/{round_id}/audit", AUDITOR).json()["events"]
        assert act(api, round_id, 1, "stand").json()["status"] == "settled"
        trail = api.get(f"/v1/rounds/{round_id}/audit", AUDITOR).json()["events"]
        feed = api.get("/v1/events?limit=1000", OPERATOR).json()["events"]
    hidden = {"hole_card": None, "position": 3}
    shown = {"hole_card": HOLE, "position": 3}
    assert _data(while_in_play, round_id, "HoleCardDealt") == [hidden]
    assert _data(while_in_play, round_id, "HoleCardRevealed") == []
    # The trail and the feed show the card where it was dealt, as they did when it was
    # stored there, and the card turned over in the save that ended the round.
    for events in (trail, feed):
        assert _data(events, round_id, "HoleCardDealt") == [shown]
        assert _data(events, round_id, "HoleCardRevealed") == [shown]
    # The export gives each event as stored: the deal face down, the card turned over.
    records = list(Export(store, selection(None, None, None, None)).records())
    assert _data(records, round_id, "HoleCardDealt") == [hidden]
    assert _data(records, round_id, "HoleCardRevealed") == [shown]
    report = verify(store, round_id, lambda _: None)
    assert (report.problems, report.rounds) == ([], 1)


def _data(events: list[dict[str, Any]], round_id: str, kind: str) -> list[dict[str, Any]]:
    return [
        json.loads(json.dumps(e["data"]))
        for e in events
        if e["aggregate_id"] == round_id and e["type"] == kind
    ]
