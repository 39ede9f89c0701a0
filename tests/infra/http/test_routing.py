"""No two routes match one path, so the order the routers are included in (busiest
first, infra/http/app.py) decides no request's route."""

from __future__ import annotations

import itertools
from pathlib import Path

from fastapi.routing import iter_route_contexts

from infra.config import load_settings
from infra.http.app import create_app
from tests.conftest import StoreFactory


def could_both_match(template: str, other: str) -> bool:
    """Whether one concrete path fits both templates: segment by segment, a
    `{parameter}` (one segment, as Starlette matches it) fits anything, a literal
    only itself."""
    ours, theirs = template.strip("/").split("/"), other.strip("/").split("/")
    return len(ours) == len(theirs) and all(
        a == b or a.startswith("{") or b.startswith("{") for a, b in zip(ours, theirs, strict=True)
    )


def test_two_templates_sharing_a_literal_where_one_has_a_parameter_both_match() -> None:
    assert could_both_match("/v1/rounds/{round_id}", "/v1/rounds/index")
    assert not could_both_match("/v1/rounds/{round_id}", "/v1/rounds/{round_id}/deal")
    assert not could_both_match("/v1/players/{player_id}", "/v1/tables/{table_id}")


def test_no_path_matches_two_routes(tmp_path: Path) -> None:
    stores = StoreFactory("sqlite", tmp_path)
    try:
        app = create_app(stores.open(), load_settings(), background=False)
        formats = {context.path_format for context in iter_route_contexts(app.routes)}
        templates = sorted(f for f in formats if f is not None)
    finally:
        stores.close_all()
    assert len(templates) >= 30
    clashes = [pair for pair in itertools.combinations(templates, 2) if could_both_match(*pair)]
    assert clashes == []
