"""The event feed on JetStream, as a consumer of the stream sees it: every sealed event
once, in log order, as GET /v1/events shows it (an open round's secrets withheld),
across restarts of the relay and of the NATS server, and nothing past the last seal."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from domain.rounds import SECRET_FIELDS
from infra.config import ConfigError, load_settings
from infra.feed import relay as relays
from infra.feed.relay import FeedRelay
from infra.feed.stream import FeedUnavailable
from infra.feed.target import parse_feed
from infra.http.routes.events import read_page
from infra.store.store import Store
from tests.conftest import StoreFactory, eventually
from tests.infra.audit.test_seals import forge_deposit_at_tail
from tests.infra.audit.test_verify import PLAYER_WINS, Attacker, play_some_rounds
from tests.infra.feed.nats_server import RELAY_PASSWORD, STREAM, Message, NatsServer
from tests.infra.http.helpers import serving

EVERYTHING = 1_000_000


def the_log(store: Store) -> list[dict[str, Any]]:
    """What GET /v1/events shows of the whole log."""
    return read_page(store.app, 0, EVERYTHING)[0]


def assert_the_stream_is_the_log(
    messages: list[Message], log: list[dict[str, Any]], *, live: bool = False
) -> None:
    """Each event once, in order, as the API shows it, its position its message id.
    `live`: relayed while rounds were played, so a round over now may have been open
    when its first events were published, its secrets withheld there."""
    shown = without_secrets if live else dict
    assert [shown(m.event) for m in messages] == [shown(e) for e in log]
    assert [m.msg_id for m in messages] == [str(e["position"]) for e in log]
    assert [m.sequence for m in messages] == list(range(1, len(log) + 1))


def without_secrets(event: dict[str, Any]) -> dict[str, Any]:
    data = {k: v for k, v in event["data"].items() if k not in SECRET_FIELDS}
    return {**event, "data": data}


@contextmanager
def relay(store: Store, nats_server: NatsServer) -> Iterator[FeedRelay]:
    """A relay whose passes the test runs itself (`tick`), in its own thread."""
    worker = FeedRelay(store, parse_feed(nats_server.feed()))
    try:
        yield worker
    finally:
        worker.close()


def catch_up(worker: FeedRelay) -> None:
    for _ in range(100):
        worker.tick()
        if worker.lag == 0:
            return
    raise AssertionError(f"still {worker.lag} behind")


def secrets_of(messages: list[Message], round_id: str) -> list[Any]:
    return [
        value
        for message in messages
        if message.event["aggregate_id"] == round_id
        for name, value in message.event["data"].items()
        if name in SECRET_FIELDS
    ]


def open_round(store: Store) -> str:
    """A house round of olga's with a bet on it, not dealt: its seed still secret."""
    store.app.register_player("olga", "Olga")
    store.app.deposit("olga", "real", 10_000)
    opened = store.app.open_house_round("olga", "real", PLAYER_WINS).result
    assert opened is not None
    store.app.place_bet(opened.round_id, "player", 1000)
    return str(opened.round_id)


def test_a_consumer_sees_every_sealed_event_once_in_order_as_the_api_shows_it(
    stores: StoreFactory, nats_server: NatsServer
) -> None:
    # Given a log of settled, voided and open rounds
    store = stores.open()
    settled = play_some_rounds(store)
    still_open = open_round(store)
    # When the relay catches up
    with relay(store, nats_server) as worker:
        catch_up(worker)
        published = worker.published
    # Then the stream is the log, as GET /v1/events shows it, each event once
    messages = nats_server.messages()
    assert_the_stream_is_the_log(messages, the_log(store))
    assert published == len(messages)
    # And an open round's secrets read null there, as in the API; an ended one's not
    assert secrets_of(messages, still_open) and not any(secrets_of(messages, still_open))
    assert any(secrets_of(messages, settled))


def test_events_published_while_a_round_was_open_keep_its_secrets_withheld(
    stores: StoreFactory, nats_server: NatsServer
) -> None:
    # Given an open round's events on the stream
    store = stores.open()
    round_id = open_round(store)
    with relay(store, nats_server) as worker:
        catch_up(worker)
        # When the round is dealt and over, and the relay catches up again
        store.app.deal(round_id)
        catch_up(worker)
    # Then what was published with the secrets null stays so; the round's last
    # events, published once it was over, carry its seed
    messages = nats_server.messages()
    seeds = [
        m.event["data"].get("seed", "-") for m in messages if m.event["aggregate_id"] == round_id
    ]
    revealed = [seed for seed in seeds if seed not in (None, "-")]
    assert None in seeds[: seeds.index(revealed[0])] and revealed
    assert [m.event for m in messages][-1] == the_log(store)[-1]


