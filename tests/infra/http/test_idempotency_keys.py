"""Idempotency-Key from a hostile client, through the real HTTP app on both stores:
keys at the limits, keys that are not plain ASCII, the same key sent at once, and
a command that succeeds saving no event (its receipt goes to the log as an event)."""

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from infra.audit.verify import verify
from infra.store.store import Store
from tests.conftest import SEAL_KEY, SERVICE, Api


@pytest.fixture
def alice(api: Api) -> str:
    return api.player("alice", real="100.00")


def sent(api: Api, path: str, key: bytes, body: Any = None) -> Any:
    """A POST whose key is given as the header's bytes."""
    return api.client.post(path, json=body, headers={**SERVICE, "Idempotency-Key": key})


def clean(store: Store) -> bool:
    return verify(store, None, lambda _: None, public_key=SEAL_KEY.public_key()).problems == []


def test_a_disconnect_that_saves_no_event_keeps_its_answer_and_its_key(
    api: Api, store: Store, alice: str
) -> None:
    # A player in no round: the disconnect changes nothing, yet it answers once per key.
    first = api.post("/v1/players/alice/disconnect", key="quiet-1")
    again = api.post("/v1/players/alice/disconnect", key="quiet-1")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    reused = api.post(
        "/v1/players/alice/deposits", {"mode": "real", "amount": "5.00"}, key="quiet-1"
    )
    assert (reused.status_code, reused.json()["code"]) == (422, "idempotency_key_reused")
    assert api.wallet("alice")["balance"] == "100.00"
    assert clean(store)


def test_a_key_at_the_length_limit_answers_once_and_one_past_it_is_refused(
    api: Api, store: Store, alice: str
) -> None:
    body = {"mode": "real", "amount": "5.00"}
    longest = "k" * 128
    assert api.post("/v1/players/alice/deposits", body, key=longest).status_code == 201
    again = api.post("/v1/players/alice/deposits", body, key=longest)
    assert again.headers["Idempotent-Replayed"] == "true"
    refused = api.post("/v1/players/alice/deposits", body, key="k" * 129)
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid_idempotency_key")
    assert api.wallet("alice")["balance"] == "105.00"
    assert clean(store)


@pytest.mark.parametrize("key", ["é|ü".encode(), b"a|b|c", "ÿ".encode() * 32])
def test_a_key_of_any_printable_bytes_answers_once_and_verify_holds(
    api: Api, store: Store, alice: str, key: bytes
) -> None:
    # Header bytes are read as Latin-1; a "|" is the receipt line's separator.
    path, body = "/v1/players/alice/deposits", {"mode": "real", "amount": "5.00"}
    first = sent(api, path, key, body)
    assert first.status_code == 201, first.text
    assert sent(api, path, key, body).headers["Idempotent-Replayed"] == "true"
    assert api.wallet("alice")["balance"] == "105.00"
    assert clean(store)


def test_a_key_whose_bytes_read_as_a_control_character_is_refused(api: Api, alice: str) -> None:
    # "ключ" in UTF-8 holds 0x87, a C1 control character when read as Latin-1 (api.md).
    refused = sent(
        api, "/v1/players/alice/deposits", "ключ".encode(), {"mode": "real", "amount": "5.00"}
    )
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid_idempotency_key")
    assert api.wallet("alice")["balance"] == "100.00"


def test_one_key_sent_at_once_with_one_body_and_with_others_applies_once(
    api: Api, store: Store, alice: str
) -> None:
    def send(amount: int) -> Any:
        body = {"mode": "real", "amount": f"{amount}.00"}
        return api.post("/v1/players/alice/deposits", body, key="raced")

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(send, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]))
    applied = [
        a for a in answers if a.status_code == 201 and "Idempotent-Replayed" not in a.headers
    ]
    assert len(applied) == 1
    first = applied[0].json()
    for answer in answers:
        if answer.status_code == 201:
            assert answer.json() == first  # a replay of the one that landed
        else:
            assert (answer.status_code, answer.json()["code"]) == (422, "idempotency_key_reused")
    assert api.wallet("alice")["balance"] == first["wallet"]["balance"]
    assert clean(store)


def test_an_answer_of_unusual_json_is_replayed_byte_for_byte(api: Api, store: Store) -> None:
    # Non-ASCII, astral, quotes and backslashes, stored as UTF-8 JSON in the receipt.
    body = {"player_id": "zoe", "display_name": 'Zoë 🂡 "the \\ dealer" 名前'}
    first = api.post("/v1/players", body, key="unusual")
    again = api.post("/v1/players", body, key="unusual")
    assert first.status_code == again.status_code == 201, first.text
    assert again.content == first.content and again.json()["display_name"] == body["display_name"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert clean(store)


def test_a_put_without_a_key_is_applied_and_a_post_without_one_is_refused(
    api: Api, store: Store, alice: str
) -> None:
    body = {"mode": "real", "deposit": {"day": "50.00"}}
    put = api.client.put("/v1/players/alice/limits", json=body, headers=SERVICE)
    assert put.status_code == 200, put.text
    assert put.json()["limits"]["deposit"]["day"] == "50.00"
    again = api.client.put("/v1/players/alice/limits", json=body, headers=SERVICE)
    assert again.json()["limits"] == put.json()["limits"]  # the same state, set again
    posted = api.client.post(
        "/v1/players/alice/deposits", json={"mode": "real", "amount": "5.00"}, headers=SERVICE
    )
    assert (posted.status_code, posted.json()["code"]) == (400, "idempotency_key_missing")
    assert api.wallet("alice")["balance"] == "100.00"
    assert clean(store)


def test_a_put_with_a_key_is_replayed_and_a_reused_key_is_refused(api: Api, alice: str) -> None:
    def put(day: str) -> Any:
        body = {"deposit": {"day": day}}
        headers = {**SERVICE, "Idempotency-Key": "limits-1"}
        return api.client.put("/v1/players/alice/limits", json=body, headers=headers)

    assert put("50.00").status_code == 200
    assert put("50.00").headers["Idempotent-Replayed"] == "true"
    reused = put("40.00")
    assert (reused.status_code, reused.json()["code"]) == (422, "idempotency_key_reused")


@pytest.mark.parametrize(
    "key, accepted",
    [
        (b"plain-key", True),
        (b"with space", True),
        ("é".encode("latin-1") * 3, True),
        (b"\xa0", False),  # no-break space: not printable
        (b"\xad", False),  # soft hyphen: a format character
        (b"\x7f", False),
        (b"k" * 129, False),
    ],
)
def test_the_published_key_pattern_is_the_one_enforced(
    api: Api, alice: str, key: bytes, accepted: bool
) -> None:
    document = api.client.get("/openapi.json").json()
    deposit = document["paths"]["/v1/players/{player_id}/deposits"]["post"]
    published = next(p for p in deposit["parameters"] if p["name"] == "Idempotency-Key")
    pattern = published["schema"]["pattern"]
    answer = sent(api, "/v1/players/alice/deposits", key, {"mode": "real", "amount": "1.00"})
    assert (re.fullmatch(pattern, key.decode("latin-1")) is not None) == accepted
    assert (answer.status_code == 201) == accepted, answer.text
