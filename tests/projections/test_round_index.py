"""The round index (projections/round_index.py): one row per round of every game, in step
with the rounds themselves however the log is cut into batches, and rebuilt alike."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from benchmarks import workload
from domain.blackjack.round import BlackjackRound
from infra.audit.rebuild import compare_with_rebuild
from infra.store.store import Store
from projections import base, open_rounds, round_index
from tests.projections.test_read_models import every_notification, no_progress

SMALL_BATCH = 7  # Cuts rounds across batches: opened in one, moved on in the next.


def everything(store: Store, **filters: Any) -> list[dict[str, Any]]:
    with store.database.read() as cursor:
        return round_index.listed(cursor, limit=round_index.ROUNDS_MAX, **filters)


def opened_rounds(store: Store) -> list[tuple[int, str]]:
    """Every round's opening position and id, from the log itself."""
    found = []
    for notification in every_notification(store):
        event = store.app.mapper.to_domain_event(notification)
        if type(event).TOPIC in round_index.GAMES:
            found.append((notification.id, str(event.originator_id)))
    return found


def later() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)


def interrupted_and_voided(store: Store, cast: workload.Cast) -> None:
    """What the workload never does: a round voided, one interrupted, one resumed."""
    app = store.app
    idle = app.open_house_round(cast.players[0], "real").result
    assert idle is not None
    assert app.end_idle_round(idle.round_id, later()).result is True
    for player in cast.players[1:3]:
        round_ = app.open_blackjack_round(player, "play", "2", ["10", "6", "7", "9"]).result
        assert round_ is not None
        app.place_bet(round_.round_id, "1", 1000)
        app.deal(round_.round_id)
        app.disconnect(player)
    app.reconnect(cast.players[2])


@pytest.fixture
def played(store: Store) -> Store:
    cast = workload.set_up(store)
    workload.play(store, cast, rounds=50, seed=17)
    interrupted_and_voided(store, cast)
    store.projector.batch_size = SMALL_BATCH
    store.projector.catch_up()
    return store


def test_every_round_is_listed_once_in_the_order_it_opened(played: Store) -> None:
    listed = everything(played)
    assert [(e["position"], e["round_id"]) for e in listed] == opened_rounds(played)
    assert len(listed) > 30


def test_each_entry_says_what_the_round_itself_says(played: Store) -> None:
    statuses = set()
    for entry in everything(played):
        round_ = played.app.round(entry["round_id"])
        blackjack = isinstance(round_, BlackjackRound)
        roles = {"player": round_.player_id}
        if not blackjack and round_.banker_id is not None:  # a P2P round's dealer banks it
            roles["dealer"] = round_.banker_id
        assert (entry["game"], entry["variant"], entry["mode"], entry["status"]) == (
            "blackjack" if blackjack else "baccarat",
            round_.hall if blackjack else round_.variant,
            round_.mode,
            round_.status,
        )
        assert entry["table_id"] == (None if blackjack else round_.table_id)
        assert {p["role"]: p["player_id"] for p in entry["players"]} == roles
        assert entry["started_at"] == round_.created_on.isoformat()
        over = round_.status in ("settled", "voided")
        assert entry["ended_at"] == (round_.modified_on.isoformat() if over else None)
        statuses.add(entry["status"])
    assert statuses == {"open", "in_play", "interrupted", "settled", "voided"}


def test_cut_into_small_batches_it_equals_a_rebuild_in_large_ones(played: Store) -> None:
    assert compare_with_rebuild(played, no_progress).differences == []


def test_pages_after_a_position_run_through_the_whole_index(played: Store) -> None:
    pages, after = [], 0
    with played.database.read() as cursor:
        while page := round_index.listed(cursor, after=after, limit=10):
            pages.append(page)
            after = page[-1]["position"]
    assert [e for page in pages for e in page] == everything(played)
    assert all(len(page) == 10 for page in pages[:-1])


def test_a_player_finds_the_rounds_they_played_or_dealt(played: Store) -> None:
    every = everything(played)
    for player in ("p0", "d1", "q1"):
        mine = [e for e in every if player in [p["player_id"] for p in e["players"]]]
        assert everything(played, player_id=player) == mine
        assert mine
    assert everything(played, player_id="nobody") == []


def test_a_time_range_takes_the_rounds_begun_within_it(played: Store) -> None:
    every = everything(played)
    middle = every[len(every) // 2]
    since, before = middle["started_at"], every[-5]["started_at"]
    expected = [e for e in every if since <= e["started_at"] < before]
    assert everything(played, since=since, before=before) == expected
    assert expected[0] == middle
    assert every[-5] not in expected


def test_one_round_can_be_asked_for_by_its_id(played: Store) -> None:
    entry = everything(played)[3]
    assert everything(played, round_id=entry["round_id"]) == [entry]
    assert everything(played, round_id="no-such-round") == []


def test_rounds_ended_in_a_later_batch_are_ended_in_every_read_model_however_many(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rounds opened in one batch and ended in the next: their index rows take the end,
    their open rows go, and the ones still open keep their last action. The changes
    go a few rows per statement (here three), so seven rounds span several."""
    monkeypatch.setattr(base, "ROWS_PER_STATEMENT", 3)
    app = store.app
    app.register_player("ann", "Ann")
    app.deposit("ann", "real", 100_000)
    opened = []
    for _ in range(8):
        round_ = app.open_house_round("ann", "real").result
        assert round_ is not None
        opened.append(round_.round_id)
    store.projector.catch_up()
    between = datetime.datetime.now(datetime.UTC).isoformat()
    for round_id in opened[:7]:
        app.place_bet(round_id, "banker", 100)
        app.deal(round_id)
    app.place_bet(opened[7], "player", 100)  # its last action, after `between`
    store.projector.catch_up()
    listed = {entry["round_id"]: entry for entry in everything(store)}
    assert {listed[r]["status"] for r in opened[:7]} == {"settled"}
    assert all(listed[r]["ended_at"] for r in opened[:7])
    assert listed[opened[7]]["status"] == "open" and listed[opened[7]]["ended_at"] is None
    with store.database.read() as cursor:
        assert open_rounds.idle_since(cursor, later().isoformat()) == [opened[7]]
        assert open_rounds.idle_since(cursor, between) == []
        assert open_rounds.of_player(cursor, "ann") == [opened[7]]
    assert compare_with_rebuild(store, no_progress).differences == []
