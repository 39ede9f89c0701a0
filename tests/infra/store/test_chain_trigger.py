"""The events' chain on PostgreSQL (infra/store/schema.py: chain_events): one trigger
run per INSERT chains all its rows, with the links the row trigger of earlier stores
made, and a store made with that row trigger gets the new one at start-up, one chain
across the change."""

from __future__ import annotations

import pytest

from infra.store import chain as event_chain
from infra.store.schema import POSTGRES_EVENTS_TABLE
from tests.conftest import StoreFactory
from tests.infra.audit.test_seals import problems_of

# The trigger every PostgreSQL store had before chain_events: one run per row.
ROW_TRIGGER = """
CREATE OR REPLACE FUNCTION {schema}.chain_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    head record;
    previous text := '{genesis}';
BEGIN
    SELECT position, link INTO head FROM {schema}.{chain} ORDER BY position DESC LIMIT 1;
    IF FOUND THEN
        IF head.position >= NEW.notification_id THEN
            RAISE EXCEPTION 'the event chain already reaches position %, past the new event at %',
                head.position, NEW.notification_id USING ERRCODE = 'data_exception';
        END IF;
        previous := head.link;
    END IF;
    INSERT INTO {schema}.{chain} (position, originator_id, originator_version, link)
    VALUES (NEW.notification_id, NEW.originator_id::text, NEW.originator_version,
        encode(sha256(convert_to(previous || '|' || NEW.originator_id::text || '|'
            || NEW.originator_version::text || '|' || NEW.topic || '|'
            || encode(sha256(NEW.state), 'hex'), 'UTF8')), 'hex'));
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER {events}_chain AFTER INSERT ON {schema}.{events}
    FOR EACH ROW EXECUTE FUNCTION {schema}.chain_event();
"""


def trigger_runs_per_row(stores: StoreFactory) -> bool:
    store = stores.opened[-1]
    with store.database.read() as cursor:
        cursor.execute(
            "SELECT tgtype & 1 FROM pg_trigger WHERE tgname = ? AND tgrelid = ?::regclass",
            (f"{POSTGRES_EVENTS_TABLE}_chain", f"{stores.schema}.{POSTGRES_EVENTS_TABLE}"),
        )
        (per_row,) = cursor.fetchone()
    return bool(per_row)


@pytest.mark.postgres
def test_a_store_made_with_the_row_trigger_keeps_one_chain_across_the_change(
    postgres_stores: StoreFactory,
) -> None:
    stores = postgres_stores
    # Given a store whose events were chained one row at a time
    old = stores.open()
    old.database.script(
        ROW_TRIGGER.format(
            schema=stores.schema,
            genesis=event_chain.GENESIS,
            chain=event_chain.TABLE,
            events=POSTGRES_EVENTS_TABLE,
        )
    )
    assert trigger_runs_per_row(stores)
    old.app.register_player("ann", "Ann")
    old.app.deposit("ann", "real", 1_000)
    old.close()
    # When the service starts on it again and saves more, many events a save
    new = stores.open()
    assert not trigger_runs_per_row(stores)
    new.app.register_player("bob", "Bob")
    for _ in range(3):
        new.app.deposit("bob", "real", 100)
    # Then every event is chained, in one chain the audit verifies
    with new.database.read() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {event_chain.TABLE}")
        (links,) = cursor.fetchone()
    assert links == new.app.recorder.max_notification_id()
    assert problems_of(new) == []
