"""Player protection (rules.md 7): deposit and loss limits on rolling windows, time-outs
and self-exclusion, kept in one `Protection` aggregate per player.

The aggregate exists once a player has set a limit or been excluded. What it counts
comes from the wallets' own events: `guard` (domain/protection_guard.py) reads what
a command is about to save, refuses it when it would pass a limit or break an
exclusion, and records it here in the same atomic save. So two concurrent deposits
both change this aggregate, and the store's optimistic-concurrency check makes the
later one decide again on the earlier one's record.

Times are ISO 8601 strings in UTC, taken from the application's clock outside every
event body and stored in the events.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain import protection_record as record_of
from domain.copying import FastCopy
from domain.errors import (
    DepositLimitExceeded,
    DomainError,
    InvalidLimit,
    LossLimitExceeded,
    PlayerExcluded,
    UnknownPeriod,
)
from domain.ids import MODES, check_player_id, protection_uuid
from domain.money import BALANCE_CENTS_MAX, format_cents
from domain.protection_record import Entries
from domain.significant import stamp as _iso
from domain.unit import Unit
from domain.wallet import load_wallet

DAY = datetime.timedelta(days=1)
# The rolling windows of every limit (rules.md 7): a day, a week, a month of 30 days.
PERIODS = {"day": DAY, "week": 7 * DAY, "month": 30 * DAY}
# The record keeps at least as long as the longest window.
assert max(PERIODS.values()) <= record_of.RECORD_SPAN
LIMIT_KINDS = ("deposit", "loss")
COOLING_OFF = DAY  # a raised (or removed) limit takes effect after this
# A time-out lasts whole days, 24 hours to 6 weeks; a self-exclusion calendar months:
# 6 months, 1, 2 or 5 years (rules.md 7).
TIME_OUT = "time_out"
SELF_EXCLUSION = "self_exclusion"
TIME_OUT_DAYS = range(1, 43)
SELF_EXCLUSION_MONTHS = (6, 12, 24, 60)
PAST_EXCLUSIONS_MAX = 100  # the latest kept on the aggregate; the log keeps them all
R = TypeVar("R", bound=DomainError)


@dataclass
class Activity:
    """What one save does to a player's protection, read off the wallets' events."""

    player_id: str
    deposit_cents: int = 0  # real money deposited
    stakes: dict[str, int] = field(default_factory=dict)  # round id -> real cents staked
    released: dict[str, int] = field(default_factory=dict)  # round id -> stake given back
    settled: dict[str, int] = field(default_factory=dict)  # round id -> loss (a win < 0)
    # Exposure that is not a stake: a P2P dealer's hold, a bank put up (either mode).
    exposure: bool = False
    banks: bool = False  # a bank put up (real money): refused once a loss limit is passed
    plays: bool = False  # a deposit, stake or sitting down in either mode
    where: str = ""  # what the player tried, for a refusal's detail
    unprotected: bool = False  # a wallet of theirs in the save says they have no protection

    @property
    def records(self) -> bool:
        return bool(self.deposit_cents or self.stakes or self.released or self.settled)


class Protection(FastCopy, Aggregate):
    TOPIC = "casino:Protection"

    class Created(Aggregate.Created):
        TOPIC = "casino:Protection.Created"
        player_id: str

    @staticmethod
    def create_id(player_id: str) -> UUID:
        return protection_uuid(player_id)

    @event(Created)
    def __init__(self, player_id: str) -> None:
        self.player_id = player_id
        self.limits: dict[str, int] = {}  # "deposit:day" -> cents, as in effect
        self.pending: dict[str, list[Any]] = {}  # a raise waiting: [cents or None, from (ISO)]
        self.deposits: Entries = []
        self.losses: Entries = []  # realized: stakes lost minus returns, a win negative
        self.exposure: dict[str, int] = {}  # round id -> real stake not yet settled
        self.exclusion: dict[str, str] | None = None  # the latest, until the worker ends it
        self.past_exclusions: list[dict[str, str]] = []  # ended ones, oldest first

    # Read side: every reading takes `now`, so a pending raise or an ended exclusion
    # shows as it is at that moment, whether or not an event has said so yet.

    def limit_at(self, key: str, now: datetime.datetime) -> int | None:
        pending = self.pending.get(key)
        if pending is not None and _time(pending[1]) <= now:
            return pending[0]  # type: ignore[no-any-return]
        return self.limits.get(key)

    def used_cents(self, key: str, now: datetime.datetime) -> int:
        kind, period = key.split(":")
        if kind == "deposit":
            return record_of.window_sum(self.deposits, now, PERIODS[period])
        return record_of.window_sum(self.losses, now, PERIODS[period]) + sum(self.exposure.values())

    def resets_at(self, key: str, now: datetime.datetime) -> datetime.datetime | None:
        """When the oldest amount counted in the window leaves it."""
        kind, period = key.split(":")
        entries = self.deposits if kind == "deposit" else self.losses
        since = _iso(now - PERIODS[period])
        counted = [at for at, cents in record_of.pairs(entries) if at > since and cents > 0]
        return _time(min(counted)) + PERIODS[period] if counted else None

    def excluded_until(self, now: datetime.datetime) -> datetime.datetime | None:
        if self.exclusion is None or _time(self.exclusion["until"]) <= now:
            return None
        return _time(self.exclusion["until"])

    # Commands.

    def set_limit(self, key: str, cents: int | None, now: datetime.datetime) -> str:
        """Lower at once, raise (or remove) after the cooling-off; returns when it
        takes effect. A later raise within the cooling-off replaces the pending one."""
        check_limit_key(key)
        check_limit_cents(cents)
        current = self.limit_at(key, now)
        if cents == current and key not in self.pending:
            return _iso(now)  # as it is already: nothing to record
        lowers = cents is not None and (current is None or cents <= current)
        effective = now if lowers else now + COOLING_OFF
        self._limit_set(key, cents, _iso(effective), _iso(now))
        return _iso(effective)

    def exclude(self, kind: str, length: int, now: datetime.datetime) -> dict[str, str]:
        """Exclude from now: a time-out of `length` days, a self-exclusion of `length`
        months. Not while one runs: it cannot be changed or lifted early."""
        check_exclusion(kind, length)  # what is asked first, then whether it may be
        ends = self.excluded_until(now)
        if ends is not None:
            raise PlayerExcluded(
                f"player {self.player_id} is excluded until {_iso(ends)}: "
                "an exclusion cannot be changed or lifted early",
                until=_iso(ends),
            )
        end = exclusion_end(kind, length, now)
        period = f"P{length}D" if kind == TIME_OUT else f"P{length}M"  # ISO 8601 durations
        self._excluded(self.player_id, kind, period, _iso(now), _iso(end))
        assert self.exclusion is not None
        return self.exclusion

    def past(self, now: datetime.datetime) -> list[dict[str, str]]:
        """Exclusions over by now, oldest first: one past its end counts even before
        the worker has ended it."""
        over = self.exclusion is not None and self.excluded_until(now) is None
        return [*self.past_exclusions, *([self.exclusion] if over and self.exclusion else [])]

    def end_exclusion(self, now: datetime.datetime) -> bool:
        """The worker's: end an exclusion that is due; says whether it did."""
        if self.exclusion is None or self.excluded_until(now) is not None:
            return False
        self._exclusion_ended(self.player_id, self.exclusion["until"])
        return True

    def check(self, activity: Activity, now: datetime.datetime) -> None:
        """Refuse what the save would do, should it break an exclusion or pass a limit."""
        ends = self.excluded_until(now)
        if ends is not None and (activity.plays or activity.exposure):
            raise PlayerExcluded(
                f"player {self.player_id} is excluded until {_iso(ends)}: cannot {activity.where}",
                until=_iso(ends),
            )
        if activity.deposit_cents:
            self._check_limits("deposit", activity.deposit_cents, now)
        staked = sum(activity.stakes.values())
        if staked:
            self._check_limits("loss", staked, now)
        elif activity.banks:
            # A bank is no stake, but once what they lost has passed a limit they may
            # put up no other, so a bank takes them past it once at most.
            self._check_limits("loss", 0, now)

    def record(self, activity: Activity, now: datetime.datetime) -> None:
        if activity.records:
            self._recorded(
                _iso(now),
                activity.deposit_cents,
                activity.stakes,
                activity.released,
                activity.settled,
            )

    def dealing_problem(
        self, activity: Activity | None, now: datetime.datetime
    ) -> LossLimitExceeded | None:
        """Why the player may open no new round as a P2P dealer, or None: what they have
        lost in a window (realized, with what the save at hand settles, `activity`, not
        yet recorded) has passed a loss limit. Their hold is exposure and never counts."""
        settling = sum(activity.settled.values()) if activity is not None else 0
        for period, length in PERIODS.items():
            key = f"loss:{period}"
            limit = self.limit_at(key, now)
            lost = record_of.window_sum(self.losses, now, length) + settling
            if limit is not None and lost > limit:
                detail = (
                    f"{self.player_id} has lost {format_cents(lost)} within the {period}, past "
                    f"the loss limit per {period} of {format_cents(limit)}: a dealer past a "
                    "loss limit is dealt no new round"
                )
                # A loss this save settles counts from now: the window is (now - period, now].
                resets = self.resets_at(key, now) or (now + length if settling > 0 else None)
                return refusal_of(LossLimitExceeded, detail, key, (limit, 0), resets)
        return None

    def _check_limits(self, kind: str, cents: int, now: datetime.datetime) -> None:
        for period in PERIODS:
            key = f"{kind}:{period}"
            limit = self.limit_at(key, now)
            if limit is None:
                continue
            used = self.used_cents(key, now)
            left = max(0, limit - used)
            if cents > left or used > limit:  # the second: a bank put up
                refusal = DepositLimitExceeded if kind == "deposit" else LossLimitExceeded
                what = format_cents(cents) if cents else "a bank"
                detail = (
                    f"{what} would pass the {kind} limit per {period} of "
                    f"{format_cents(limit)}: {format_cents(left)} left"
                )
                raise refusal_of(refusal, detail, key, (limit, left), self.resets_at(key, now))

    # Events: the bodies re-run on every replay, so they only assign.

    @event("LimitSet", topic="casino:Protection.LimitSet")
    def _limit_set(self, key: str, cents: int | None, effective_at: str, at: str) -> None:
        self._mature(at)
        if effective_at <= at:
            self.pending.pop(key, None)
            _put(self.limits, key, cents)
        else:
            self.pending[key] = [cents, effective_at]

    @event("Excluded", topic="casino:Protection.Excluded")
    def _excluded(
        self, player_id: str, kind: str, period: str, started_at: str, ends_at: str
    ) -> None:
        # Each event names its player, for the read model the ending worker reads.
        if self.exclusion is not None:  # over, though the worker had not ended it yet
            self._keep_past(self.exclusion)
        self.exclusion = {
            "kind": kind,
            "period": period,
            "from": started_at,
            "until": ends_at,
        }

    @event("ExclusionEnded", topic="casino:Protection.ExclusionEnded")
    def _exclusion_ended(self, player_id: str, ended_at: str) -> None:
        assert self.exclusion is not None
        self._keep_past(self.exclusion)
        self.exclusion = None

    def _keep_past(self, exclusion: dict[str, str]) -> None:
        self.past_exclusions = [*self.past_exclusions, exclusion][-PAST_EXCLUSIONS_MAX:]

    @event("Recorded", topic="casino:Protection.Recorded")
    def _recorded(
        self,
        at: str,
        deposit_cents: int,
        stakes: dict[str, int],
        released: dict[str, int],
        settled: dict[str, int],
    ) -> None:
        for round_id, cents in stakes.items():
            self.exposure[round_id] = self.exposure.get(round_id, 0) + cents
        for round_id, cents in released.items():
            _reduce(self.exposure, round_id, cents)
        for round_id in settled:
            self.exposure.pop(round_id, None)
        loss = sum(settled.values())
        record_of.record(self.deposits, at, deposit_cents)
        record_of.record(self.losses, at, loss)

    def _mature(self, at: str) -> None:
        """Pending raises whose cooling-off is over by `at` take effect."""
        for key, (cents, effective_at) in list(self.pending.items()):
            if effective_at <= at:
                del self.pending[key]
                _put(self.limits, key, cents)


