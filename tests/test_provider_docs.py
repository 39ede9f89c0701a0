"""docs/providers.md's worked signing example is what the casino computes."""

from __future__ import annotations

import re
from pathlib import Path

from domain.providers.signing import signature_of, signed_by_one_of

PAGE = Path(__file__).parents[1] / "docs" / "providers.md"


def test_the_worked_signing_example_is_the_signature_the_casino_checks() -> None:
    example = PAGE.read_text().split("<!-- signing-example -->", 1)[1]
    secret = re.search(r"- secret: `([^`]+)`", example)
    body = re.search(r"- body: `([^`]+)`", example)
    header = re.search(r"- header: `X-Casino-Signature: ([^`]+)`", example)
    assert secret and body and header, "docs/providers.md has lost its signing example"
    raw = body.group(1).encode()
    assert signature_of(secret.group(1), raw) == header.group(1)
    assert signed_by_one_of(["x" * 32, secret.group(1)], raw, header.group(1))
    assert not signed_by_one_of([secret.group(1)], raw + b" ", header.group(1))
