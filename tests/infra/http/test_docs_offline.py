"""/docs and /redoc render on a machine without internet: loaded in headless Chromium
(Debian's, which `make test` installs), they show the operations of the document,
and the pages name no asset outside the server."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from infra.config import load_settings
from infra.http.app import create_app
from tests.conftest import StoreFactory

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# As python-svc.md says: without the background-networking flags Chromium keeps trying
# hosts this closed network refuses.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
RENDER_BUDGET_MS = 15_000


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
        pytest.skip("no chromium here (`make test` installs it)")
    stores = StoreFactory("sqlite", tmp_path_factory.mktemp("docs"))
    app = create_app(stores.open(), load_settings(), background=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    stores.close_all()


def rendered(url: str, profile: Path) -> str:
    """The page's DOM once its scripts have run, as Chromium dumps it."""
    result = subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={RENDER_BUDGET_MS}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def assets_of(html: str) -> list[str]:
    return re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_page_names_no_asset_outside_the_server(base_url: str, page: str) -> None:
    html = httpx.get(base_url + page).text
    assets = assets_of(html)
    assert assets, html
    assert all(asset.startswith("/") and not asset.startswith("//") for asset in assets), assets
    for asset in assets:
        assert httpx.get(base_url + asset).status_code == 200, asset


def test_swagger_ui_renders_every_operation_offline(base_url: str, tmp_path: Path) -> None:
    dom = rendered(base_url + "/docs", tmp_path / "profile")
    paths = set(re.findall(r'data-path="([^"]+)"', dom))
    document = httpx.get(base_url + "/openapi.json").json()
    assert paths == set(document["paths"]), set(document["paths"]) ^ paths
    assert dom.count('class="opblock opblock-post') >= 15
    assert "Casino accounting" in dom


def test_redoc_renders_the_operations_offline(base_url: str, tmp_path: Path) -> None:
    dom = rendered(base_url + "/redoc", tmp_path / "profile")
    assert "/v1/players/{player_id}/withdrawals" in dom
    assert "insufficient_funds" in dom  # the codes a status carries are in the page
    assert "Casino accounting" in dom
