"""Every writer of a sealed log seals (rules.md 5): an unsealed save by our own code
is refused before anything is written, so a fault of ours can never leave the log
looking tampered with. On both stores."""

from __future__ import annotations

import pytest

from infra.config import load_settings
from infra.store.head_check import head_problem
from infra.store.seal import UnsealedWrite
from infra.store.store import open_store
from tests.conftest import StoreFactory


def test_a_store_that_seals_nothing_cannot_add_to_a_sealed_log(stores: StoreFactory) -> None:
    # Given a sealed log
    sealed = stores.open()
    sealed.app.register_player("ann", "Ann")
    top = sealed.app.recorder.max_notification_id()
    # When a store without the seal key tries to save on it
    unsealed = open_store(stores.url, postgres_schema=stores.schema, pool_size=2)
    stores.opened.append(unsealed)
    with pytest.raises(UnsealedWrite, match="an unsealed save on a sealed log"):
        unsealed.app.register_player("bob", "Bob")
    # Then nothing was written, and the log is as the service left it
    assert sealed.app.recorder.max_notification_id() == top
    assert head_problem(sealed) is None
    sealed.app.deposit("ann", "real", 100)  # and the sealed writer goes on


def test_a_store_opened_to_read_saves_nothing(stores: StoreFactory) -> None:
    stores.open().app.register_player("ann", "Ann")
    reader = open_store(
        stores.url, postgres_schema=stores.schema, pool_size=2, opened_elsewhere=True
    )
    stores.opened.append(reader)
    with pytest.raises(UnsealedWrite, match="opened only to read"):
        reader.app.deposit("ann", "real", 100)


def test_the_projector_process_seals_what_it_records(
    stores: StoreFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    # `casino projections run` records its failures as significant events: sealed
    from infra.cli.store import open_configured_store

    monkeypatch.chdir(str(tmp_path))  # its development seal key goes under ./var
    settings = load_settings(database_url=stores.url, postgres_schema=stores.schema)
    serving = open_configured_store(settings, sealed=True, name="casino-serve")
    serving.app.register_player("ann", "Ann")
    projector = open_configured_store(
        settings, existing=True, sealed=True, name="casino-projections"
    )
    stores.opened += [serving, projector]
    projector.app.record_significant("projector_failed", {"error": "the connection was lost"})
    assert head_problem(serving) is None
    serving.app.deposit("ann", "real", 100)  # the server saves on top of it
