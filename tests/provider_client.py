"""A game provider as the casino sees one: it signs each call's exact bytes with its
secret and posts them to the seamless wallet (api.md, "Third-party games"). Used by
the conformance suite (tests/infra/http/test_providers.py) and the benchmark."""

from __future__ import annotations

import json
import uuid
from typing import Any

from domain.providers.signing import signature_of
from tests.conftest import OPERATOR, SERVICE

SECRET = "s3cr3t-of-at-least-32-characters-0001"
NEXT_SECRET = "s3cr3t-of-at-least-32-characters-0002"


def register(
    client: Any,
    provider_id: str = "acme",
    secrets: list[str] | None = None,
    bonus_allowed: bool = False,
) -> None:
    body = {"provider_id": provider_id, "name": provider_id.title(),
            "secrets": secrets or [SECRET], "bonus_allowed": bonus_allowed,
            "theoretical_rtp": "0.96"}  # fmt: skip
    headers = {**OPERATOR, "Idempotency-Key": uuid.uuid4().hex}
    answer = client.post("/v1/providers", json=body, headers=headers)
    assert answer.status_code == 201, answer.text


def open_session(client: Any, player_id: str, provider_id: str = "acme") -> str:
    body = {"provider_id": provider_id, "game_id": "starburst", "mode": "real"}
    headers = {**SERVICE, "Idempotency-Key": uuid.uuid4().hex}
    answer = client.post(f"/v1/players/{player_id}/game-sessions", json=body, headers=headers)
    assert answer.status_code == 201, answer.text
    token: str = answer.json()["token"]
    return token


class ProviderClient:
    """One provider's calls to the wallet, each signed with `secret`."""

    def __init__(self, client: Any, provider_id: str = "acme", secret: str = SECRET) -> None:
        self.client = client
        self.provider_id = provider_id
        self.secret = secret

    def call(self, name: str, body: dict[str, Any], signature: str | None = None) -> Any:
        raw = json.dumps(body).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Casino-Signature": signature or signature_of(self.secret, raw),
        }
        return self.client.post(
            f"/v1/wallet/{self.provider_id}/{name}", content=raw, headers=headers
        )

    def balance(self, token: str) -> Any:
        return self.call("balance", {"token": token})

    def bet(self, token: str, tx: str, round_id: str, amount: str) -> Any:
        body = {"token": token, "transaction_id": tx, "round_id": round_id,
                "game_id": "starburst", "amount": amount}  # fmt: skip
        return self.call("bet", body)

    def win(self, token: str, tx: str, round_id: str, amount: str) -> Any:
        body = {"token": token, "transaction_id": tx, "round_id": round_id, "amount": amount}
        return self.call("win", body)

    def rollback(self, token: str, tx: str, bet_tx: str) -> Any:
        body = {"token": token, "transaction_id": tx, "bet_transaction_id": bet_tx}
        return self.call("rollback", body)

    def end_round(self, token: str, round_id: str) -> Any:
        return self.call("end-round", {"token": token, "round_id": round_id})
