"""The key that seals a round's seed and certification shoe until the round is over
(rules.md 5), and the box the application seals them with.

AES-256-GCM from `cryptography`: a sealed text is `aesgcm1:` then URL-safe base64 of
a fresh 12-byte nonce, the ciphertext and its 16-byte tag. The round's public
commitment is the associated data, so a sealed seed moved onto another round does not
open. The key is `CASINO_SECRET_KEY` (64 hexadecimal characters); production refuses
to start without it, development makes one under `var/` and says so loudly.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

PREFIX = "aesgcm1:"
NONCE_BYTES = 12
KEY_BYTES = 32
DEV_KEY_FILE = Path("var/secret.key")
# The text a sealed secret may have at most: a seed and a 416-card shoe fit many times.
SEALED_LENGTH_MAX = 16_384


class SecretKeyError(Exception):
    """The secret key is missing or cannot open what was sealed; the message says which."""


class SecretUnopened(SecretKeyError):
    """A sealed secret this server's key does not open: the server runs with another
    CASINO_SECRET_KEY than the one that sealed it (a configuration fault, answered 503
    secret_key_mismatch; or the sealed text was changed, which the log's seals name)."""


class AesGcmBox:
    """Seals with one AES-256-GCM key; opens only what that key sealed for that context."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise SecretKeyError(f"CASINO_SECRET_KEY: a key is {KEY_BYTES} bytes")
        self._aead = AESGCM(key)
        # Whether a round's seed may be in clear: set by a store that seals, to ask
        # whether the round predates its seals (infra/store/sealed_reads.py).
        self.predates_seals: Callable[[UUID], bool] = lambda _: True

    def clear_allowed(self, aggregate_id: UUID) -> bool:
        return self.predates_seals(aggregate_id)

    def seal(self, clear: bytes, context: str) -> str:
        nonce = os.urandom(NONCE_BYTES)  # never reused: 96 random bits per seal
        sealed = self._aead.encrypt(nonce, clear, context.encode())
        return PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode()

    def open(self, sealed: str, context: str) -> bytes:
        if not sealed.startswith(PREFIX) or len(sealed) > SEALED_LENGTH_MAX:
            raise SecretUnopened("not a secret this service sealed")
        raw = base64.urlsafe_b64decode(sealed.removeprefix(PREFIX))
        try:
            return self._aead.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], context.encode())
        except InvalidTag:
            raise SecretUnopened(
                "CASINO_SECRET_KEY does not open a secret the service sealed (a round's "
                "seed, a provider's secrets, a game session's token in a receipt): it is not "
                "the key it was sealed with"
            ) from None


def new_key() -> str:
    """A fresh key, as CASINO_SECRET_KEY takes it."""
    return secrets.token_hex(KEY_BYTES)


def parse_key(text: str) -> bytes:
    """A key from its 64 hexadecimal characters, or SecretKeyError naming the setting."""
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise SecretKeyError(f"CASINO_SECRET_KEY: must be {2 * KEY_BYTES} hexadecimal characters")
    return key


def development_key(path: Path = DEV_KEY_FILE) -> tuple[bytes, bool]:
    """The development key kept in `path`, made on first use; True when just made."""
    if path.is_file():
        return parse_key(path.read_text()), False
    path.parent.mkdir(parents=True, exist_ok=True)
    text = new_key()
    # Created readable by its owner only, and never overwritten (O_EXCL).
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(text + "\n")
    return parse_key(text), True