def refusal_of(
    refusal: type[R],
    detail: str,
    key: str,
    limit_and_left_cents: tuple[int, int],
    resets: datetime.datetime | None,
) -> R:
    """A limit's refusal, with the facts every one names (rules.md 7): the limit, its
    period, what is left of it and when it resets."""
    limit, left = limit_and_left_cents
    return refusal(
        detail,
        limit=format_cents(limit),
        period=key.split(":")[1],
        remaining=format_cents(left),
        resets_at=_iso(resets) if resets is not None else None,
    )


def protection_of(unit: Unit, player_id: str) -> Protection:
    """The player's protection, opened in the unit if they have none yet, and both
    their wallets marked: a command racing this one on a wallet then conflicts with
    it, and decides again with the protection in force."""
    check_player_id(player_id)
    found = unit.find(Protection, protection_uuid(player_id))
    if found is None:
        found = Protection(player_id)
        unit.add(found)
        for mode in MODES:
            load_wallet(unit, player_id, mode).protect()
    return found


def find_protection(unit: Unit, player_id: str) -> Protection | None:
    return unit.find(Protection, protection_uuid(player_id))


def check_limit_key(key: str) -> None:
    kind, _, period = key.partition(":")
    if kind not in LIMIT_KINDS or period not in PERIODS:
        raise UnknownPeriod(
            f"limit {key[:40]!r} is not one of: "
            + ", ".join(f"{k}:{p}" for k in LIMIT_KINDS for p in PERIODS)
        )


