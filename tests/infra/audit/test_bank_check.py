"""verify checks every bank at a table against the wallets that hold it (both stores)."""

from __future__ import annotations

from domain.unit import Unit
from domain.wallet import load_wallet
from infra.audit.verify import verify
from infra.store.store import Store

BANKER_WINS = ["K", "9", "Q", "K"]  # chemin de fer: punto 0 against the banker's natural 9


def chemin_de_fer_with_a_won_coup(store: Store) -> str:
    """Ann puts up $100 and wins a $20 coup against Bob: her bank is $119 after 5%."""
    app = store.app
    for player in ("ann", "bob"):
        app.register_player(player, player.title())
        app.deposit(player, "real", 100_000)
    table = app.open_table("chemin_de_fer", "real").result
    assert table is not None
    app.sit_at_table(table.table_id, "ann", "1")
    app.sit_at_table(table.table_id, "bob", "2")
    app.put_up_bank(table.table_id, "ann", 10_000)
    coup = app.open_coup(table.table_id, BANKER_WINS).result
    assert coup is not None
    app.place_bet(coup.round_id, "punto", 2_000, player_id="bob")
    app.deal(coup.round_id)
    return table.table_id


def problems_of(store: Store) -> list[str]:
    return verify(store, None, lambda _: None).problems


def test_a_bank_held_as_the_table_says_passes(store: Store) -> None:
    table_id = chemin_de_fer_with_a_won_coup(store)
    assert problems_of(store) == []
    store.app.withdraw_bank(table_id, "ann")
    assert problems_of(store) == []


def test_a_bank_released_to_its_banker_while_the_table_plays_on_with_it_is_named(
    store: Store,
) -> None:
    table_id = chemin_de_fer_with_a_won_coup(store)
    bank = store.app.wallet("ann", "real").bank_at(table_id)
    assert bank == 11_900

    def release_the_bank_behind_the_tables_back(unit: Unit) -> None:
        load_wallet(unit, "ann", "real").release_bank(table_id, None, bank)

    store.commands.run(release_the_bank_behind_the_tables_back)
    problems = problems_of(store)
    assert any(
        f"table {table_id}: ann's wallet holds 0 for its bank, the table says 11900" in problem
        for problem in problems
    ), problems
