"""The application: every command the casino takes, each a short method.

A command loads what it needs into its unit, calls one step of its game and
returns the result; the application's `commands` (the seam the store builds:
`infra/commands/seam.py`) save everything the unit touched in one atomic save
and run the method again after a conflict. Round
commands find the round by its id and dispatch on its game once, with `match`.

    route -> application method -> game step (aggregates, pure rules) -> one save
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from secrets import token_urlsafe
from typing import Any, ClassVar, assert_never

from eventsourcing.utils import EnvType

from domain import bonus_steps, presence, protection_steps
from domain.any_round import Dealt, Round, named, round_of
from domain.baccarat import p2p_steps
from domain.baccarat import steps as baccarat
from domain.baccarat.p2p import Lobby, P2PTable, load_p2p_table
from domain.blackjack import steps as blackjack
from domain.blackjack.hands import parse_box
from domain.blackjack.interruptions import Reconnection
from domain.blackjack.last_bets import LastBets
from domain.blackjack.round import BlackjackRound, load_blackjack_round
from domain.bonus import Grant
from domain.commands import command
from domain.errors import HouseBanked, IllegalAction, NoPreviousBets, PlayerExists
from domain.ids import MODES, check_player_id, new_id, player_uuid
from domain.player import Player, load_player
from domain.protection import Protection
from domain.protection_guard import guard
from domain.providers import steps as providers
from domain.providers.provider import GameSession, Provider, load_provider, load_session
from domain.providers.round import ProviderRound, find_provider_round
from domain.queries import CasinoQueries, Clock
from domain.rounds import check_certification
from domain.seal_keys import SealKeys, seal_keys_uuid
from domain.settings import GameSettings
from domain.significant import SEAL_KEY_ROTATED, SignificantEvent
from domain.tables import bank_steps
from domain.tables import steps as tables
from domain.tables.coup import Coup, load_coup
from domain.tables.table import Table, load_table
from domain.unit import Unit
from domain.wallet import Movement, Wallet, load_wallet


class CasinoApplication(CasinoQueries):
    # The name prefixes the PostgreSQL tables (casino_events); never change it. The
    # library names each subclass after itself unless it says otherwise.
    name = "casino"
    # A table gains events with every round or coup, a lobby with every match: both
    # load from a snapshot and at most this many events after it (rounds and coups
    # end, and are never snapshotted).
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {
        **CasinoQueries.snapshotting_intervals,
        P2PTable: 100,
        Lobby: 100,
        Table: 100,
        LastBets: 100,
        # Gains an event with every real-money save of a player who set a limit.
        Protection: 200,
        # A session gains an event at most once a minute of play.
        GameSession: 100,
    }
    # Asked before money leaves a wallet, given the wallet with the withdrawal applied
    # and not yet saved: refuses (raises) one whose stored events the seals do not
    # vouch for (rules.md 5). Set by a store that seals
    # (infra/store/money_out.py); None: nothing is checked.
    before_money_leaves: Callable[[Wallet], None] | None = None

    def __init__(
        self,
        env: EnvType | None = None,
        games: GameSettings | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.games = games or GameSettings()
        super().__init__(env, clock)

    # Players and wallets.

    @command
    def register_player(self, unit: Unit, player_id: str, display_name: str) -> Player:
        """Register a player and open both wallets, real and play money."""
        check_player_id(player_id)
        if unit.find(Player, player_uuid(player_id)) is not None:
            raise PlayerExists(f"player {player_id} is already registered")
        player = Player(player_id, display_name)
        unit.add(player)
        for mode in MODES:
            unit.add(Wallet(player_id, mode))
        return player

    @command
    def deposit(self, unit: Unit, player_id: str, mode: str, amount_cents: int) -> Movement:
        movement = Movement(load_wallet(unit, player_id, mode), new_id())
        movement.wallet.deposit(movement.transaction_id, amount_cents)
        return movement

    @command
    def withdraw(self, unit: Unit, player_id: str, mode: str, amount_cents: int) -> Movement:
        movement = Movement(load_wallet(unit, player_id, mode), new_id())
        movement.wallet.withdraw(movement.transaction_id, amount_cents)
        # Once it would pay (a refusal reads nothing more), before it is saved.
        if self.before_money_leaves is not None:
            self.before_money_leaves(movement.wallet)
        return movement

    @command
    def adjust_points(
        self,
        unit: Unit,
        player_id: str,
        mode: str,
        change: int,
        reason: str,
        actor: str = "operator",
    ) -> Wallet:
        """An operator's adjustment of dealer points, with a reason (rules.md 2.1)."""
        now = self.clock()
        return protection_steps.adjust_points(unit, now, player_id, mode, change, reason, actor)

    # Bonus money (rules.md 9).

    @command
    def grant_bonus(
        self, unit: Unit, player_id: str, grant: Grant, actor: str = "operator"
    ) -> dict[str, Any]:
        """An operator's bonus: active at once, or in line behind the active one."""
        cap = self.games.bonus_wagering_max
        return bonus_steps.grant(unit, self.clock(), cap, player_id, grant, actor)

    @command
    def forfeit_bonus(
        self, unit: Unit, player_id: str, bonus_id: str, actor: str = "service"
    ) -> dict[str, Any]:
        """The player (through the upstream service) or an operator gives a bonus up."""
        return bonus_steps.forfeit(unit, self.clock(), player_id, bonus_id, actor)

    @command
    def expire_bonus(
        self, unit: Unit, player_id: str, bonus_id: str, now: datetime.datetime
    ) -> bool:
        """The worker's: end a bonus once past its expiry; says whether it did."""
        return bonus_steps.expire(unit, now, player_id, bonus_id)

    # Player protection (rules.md 7).

    @command
    def set_limits(
        self, unit: Unit, player_id: str, changes: dict[str, int | None], actor: str = "service"
    ) -> tuple[Protection, dict[str, str]]:
        """Set deposit and loss limits ("deposit:day" -> cents, None for none): lower
        at once, higher after the cooling-off; returns when each takes effect."""
        return protection_steps.set_limits(unit, self.clock(), player_id, changes, actor)

    @command
    def exclude(
        self, unit: Unit, player_id: str, kind: str, length: int, actor: str = "service"
    ) -> tuple[dict[str, str], list[dict[str, str]]]:
        """A time-out (`length` days) or self-exclusion (`length` months) from now; the
        player's open rounds end as if they had disconnected (rules.md 4). Returns it
        and the rounds affected."""
        now = self.clock()
        exclusion, player = protection_steps.exclude(unit, now, player_id, kind, length, actor)
        bonus_steps.forfeit_every_bonus(unit, now, player_id, kind)
        return exclusion, presence.leave_play(unit, self.games.tables, player, now)

    @command
    def end_exclusion(self, unit: Unit, player_id: str, now: datetime.datetime) -> bool:
        """The worker's: end an exclusion once due; says whether it did."""
        return protection_steps.end_exclusion(unit, now, player_id)

    # Significant events (GLI-19 s2.8.8).

    @command
    def record_significant(
        self, unit: Unit, kind: str, details: dict[str, Any], actor: str = "system"
    ) -> SignificantEvent:
        """Record a significant event of any kind (a start-up, a failing worker, ...)."""
        return protection_steps.record(unit, self.clock(), kind, details, actor)

    @command
    def rotate_seal_key(self, unit: Unit, from_public_key: str, to_public_key: str) -> SealKeys:
        """Hand the log's seals over to the next key (rules.md 5): saved, and sealed, by
        the key that signs now; a significant event besides."""
        keys = unit.find(SealKeys, seal_keys_uuid())
        if keys is None:
            keys = SealKeys()
            unit.add(keys)
        keys.rotate(from_public_key, to_public_key, self.clock())
        details = {"from_public_key": from_public_key, "to_public_key": to_public_key}
        protection_steps.record(unit, self.clock(), SEAL_KEY_ROTATED, details, "operator")
        return keys

    def seal_key_rotations(self) -> list[tuple[str, str]]:
        """Every rotation of the seal key, (from, to), oldest first."""
        keys = self.reading().find(SealKeys, seal_keys_uuid())
        return list(keys.rotations) if keys is not None else []

    @command
    def see_configuration(
        self, unit: Unit, values: dict[str, str]
    ) -> dict[str, dict[str, str | None]]:
        """The configuration a start-up runs with (secrets masked): what changed since
        the last start-up, recorded as a significant event when anything did."""
        return protection_steps.see_configuration(unit, self.clock(), values)

    def before_save(self, unit: Unit) -> None:
        now = self.clock()
        guard(unit, now)
        bonus_steps.record_conversions(unit, now)

    # Rounds of every game.

    @command
    def place_bet(
        self,
        unit: Unit,
        round_id: str,
        target: str,
        amount_cents: int,
        player_id: str | None = None,
    ) -> Round:
        """A bet on a spot (baccarat) or box (blackjack); at a table it names its player."""
        match round_ := round_of(unit, round_id, player_id):
            case Coup() if round_.one_seat:
                baccarat.place_bet(unit, round_, target, amount_cents, self.clock())
            case BlackjackRound():
                blackjack.place_bet(unit, round_, parse_box(target), amount_cents, self.clock())
            case Coup():
                tables.place_bet(unit, round_, named(player_id), target, amount_cents, self.clock())
            case _:
                assert_never(round_)
        return round_

    @command
    def remove_bet(
        self, unit: Unit, round_id: str, target: str, player_id: str | None = None
    ) -> Round:
        match round_ := round_of(unit, round_id, player_id):
            case Coup() if round_.one_seat:
                baccarat.remove_bet(unit, round_, target)
            case BlackjackRound():
                blackjack.remove_bet(unit, round_, parse_box(target))
            case Coup():
                tables.remove_bet(unit, round_, named(player_id), target)
            case _:
                assert_never(round_)
        return round_

    @command
    def cancel_bets(self, unit: Unit, round_id: str, player_id: str | None = None) -> Round:
        """Take every stake of a round (at a table: of one player) back before the deal."""
        match round_ := round_of(unit, round_id, player_id):
            case Coup() if round_.one_seat:
                baccarat.cancel_bets(unit, round_)
            case BlackjackRound():
                blackjack.cancel_bets(unit, round_)
            case Coup():
                tables.cancel_bets(unit, round_, named(player_id))
            case _:
                assert_never(round_)
        return round_

    @command
    def deal(self, unit: Unit, round_id: str) -> Dealt:
        next_round = None
        match round_ := round_of(unit, round_id):
            case Coup() if round_.one_seat:
                next_round = baccarat.deal(unit, self.games, round_, self.clock())
            case BlackjackRound():
                blackjack.deal(unit, round_, self.clock())
            case Coup():
                tables.deal(unit, self.games.tables, round_, self.clock())
            case _:
                assert_never(round_)
        return Dealt(round_, next_round)

    @command
    def end_idle_round(self, unit: Unit, round_id: str, idle_since: datetime.datetime) -> bool:
        """End a round that has seen no action since `idle_since`, as its game does it
        (rules.md 4); the result says whether it was ended."""
        match round_ := round_of(unit, round_id):
            case Coup() if round_.one_seat:
                return baccarat.end_idle(unit, round_, idle_since)
            case BlackjackRound():
                return blackjack.end_idle(unit, round_, idle_since, self.clock())
            case Coup():
                return tables.end_idle(unit, round_, idle_since)
            case _:
                assert_never(round_)

    # House baccarat.

    @command
    def open_house_round(
        self, unit: Unit, player_id: str, mode: str, shoe_prefix: list[str] | None = None
    ) -> Coup:
        check_certification(self.games.test_mode, shoe_prefix)
        return baccarat.open_house_round(unit, self.games, player_id, mode, shoe_prefix)

    # P2P baccarat.

    @command
    def sit_as_dealer(
        self, unit: Unit, player_id: str, mode: str, table_type: str, auto_confirm: bool
    ) -> P2PTable:
        p2p, now = self.games.p2p, self.clock()
        return p2p_steps.sit_as_dealer(unit, p2p, now, player_id, mode, table_type, auto_confirm)

    @command
    def join_as_player(self, unit: Unit, player_id: str, mode: str, table_type: str) -> P2PTable:
        p2p, now = self.games.p2p, self.clock()
        return p2p_steps.join_as_player(unit, p2p, now, player_id, mode, table_type)

    @command
    def confirm(self, unit: Unit, table_id: str, shoe_prefix: list[str] | None = None) -> Coup:
        check_certification(self.games.test_mode, shoe_prefix)
        table = load_p2p_table(unit, table_id)
        return p2p_steps.confirm_round(unit, self.games.p2p, table, self.clock(), shoe_prefix)

    @command
    def leave_table(self, unit: Unit, table_id: str, player_id: str) -> P2PTable:
        return p2p_steps.leave_table(unit, load_p2p_table(unit, table_id), player_id)

    # Blackjack.

    @command
    def open_blackjack_round(
        self, unit: Unit, player_id: str, mode: str, hall: str, shoe_prefix: list[str] | None = None
    ) -> BlackjackRound:
        check_certification(self.games.test_mode, shoe_prefix)
        settings = self.games.blackjack
        return blackjack.open_round(unit, settings, player_id, mode, hall, shoe_prefix)

    @command
    def act(
        self,
        unit: Unit,
        round_id: str,
        box: int | None,
        hand: int,
        action: str,
        player_id: str | None = None,
    ) -> Round:
        """A decision: at blackjack on a box's hand (hit, stand, double, split,
        insurance); at a table, the choice its player owes (draw or stand)."""
        match round_ := round_of(unit, round_id, player_id):
            case BlackjackRound() if box is not None:
                blackjack.act(unit, round_, box, hand, action, self.clock())
            case Coup() if round_.one_seat:
                raise IllegalAction(
                    f"round {round_id} is not a blackjack round: it takes no decisions"
                )
            case Coup():
                settings, now = self.games.tables, self.clock()
                tables.choose(unit, settings, round_, named(player_id), action, now)
            case BlackjackRound():
                raise IllegalAction("a blackjack decision names its box")
            case _:
                assert_never(round_)
        return round_

    @command
    def repeat_bets(self, unit: Unit, round_id: str) -> BlackjackRound:
        round_ = round_of(unit, round_id)
        if not isinstance(round_, BlackjackRound):
            raise NoPreviousBets(f"round {round_id} is not a blackjack round: no bets to repeat")
        blackjack.repeat_bets(unit, round_, self.clock())
        return round_

    @command
    def finish_abandoned_round(
        self, unit: Unit, round_id: str, interrupted_before: datetime.datetime
    ) -> BlackjackRound | None:
        """Finish a round interrupted at or before `interrupted_before` with the house
        defaults (rules.md 4); None when it was resumed or interrupted again since."""
        round_ = load_blackjack_round(unit, round_id)
        finished = blackjack.finish_abandoned(unit, round_, interrupted_before, self.clock())
        return round_ if finished else None

    # Multi-player tables (rules.md 2.2-2.4).

    @command
    def open_table(
        self,
        unit: Unit,
        game: str,
        mode: str,
        bet_limits: tuple[int, int] | None = None,
        bank_limits: tuple[int, int] | None = None,
    ) -> Table:
        return tables.open_table(unit, self.games.tables, game, mode, bet_limits, bank_limits)

    @command
    def sit_at_table(self, unit: Unit, table_id: str, player_id: str, seat: str) -> Table:
        return tables.sit(unit, load_table(unit, table_id), player_id, seat)

    @command
    def leave_seat(self, unit: Unit, table_id: str, player_id: str) -> Table:
        table = load_table(unit, table_id)
        tables.leave(unit, self.games.tables, table, player_id, self.clock())
        return table

    @command
    def put_up_bank(self, unit: Unit, table_id: str, player_id: str, amount_cents: int) -> Table:
        """Put up (or top up) the bank at a player-banked table (rules.md 2.3, 2.4)."""
        return bank_steps.put_up(unit, load_table(unit, table_id), player_id, amount_cents)

    @command
    def decline_bank(self, unit: Unit, table_id: str, player_id: str) -> Table:
        return bank_steps.decline(load_table(unit, table_id), player_id)

    @command
    def withdraw_bank(self, unit: Unit, table_id: str, player_id: str) -> Table:
        return bank_steps.withdraw(unit, load_table(unit, table_id), player_id)

    @command
    def call_banco(self, unit: Unit, round_id: str, player_id: str) -> Coup:
        """The caller covers the whole bank alone; every other bet goes back."""
        round_ = round_of(unit, round_id)
        if not isinstance(round_, Coup) or round_.one_seat or round_.banker_id is None:
            raise HouseBanked(f"the house banks round {round_id}: there is no banco to call")
        bank_steps.call_banco(unit, load_table(unit, round_.table), round_, player_id)
        return round_

    @command
    def open_coup(self, unit: Unit, table_id: str, shoe_prefix: list[str] | None = None) -> Coup:
        check_certification(self.games.test_mode, shoe_prefix)
        return tables.open_coup(unit, self.games, load_table(unit, table_id), shoe_prefix)

    @command
    def choose_when_due(self, unit: Unit, round_id: str, now: datetime.datetime) -> bool:
        """The choice a coup owes, made by the system once its deadline is past."""
        return tables.choose_when_due(unit, self.games.tables, load_coup(unit, round_id), now)

    # Presence (rules.md 4): what a disconnect and a reconnect do, in every game.

    @command
    def disconnect(self, unit: Unit, player_id: str) -> list[dict[str, str]]:
        """The upstream service lost a player; returns the rounds affected: their P2P
        round, their coups at tables, then their blackjack rounds in play, now interrupted."""
        player = load_player(unit, player_id)
        return presence.leave_play(unit, self.games.tables, player, self.clock())

    @command
    def reconnect(self, unit: Unit, player_id: str) -> Reconnection:
        """The player is back: a dealer keeps their table, a seated player their seat,
        interrupted blackjack rounds resume."""
        return presence.come_back(unit, player_id, self.clock())

    # Third-party games (rules.md 10).

    @command
    def register_provider(
        self,
        unit: Unit,
        provider_id: str,
        name: str,
        secrets: list[str],
        bonus_allowed: bool,
        theoretical_rtp: str | None = None,
    ) -> Provider:
        """Register a game provider; its secrets are stored sealed, never shown again."""
        return providers.register(unit, provider_id, name, secrets, bonus_allowed, theoretical_rtp)

    @command
    def rotate_provider_secrets(self, unit: Unit, provider_id: str, secrets: list[str]) -> Provider:
        """The provider's secrets from now on (two at once while it moves to the next)."""
        return providers.rotate(unit, provider_id, secrets)

    @command
    def open_game_session(
        self, unit: Unit, player_id: str, provider_id: str, game_id: str, mode: str
    ) -> providers.OpenedSession:
        """A player's session with a provider's game: its token goes to the provider."""
        token = token_urlsafe(32)  # drawn here, never in an event body
        settings, now = self.games.providers, self.clock()
        return providers.open_session(
            unit, settings, now, token, player_id, provider_id, game_id, mode
        )

    @command
    def provider_bet(
        self, unit: Unit, call: providers.Call, round_ref: str, game_id: str, amount_cents: int
    ) -> providers.WalletCall:
        settings, now = self.games.providers, self.clock()
        return providers.bet(unit, settings, now, call, round_ref, game_id, amount_cents)

    @command
    def provider_win(
        self,
        unit: Unit,
        call: providers.Call,
        round_ref: str,
        amount_cents: int,
        bet_transaction_id: str | None = None,
    ) -> providers.WalletCall:
        settings, now = self.games.providers, self.clock()
        return providers.win(unit, settings, now, call, round_ref, amount_cents, bet_transaction_id)

    @command
    def provider_rollback(
        self, unit: Unit, call: providers.Call, bet_transaction_id: str
    ) -> providers.WalletCall:
        settings, now = self.games.providers, self.clock()
        return providers.rollback(unit, settings, now, call, bet_transaction_id)

    @command
    def provider_end_round(
        self, unit: Unit, provider_id: str, token: str, round_ref: str
    ) -> ProviderRound:
        return providers.end_round(unit, self.clock(), provider_id, token, round_ref)

    @command
    def lapse_provider_round(self, unit: Unit, round_id: str, now: datetime.datetime) -> bool:
        """The worker's: a provider's round with no call for CASINO_PROVIDER_ROUND_SECONDS
        ends (rules.md 10); says whether it did."""
        return providers.lapse(unit, self.games.providers, now, round_id)

    def provider(self, provider_id: str) -> Provider:
        return load_provider(self.reading(), provider_id)

    def provider_round(self, round_id: str) -> ProviderRound | None:
        """A provider's round by our id of it (the round index's), or None."""
        return find_provider_round(self.reading(), round_id)

    def provider_wallet(self, provider_id: str, token: str) -> providers.ProviderWallet:
        """The wallet of a provider's live game session (the balance call: a read), with
        whether that provider's games may stake bonus money."""
        reading = self.reading()
        session = load_session(reading, provider_id, token)
        session.check_live(self.clock())
        wallet = load_wallet(reading, session.player_id, session.mode)
        return providers.ProviderWallet(wallet, session.bonus_allowed)