def test_a_relay_restarted_midway_publishes_nothing_twice_and_misses_nothing(
    stores: StoreFactory, nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a relay that published one page of three events, then stopped
    store = stores.open()
    play_some_rounds(store)
    monkeypatch.setattr(relays, "PAGE_EVENTS", 3)
    monkeypatch.setattr(relays, "PASS_SECONDS", 0.0)
    with relay(store, nats_server) as first:
        first.tick()
    assert len(nats_server.messages()) == 3
    # When another starts afresh (it knows nothing but what the stream holds)
    with relay(store, nats_server) as second:
        catch_up(second)
        # Then it published the rest, and nothing twice
        assert second.published == len(the_log(store)) - 3
    assert_the_stream_is_the_log(nats_server.messages(), the_log(store))


def test_two_servers_relaying_at_once_publish_each_event_once(
    stores: StoreFactory, nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two relays, as `casino serve --workers 2` runs, while the log grows
    monkeypatch.setattr(relays, "PAGE_EVENTS", 2)
    store = stores.open()
    workers = [FeedRelay(store, parse_feed(nats_server.feed())) for _ in range(2)]
    for worker in workers:
        worker.start()
    try:
        play_some_rounds(store)
        # Then, both caught up, the stream is the log: each event once, in order
        log = the_log(store)
        eventually(nats_server.messages, lambda found: len(found) >= len(log), seconds=20)
        eventually(lambda: [w.lag for w in workers], lambda lags: lags == [0, 0])
    finally:
        for worker in workers:
            worker.stop()
    assert_the_stream_is_the_log(nats_server.messages(), log, live=True)
    assert sum(w.published for w in workers) == len(log)


def test_nothing_past_the_last_seal_is_published(
    stores: StoreFactory, nats_server: NatsServer
) -> None:
    # Given a deposit forged at the tail of the log, in no seal
    store = stores.open()
    attacker = Attacker(stores)
    try:
        forged = forge_deposit_at_tail(store, stores, attacker)
    finally:
        attacker.close()
    # When the relay catches up
    with relay(store, nats_server) as worker:
        catch_up(worker)
    # Then the stream ends with the last sealed event
    positions = [m.event["position"] for m in nats_server.messages()]
    assert positions == [e["position"] for e in the_log(store) if e["position"] < forged]


def test_the_relay_catches_up_after_the_nats_server_is_stopped_and_started_again(
    stores: StoreFactory, nats_server: NatsServer
) -> None:
    store = stores.open()
    with serving(store, background=True, feed=nats_server.feed()) as api:
        # Given a server relaying its log
        api.player("alice", real="25.00")
        eventually(nats_server.messages, lambda found: len(found) == len(the_log(store)))
        assert feed_check(api)["ok"] and metric(api, "casino_feed_lag") == 0, feed_check(api)
        # When the NATS server stops while the log goes on
        nats_server.stop()
        api.player("bob", real="5.00")
        # (a request under way when it stopped fails at its timeout: ACK_SECONDS)
        down = eventually(lambda: feed_check(api), lambda check: not check["ok"], seconds=15)
        # Then readiness lists the feed as failing, inside a 200, and /metrics the lag
        assert not down["ok"] and "nats://relay:***@127.0.0.1" in down["detail"], down
        assert "relay-password" not in down["detail"]
        assert api.client.get("/v1/health/ready").status_code == 200
        assert metric(api, "casino_feed_lag") > 0
        # And once NATS is back, the relay catches up where it stopped
        nats_server.start()
        up = eventually(lambda: feed_check(api), lambda check: check["ok"], seconds=15)
        assert up["ok"] and metric(api, "casino_feed_lag") == 0, up
        assert_the_stream_is_the_log(nats_server.messages(), the_log(store))
        assert metric(api, "casino_feed_published_total") == len(the_log(store))


def feed_check(api: Any) -> dict[str, Any]:
    checks = api.client.get("/v1/health/ready").json()["checks"]
    found: dict[str, Any] = next(check for check in checks if check["name"] == "feed")
    return found


def metric(api: Any, name: str) -> float:
    lines = api.client.get("/metrics").text.splitlines()
    return float(next(line for line in lines if line.startswith(name + " ")).split()[1])


@pytest.mark.parametrize(
    ("stream", "password", "why"),
    [("ELSEWHERE", RELAY_PASSWORD, "permissions violation"),
     (STREAM, "wrong", "Authorization Violation")],
)  # fmt: skip
def test_a_stream_not_permitted_or_a_wrong_password_fails_the_feed_check(
    store: Store, nats_server: NatsServer, stream: str, password: str, why: str
) -> None:
    # Given a relay whose stream its user may not use, or whose password is wrong
    worker = FeedRelay(store, parse_feed(nats_server.feed(password, stream)))
    # Then its pass fails, saying why, and so does the relay running on
    with pytest.raises(FeedUnavailable, match=why):
        worker.tick()
    worker.close()
    worker.start()
    try:
        ok, detail = eventually(worker.health, lambda health: why in health[1])
        assert not ok and why in detail, detail
        assert "wrong@" not in detail and RELAY_PASSWORD not in detail
    finally:
        worker.stop()


@pytest.mark.parametrize(
    "feed",
    ["http://u:p@host:4222/S", "nats://host:4222/S", "nats://u:p@host:4222/", "nats://u:p@host/S",
     "nats://u:p@host:4222/A.B", "nats://u:p@host:4222/S?x=1"],
)  # fmt: skip
def test_a_bad_casino_feed_stops_start_up_naming_it(feed: str) -> None:
    with pytest.raises(ConfigError, match="CASINO_FEED") as refused:
        load_settings(feed=feed)
    assert ":p@" not in str(refused.value)


def test_the_feed_is_off_unless_set() -> None:
    assert load_settings().feed == ""
    assert relays.feed_relays(Any, "") == []  # type: ignore[arg-type]
    assert parse_feed("nats://u:p@host:4222/S").subject == "casino.events.S"
