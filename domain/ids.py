"""Stable aggregate ids derived from the caller's names, so a lookup needs no index."""

from __future__ import annotations

import functools
import re
import uuid
from uuid import UUID, uuid5

from domain.errors import InvalidMode, InvalidPlayerId

# A fixed namespace: changing it would orphan every stored aggregate.
NAMESPACE = UUID("6f1d3c8e-2b0a-4f55-9a53-0c6b0d2a7e41")
MODES = ("real", "play")
PLAYER_ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_player_id(player_id: str) -> str:
    if not PLAYER_ID_PATTERN.fullmatch(player_id):
        raise InvalidPlayerId(
            f"player id {player_id[:80]!r} must be 1-64 letters, digits, '_' or '-'"
        )
    return player_id


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InvalidMode(f"mode {mode[:40]!r} is not one of: real, play")
    return mode


def player_account(player_id: str) -> str:
    """The ledger account of a player's wallet (one per mode; postings carry the mode)."""
    return f"player:{player_id}"


NAMED_IDS_KEPT_MAX = 20_000


@functools.lru_cache(maxsize=NAMED_IDS_KEPT_MAX)
def named_uuid(name: str) -> UUID:
    """uuid5 of a name, kept: a P2P command derives the same few players' and wallets'
    ids over and over, and uuid5 (a SHA-1 and a UUID) was 2% of it (py-spy). The same
    name always gives the same id, so keeping them changes nothing."""
    return uuid5(NAMESPACE, name)


def player_uuid(player_id: str) -> UUID:
    return named_uuid(f"player/{player_id}")


def wallet_uuid(player_id: str, mode: str) -> UUID:
    return named_uuid(f"wallet/{player_id}/{mode}")


def receipt_uuid(scoped_key: str) -> UUID:
    return uuid5(NAMESPACE, f"receipt/{scoped_key}")


def new_id() -> str:
    """A fresh transaction id. Drawn outside any event body: it is stored in the event
    and replayed as it is."""
    return str(uuid.uuid4())


def protection_uuid(player_id: str) -> UUID:
    return named_uuid(f"protection/{player_id}")
