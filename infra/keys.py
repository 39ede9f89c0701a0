"""The seal key the server signs with (CASINO_SEAL_KEY), and the development stand-in.

Production refuses to start without one. In development a key is made once under
`var/` and kept there, with a warning at every start: a key beside the database
seals nothing against whoever can read both.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from infra.config import ConfigError, Settings
from infra.logs import get_logger
from infra.store.seal import (
    new_private_key,
    parse_private_key,
    private_key_text,
    public_key_text,
)

DEV_SEAL_KEY_PATH = Path("var/seal.key")
log = get_logger("casino.keys")


def seal_key_for(settings: Settings, dev_path: Path = DEV_SEAL_KEY_PATH) -> Ed25519PrivateKey:
    """The configured seal key; in development, the one under var/ (made if missing)."""
    if settings.seal_key.strip():
        return parse_private_key(settings.seal_key)
    if settings.env == "production":
        raise ConfigError(
            "CASINO_SEAL_KEY: production refuses to start without the seal key "
            "(make one with `casino keys new`; keep it out of the database's reach)"
        )
    key = _dev_key(dev_path)
    log.warning(
        "dev_seal_key_in_use",
        path=str(dev_path),
        public_key=public_key_text(key.public_key()),
        detail="no CASINO_SEAL_KEY configured: saves are sealed with a development key kept "
        "beside the store, which proves nothing against whoever can read both. Never run "
        "like this with real money.",
    )
    return key


def _dev_key(path: Path) -> Ed25519PrivateKey:
    if path.is_file():
        return parse_private_key(path.read_text())
    key = new_private_key()
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(private_key_text(key) + "\n")
    return key
