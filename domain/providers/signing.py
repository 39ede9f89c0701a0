"""The signature of a provider's call (rules.md 10): HMAC-SHA256 of the exact body
bytes with one of the provider's secrets, hex, sent as `X-Casino-Signature:
sha256=<hex>`. Pure: the secrets are handed in."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

SCHEME = "sha256="
HEADER_LENGTH_MAX = len(SCHEME) + 64


def signature_of(secret: str, body: bytes) -> str:
    """What a provider sends for `body`: the header's value."""
    return SCHEME + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signed_by_one_of(secrets: Sequence[str], body: bytes, header: str | None) -> bool:
    """Whether `header` is the signature of `body` with one of `secrets` (two during a
    rotation). Every secret is compared, each in constant time, so the time taken says
    nothing of which matched or how much of the header was right."""
    if header is None or len(header) > HEADER_LENGTH_MAX:
        return False
    offered = header.strip().encode()
    found = False
    for secret in secrets:
        found |= hmac.compare_digest(signature_of(secret, body).encode(), offered)
    return found