def check_limit_cents(cents: int | None) -> None:
    if cents is not None and not 0 <= cents <= BALANCE_CENTS_MAX:
        raise InvalidLimit(
            f"a limit is between 0.00 and {format_cents(BALANCE_CENTS_MAX)}, "
            "the balance ceiling (rules.md 6)"
        )


def check_exclusion(kind: str, length: int) -> None:
    """An exclusion's kind and length as rules.md 7 lists them; anything else refused."""
    listed = TIME_OUT_DAYS if kind == TIME_OUT else SELF_EXCLUSION_MONTHS
    if kind not in (TIME_OUT, SELF_EXCLUSION) or length not in listed:
        raise UnknownPeriod(
            f"{kind[:20]} of {length}: a time_out lasts 1-42 days, "
            "a self_exclusion 6, 12, 24 or 60 months"
        )


def exclusion_end(kind: str, length: int, start: datetime.datetime) -> datetime.datetime:
    """When an exclusion from `start` ends; an unlisted kind or length is refused."""
    check_exclusion(kind, length)
    return start + length * DAY if kind == TIME_OUT else add_months(start, length)


def add_months(moment: datetime.datetime, months: int) -> datetime.datetime:
    """The same day and time `months` later; past the month's end, its last day."""
    month_index = moment.month - 1 + months
    year, month = moment.year + month_index // 12, month_index % 12 + 1
    for day in range(moment.day, 27, -1):
        try:
            return moment.replace(year=year, month=month, day=day)
        except ValueError:
            continue
    return moment.replace(year=year, month=month)


def _reduce(amounts: dict[str, int], key: str, cents: int) -> None:
    remaining = amounts.get(key, 0) - cents
    if remaining > 0:
        amounts[key] = remaining
    else:
        amounts.pop(key, None)


def _put(limits: dict[str, int], key: str, cents: int | None) -> None:
    if cents is None:
        limits.pop(key, None)
    else:
        limits[key] = cents


def _time(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)
