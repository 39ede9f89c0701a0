"""Loads whose cost does not grow with history (issue 15): after 10,000 rounds at one P2P
table, the table, its lobby, both wallets and both players each load from a snapshot
and a bounded number of events after it."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.application import CasinoApplication
from domain.baccarat import steps
from domain.baccarat.p2p import load_p2p_table, lobby_uuid
from domain.ids import player_uuid, wallet_uuid
from domain.tables.coup import load_coup
from domain.unit import Unit
from infra.commands import with_commands

ROUNDS = 10_000
ROUNDS_PER_SAVE = 500  # rounds played in one unit of work, so the test takes seconds
# Snapshots every 100 events (tables, lobbies) or 200 (wallets, players): a load reads
# the snapshot and fewer events than that after it, however long the stream.
EVENTS_AFTER_A_SNAPSHOT_MAX = 200


def play_rounds(app: CasinoApplication, unit: Unit, table_id: str) -> None:
    """Bet and deal at the table, the dealer's auto-confirm opening each next round: the
    steps the commands take, many rounds to one save."""
    table = load_p2p_table(unit, table_id)
    for _ in range(ROUNDS_PER_SAVE):
        assert table.round_id is not None
        round_ = load_coup(unit, table.round_id)
        steps.place_bet(unit, round_, "player", 500, app.clock())
        steps.deal(unit, app.games, round_, app.clock())


def events_read_to_load(app: CasinoApplication, aggregate_id: UUID) -> int:
    read = 0
    get = app.events.get

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal read
        events = list(get(*args, **kwargs))
        read += len(events)
        return iter(events)

    app.events.get = counted  # type: ignore[method-assign]
    try:
        app.reading().find(object, aggregate_id)  # type: ignore[type-var]
    finally:
        app.events.get = get  # type: ignore[method-assign]
    return read


def test_ten_thousand_rounds_at_one_table_leave_every_load_bounded() -> None:
    app = with_commands(env={"AGGREGATE_CACHE_MAXSIZE": "100"})
    for name in ("dan", "pat"):
        app.register_player(name, name)
        app.deposit(name, "real", 10**13)
    app.adjust_points("dan", "real", 10**8, "deals all day")
    table = app.sit_as_dealer("dan", "real", "II", True).result
    assert table is not None
    app.join_as_player("pat", "real", "II")
    for _ in range(ROUNDS // ROUNDS_PER_SAVE):
        app.commands.run(lambda unit: play_rounds(app, unit, table.table_id))
    assert app.p2p_table(table.table_id).rounds_played == ROUNDS
    loads = {
        "table": table.id,
        "lobby": lobby_uuid("real", "II"),
        **{f"wallet {n}": wallet_uuid(n, "real") for n in ("dan", "pat")},
        **{f"player {n}": player_uuid(n) for n in ("dan", "pat")},
    }
    read = {name: events_read_to_load(app, uuid) for name, uuid in loads.items()}
    assert all(count <= EVENTS_AFTER_A_SNAPSHOT_MAX for count in read.values()), read
    assert app.p2p_table(table.table_id).version > 2 * ROUNDS  # the stream is long...
    app.close()
