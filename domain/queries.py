"""The application's queries: each reads the store, never the commands' cache, so it
sees what any process saved (infra/commands/fresh_reads.py, through `commands`). The
commands are in domain/application.py, which builds on this."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.utils import EnvType

from domain.any_round import Round, round_of
from domain.baccarat.p2p import P2PTable, load_p2p_table
from domain.blackjack.round import BlackjackRound
from domain.commands import Commands
from domain.player import Player, load_player
from domain.protection import Protection, find_protection
from domain.tables.coup import Coup
from domain.tables.table import Table, load_table
from domain.unit import Unit, answering_unit
from domain.wallet import Wallet, load_wallet

T = TypeVar("T", P2PTable, Table)

# Display names kept at most (about 100 bytes each): forgotten all at once past this.
NAMES_KEPT_MAX = 10_000


Clock = Callable[[], datetime.datetime]


class CasinoQueries(Application[UUID]):
    name = "casino"  # as the application's (domain/application.py)
    is_snapshotting_enabled = True
    # Players gain two events per blackjack round left in play by its deal. Every
    # long-lived aggregate is snapshotted so that loading it costs the same however
    # old it is; the application adds its games' (domain/application.py).
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {Wallet: 200, Player: 200}
    # Runs the commands and reads the store: the seam the store builds beside the
    # application (infra/commands/seam.py) hands itself over here.
    commands: Commands

    def __init__(self, env: EnvType | None = None, clock: Clock | None = None) -> None:
        super().__init__(env)
        # Read in commands, outside every event body, and stored in the events it dates;
        # receipts are dated by it too.
        self.clock: Clock = clock or (lambda: datetime.datetime.now(datetime.UTC))
        self._display_names: dict[str, str] = {}

    def reading(self) -> Unit:
        """A unit for queries: it reads the store, never the commands' cache."""
        return self.commands.reading()

    def before_save(self, unit: Unit) -> None:
        """The last look at what a command is about to save; it may refuse it (a domain
        error) or add to it. The application guards player protection here."""

    def close(self) -> None:
        self.commands.close()
        super().close()

    def display_name(self, player_id: str) -> str:
        """The player's display name. It is given at registration and never changes
        (domain/player.py), so it is read from the store once and then kept: a table's
        answer names two players, and reading them was half of its freshness checks."""
        names = self._display_names
        name = names.get(player_id)
        if name is None:
            name = self.player(player_id).display_name
            if len(names) >= NAMES_KEPT_MAX:
                names.clear()
            names[player_id] = name
        return name

    def player(self, player_id: str) -> Player:
        return load_player(self.reading(), player_id)

    def wallet(self, player_id: str, mode: str) -> Wallet:
        return load_wallet(self.reading(), player_id, mode)

    def protection(self, player_id: str) -> Protection | None:
        """The player's limits and exclusion; None when they never set any."""
        reading = self.reading()
        load_player(reading, player_id)
        return find_protection(reading, player_id)

    def round(self, round_id: str) -> Round:
        return round_of(self.reading(), round_id)

    def round_as_answered(self, round_id: str) -> Round:
        """The round as the command whose answer is being shaped left it, if that
        command holds it (domain/unit.py: `answering`); else as `round` reads it. A
        round only shown is never loaded into the command: it would be checked for
        staleness, and cached, as though the command had decided on it."""
        unit, key = answering_unit(), _uuid_or_none(round_id)
        held = None if unit is None or key is None else unit.held(key)
        if isinstance(held, BlackjackRound | Coup):
            return held
        return self.round(round_id)

    def p2p_table(self, table_id: str) -> P2PTable:
        return load_p2p_table(self.reading(), table_id)

    def p2p_table_with_round(self, table_id: str) -> tuple[P2PTable, Round | None]:
        """The P2P table and its current round, as `_with_round` reads them."""
        return self._with_round(P2PTable, load_p2p_table, table_id)

    def table_with_round(self, table_id: str) -> tuple[Table, Round | None]:
        """The multi-player table and its coup in play, as `_with_round` reads them."""
        return self._with_round(Table, load_table, table_id)

    def _with_round(
        self, kind: type[T], load: Callable[[Unit, str], T], table_id: str
    ) -> tuple[T, Round | None]:
        """A table and its current round. Where both are kept from an earlier read,
        one query checks them against the store (infra/commands/fresh_reads.py: `together`);
        a round the table has moved on to since is read after it."""
        reading = self.reading()
        key = _uuid_or_none(table_id)  # None: `load` refuses it
        kept = None if key is None else self.commands.kept(key)
        if isinstance(kept, kind) and kept.round_id is not None:
            reading = self.commands.reading(together=[kept.id, UUID(kept.round_id)])
        table = load(reading, table_id)
        return table, round_of(reading, table.round_id) if table.round_id else None

    def table(self, table_id: str) -> Table:
        return load_table(self.reading(), table_id)


def _uuid_or_none(text: str) -> UUID | None:
    try:
        return UUID(text)
    except ValueError:
        return None
