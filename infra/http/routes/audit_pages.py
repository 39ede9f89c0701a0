"""The auditor's pages (api.md, Auditor's pages): a round card by card, checked in the
browser against its revealed seed, and an index of rounds.

The pages are static shells holding no data, so they are served without a key; the
key is typed into the page (or given in the URL fragment, which never reaches the
server) and sent only to the JSON routes the page reads. Every asset comes from the
package itself: the Content-Security-Policy admits no other origin and no inline
script or style.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from infra.http.problems import Problem

router = APIRouter(tags=["auditor's pages"])
ASSET_PACKAGE, ASSET_FOLDER = "infra.http", "static/audit"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
ROUND_ID_LENGTH_MAX = 64
ASSET_NAME_LENGTH_MAX = 64
POLICY = (
    "default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": POLICY,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    # Assets are not fingerprinted: the browser keeps them but asks each time (ETag).
    "Cache-Control": "no-cache",
}


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


@functools.cache
def assets() -> dict[str, Asset]:
    """Every file of the asset folder, read once: nothing else can be asked for."""
    found = {}
    for entry in resources.files(ASSET_PACKAGE).joinpath(ASSET_FOLDER).iterdir():
        suffix = "." + entry.name.rsplit(".", 1)[-1]
        if entry.is_file() and suffix in CONTENT_TYPES:
            body = entry.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            found[entry.name] = Asset(body, CONTENT_TYPES[suffix], etag)
    return found


# The pages' routes are async: they answer from memory (the assets, read once when the
# app is made), so nothing blocks the event loop and no thread-pool hop is needed.
def _serve(name: str, request: Request) -> Response:
    asset = assets().get(name)
    if asset is None:
        raise Problem(404, "not_found", f"no asset {name[:ASSET_NAME_LENGTH_MAX]}")
    headers = {**SECURITY_HEADERS, "ETag": asset.etag}
    if request.headers.get("if-none-match") == asset.etag:
        return Response(status_code=304, headers=headers)
    return Response(asset.body, media_type=asset.content_type, headers=headers)


# How the document describes a page: HTML, or nothing new since the ETag it was sent.
PAGE: dict[int | str, dict[str, Any]] = {
    200: {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}},
    304: {"description": "not modified since the ETag given in If-None-Match"},
}


@router.get("/audit/rounds", response_class=Response, responses=PAGE)
async def round_index_page(request: Request) -> Response:
    """An HTML index of rounds (`?player_id=&from=&to=`), each linking to its page."""
    return _serve("index.html", request)


@router.get("/audit/rounds/{round_id}", response_class=Response, responses=PAGE)
async def round_page(
    request: Request, round_id: str = Path(max_length=ROUND_ID_LENGTH_MAX)
) -> Response:
    """An HTML page: the round card by card, its money, and its seed checked in the browser."""
    return _serve("round.html", request)


@router.get("/audit/assets/{name}", response_class=Response, include_in_schema=False)
async def asset(request: Request, name: str = Path(max_length=ASSET_NAME_LENGTH_MAX)) -> Response:
    return _serve(name, request)
