"""Domain errors: client mistakes with a stable code, mapped to 4xx answers at the edge.

`kind` says what sort of mistake it is, so the edge can pick a status without
the domain knowing about HTTP. `assert` remains for our own bugs.
"""

from __future__ import annotations

from typing import Any, ClassVar


class DomainError(Exception):
    code: ClassVar[str] = "domain_error"
    kind: ClassVar[str] = "invalid"  # invalid | not_found | conflict | forbidden | ...

    def __init__(self, detail: str, **facts: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.facts = facts


class InvalidAmount(DomainError):
    code = "invalid_amount"


class InvalidMode(DomainError):
    code = "unknown_mode"


class InvalidPlayerId(DomainError):
    code = "invalid_player_id"


class UnknownPlayer(DomainError):
    code = "unknown_player"
    kind = "not_found"


class PlayerExists(DomainError):
    code = "player_exists"
    kind = "conflict"


class InsufficientFunds(DomainError):
    code = "insufficient_funds"
    kind = "conflict"


class BalanceLimitExceeded(DomainError):
    """A deposit, or a hold whose largest payout, would take a wallet past its ceiling
    (rules.md 6)."""

    code = "balance_limit_exceeded"
    kind = "conflict"


class UnknownHold(DomainError):
    code = "unknown_hold"
    kind = "conflict"


class InvalidPointsChange(DomainError):
    code = "invalid_points_change"


class IdempotencyKeyReused(DomainError):
    code = "idempotency_key_reused"


class IdempotencyKeyExpired(DomainError):
    """The key's receipt outlived its retention (CASINO_RECEIPT_RETENTION_DAYS): its
    answer is gone, but the key stays taken, so the command is not run again."""

    code = "idempotency_key_expired"


class ReceiptUnsealed(DomainError):
    """The answer stored for this Idempotency-Key is in no seal the service made: it
    was written behind the service's back, so it is neither replayed nor overwritten."""

    code = "receipt_unsealed"
    kind = "unavailable"


class InvalidKeyRotation(DomainError):
    """A seal key rotation that does not continue the chain of keys (rules.md 5)."""

    code = "invalid_key_rotation"
    kind = "invalid"


class SeedNotSealed(DomainError):
    """A round not over whose seed is stored in clear, not sealed: written behind the
    service's back (rules.md 5); the round is neither dealt nor settled."""

    code = "log_tampered"
    kind = "unavailable"


class ConcurrencyExhausted(DomainError):
    """The command kept losing optimistic-concurrency races; nothing was applied."""

    code = "concurrent_update"
    kind = "unavailable"


class UnknownRound(DomainError):
    code = "unknown_round"
    kind = "not_found"


class RoundNotOpen(DomainError):
    code = "round_not_open"
    kind = "conflict"


class InvalidStake(DomainError):
    code = "invalid_stake"


class UnknownSpot(DomainError):
    code = "unknown_spot"


class NoStakeOnSpot(DomainError):
    code = "no_stake_on_spot"
    kind = "conflict"


class NoBets(DomainError):
    code = "no_bets"
    kind = "conflict"


class BelowTableMinimum(DomainError):
    code = "below_table_minimum"
    kind = "conflict"


class AboveTableMaximum(DomainError):
    code = "above_table_maximum"
    kind = "conflict"


class TestModeDisabled(DomainError):
    code = "test_mode_disabled"
    kind = "forbidden"


class InvalidShoe(DomainError):
    code = "invalid_shoe"


class NotEligibleToDeal(DomainError):
    code = "not_eligible_to_deal"
    kind = "conflict"


class NoDealerAvailable(DomainError):
    code = "no_dealer_available"
    kind = "conflict"


class UnknownTable(DomainError):
    code = "unknown_table"
    kind = "not_found"


class UnknownTableType(DomainError):
    code = "unknown_table_type"


class AlreadyAtTable(DomainError):
    code = "already_at_table"
    kind = "conflict"


class NotAtTable(DomainError):
    code = "not_at_table"
    kind = "conflict"


class TableNotReady(DomainError):
    code = "table_not_ready"
    kind = "conflict"


class UnknownHall(DomainError):
    code = "unknown_hall"


class InvalidBox(DomainError):
    code = "invalid_box"


class NoStakeOnBox(DomainError):
    code = "no_stake_on_box"
    kind = "conflict"


class IllegalAction(DomainError):
    """A blackjack action the rules do not allow now; the detail says why."""

    code = "illegal_action"
    kind = "conflict"


class NoPreviousBets(DomainError):
    code = "no_previous_bets"
    kind = "conflict"


class BetsAlreadyPlaced(DomainError):
    code = "bets_already_placed"
    kind = "conflict"


class HistoryUnavailable(DomainError):
    code = "history_unavailable_for_play_money"
    kind = "forbidden"


class RoundInterrupted(DomainError):
    """A blackjack round held while its player is away (rules.md 4); the detail says why."""

    code = "round_interrupted"
    kind = "conflict"


# Multi-player tables (rules.md 2.2-2.4).


class UnknownTableGame(DomainError):
    code = "unknown_table_game"


class UnknownSeat(DomainError):
    code = "unknown_seat"


class SeatTaken(DomainError):
    code = "seat_taken"
    kind = "conflict"


class NotSeated(DomainError):
    code = "not_seated"
    kind = "conflict"


class CoupInProgress(DomainError):
    code = "coup_in_progress"
    kind = "conflict"


class NotYourDecision(DomainError):
    code = "not_your_decision"
    kind = "conflict"


class InvalidLimits(DomainError):
    code = "invalid_limits"


# Player-banked tables (rules.md 2.3, 2.4).


class NoBank(DomainError):
    code = "no_bank"
    kind = "conflict"


class NotOfferedTheBank(DomainError):
    code = "not_offered_the_bank"
    kind = "conflict"


class BankOutOfLimits(DomainError):
    code = "bank_out_of_limits"
    kind = "conflict"


class BankerCannotBet(DomainError):
    code = "banker_cannot_bet"
    kind = "conflict"


class BankCovered(DomainError):
    code = "bank_covered"
    kind = "conflict"


class WrongSide(DomainError):
    """En banque: a bet on the other side's hand alone (rules.md 2.4)."""

    code = "wrong_side"
    kind = "conflict"


class BancoRefused(DomainError):
    code = "banco_refused"
    kind = "conflict"


class NotTheBanker(DomainError):
    code = "not_the_banker"
    kind = "conflict"


class BancoCalled(DomainError):
    code = "banco_called"
    kind = "conflict"


class HouseBanked(DomainError):
    code = "house_banked"
    kind = "conflict"


# Player protection (rules.md 7).


class InvalidLimit(DomainError):
    """A deposit or loss limit below zero or above the balance ceiling."""

    code = "invalid_limit"


class UnknownPeriod(DomainError):
    """A limit's or an exclusion's period that is not one of those listed."""

    code = "unknown_period"


class DepositLimitExceeded(DomainError):
    code = "deposit_limit_exceeded"
    kind = "conflict"


class LossLimitExceeded(DomainError):
    code = "loss_limit_exceeded"
    kind = "conflict"


class PlayerExcluded(DomainError):
    """A time-out or self-exclusion runs; the facts name its end."""

    code = "player_excluded"
    kind = "conflict"


class InvalidSignificantEvent(DomainError):
    code = "invalid_significant_event"


# Bonus money (rules.md 9).


class InvalidBonus(DomainError):
    code = "invalid_bonus"


class WageringAboveCap(DomainError):
    """A wagering multiple above CASINO_BONUS_WAGERING_MAX; the facts name the cap."""

    code = "wagering_above_cap"


class UnknownBonus(DomainError):
    code = "unknown_bonus"
    kind = "not_found"


class BonusEnded(DomainError):
    """The bonus was converted, forfeited or expired already."""

    code = "bonus_ended"
    kind = "conflict"


class BonusQueueFull(DomainError):
    code = "bonus_queue_full"
    kind = "conflict"


class BonusNotAllowed(DomainError):
    """A player-banked game takes cash only, and the cash does not cover the stake."""

    code = "bonus_not_allowed"
    kind = "conflict"


class BonusMaxBet(DomainError):
    """A single bet above the active bonus's maximum stake; the facts name it."""

    code = "bonus_max_bet"
    kind = "conflict"


class BonusSurebet(DomainError):
    """Seed 003: bets winning together more than 90% of the time, staked with more than
    half the bonus; the facts name the limit and the bonus staked."""

    code = "bonus_surebet"
    kind = "conflict"


# Third-party games (rules.md 10).


class UnknownProvider(DomainError):
    code = "unknown_provider"
    kind = "not_found"


class ProviderExists(DomainError):
    code = "provider_exists"
    kind = "conflict"


class InvalidProvider(DomainError):
    """A provider's registration or secrets out of their bounds."""

    code = "invalid_provider"


class InvalidToken(DomainError):
    """No game session of this provider has that token."""

    code = "invalid_token"
    kind = "unauthenticated"


class TokenExpired(DomainError):
    """The game session saw no call for its lifetime: a bet needs a live one."""

    code = "token_expired"
    kind = "unauthenticated"


class DuplicateTransaction(DomainError):
    """The provider's transaction id was used already, with another request."""

    code = "duplicate_transaction"
    kind = "conflict"


class TransactionRolledBack(DomainError):
    """A bet whose rollback arrived first: its tombstone refuses it."""

    code = "transaction_rolled_back"
    kind = "conflict"


class RoundClosed(DomainError):
    code = "round_closed"
    kind = "conflict"


class NoBetInRound(DomainError):
    """A win for a round in which the player placed no bet (api.md: 409 unknown_round)."""

    code = "unknown_round"
    kind = "conflict"


class RoundTransactionsExceeded(DomainError):
    """A provider's round takes at most TRANSACTIONS_PER_ROUND_MAX calls (rules.md 6)."""

    code = "round_transactions_exceeded"
    kind = "conflict"
