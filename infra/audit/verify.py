"""`casino audit verify` and `casino audit replay`: the auditor's view of the store.

`verify` reads the log once, in order, a batch at a time, beside the event chain,
and checks as it goes:

- the seals (infra/store/seal.py, infra/audit/seal_check.py): each save's seal
  covers exactly the events at its positions, follows the seal before it, and,
  with a public key, is signed by the service's key; with a witness (a file or a
  JetStream stream: infra/checkpoints/check.py), its checkpoints count up without a
  gap, each chained to the one before and signed, and each is still a seal of the
  store;
- the operators' acknowledgments (infra/audit/acknowledged.py): each is named, and
  what the seals and the chain show in the range it acknowledged is reported with
  it rather than as a discrepancy;
- the snapshots (infra/audit/snapshot_check.py): each aggregate's latest equals
  a replay of its events, and is signed;
- the receipts (infra/audit/receipt_check.py): each save's are the ones its seal
  names, and one not yet pruned holds the answer it was given; receipts of older
  stores are events (one each), which the chain and the seals cover;
- the chain (infra/event_chain.py): every position holds the event the chain
  recorded there, each event still matches its link, no event lacks a link, no
  link lacks its event; the head (and any link noted earlier) is recomputed;
- every aggregate's versions run 1, 2, 3, ... in log order (chain_check.py:
  VersionCheck);
- the books (infra/audit/book_check.py): each mode's postings total zero and the
  trial-balance read model agrees with them; every wallet replays to its read models;
- every round (infra/audit/round_check.py), once it is over and its wallets' entries
  are in (they are saved with its last event, or before): cards, outcome, payouts,
  commission, what each wallet posted, dealer points.

Each event is read once (infra/audit/pages.py) and decoded once
(infra/audit/decoding.py), in this one process; every check, and the rebuild aside
the read models are compared with, takes it from that pass.

It holds per player (wallets, books) and per round not over, never the whole log:
a finished round is checked, then forgotten, as are command receipts (one event
each). A later event of a forgotten aggregate then shows as one that does not
start at version 1.

Incremental (`since`, infra/audit/resume.py): from the state a verify that found
everything holding wrote, it checks that its anchor still holds and reads only the
events after it, every check taken up where that verify left it. What it cannot
see is listed in its report (`unseen`); a full verify stays the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from infra.audit import resume
from infra.audit.acknowledged import Acknowledgment, Acknowledgments, acknowledgments
from infra.audit.bank_check import BankCheck
from infra.audit.book_check import BookCheck
from infra.audit.chain_check import (
    ChainCheck,
    Problems,
    VersionCheck,
    chain_rows,
    name_of,
    side_by_side,
)
from infra.audit.decoding import EventDecoder
from infra.audit.pages import events_at, events_of, log_pages
from infra.audit.rebuild import Aside, fewer_collections
from infra.audit.receipt_check import Retention, check_receipts
from infra.audit.resume import VerifyState
from infra.audit.round_check import RoundCheck
from infra.audit.seal_check import SealCheck, seal_head, stored_seals
from infra.audit.snapshot_check import snapshot_problems
from infra.checkpoints.check import check_witness
from infra.checkpoints.witnesses import Witness, open_witness
from infra.commands.receipt import CommandReceipt
from infra.store import chain as event_chain
from infra.store import seal as seals
from infra.store.schema import log_table
from infra.store.store import Store

OUTSIDE_LISTED_MAX = 100
ONE_EVENT_AGGREGATES = frozenset((CommandReceipt.Created.TOPIC,))


@dataclass
class AuditReport:
    events: int = 0
    rounds: int = 0
    head_position: int = 0
    head_link: str = event_chain.GENESIS
    hidden_from: int | None = None  # Where links start to depend on a hidden card.
    seals: int = 0
    receipts: int = 0  # command receipts (answers replayed for a repeated key), all kinds
    snapshots: int = 0
    witness_checkpoints: int = 0
    # The operators' acknowledgments of tails found changed (infra/audit/acknowledged.py),
    # each with what verify found in its range: not discrepancies.
    acknowledged: list[Acknowledgment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    since: int | None = None  # incremental: the position it took up from
    unseen: list[str] = field(default_factory=list)  # incremental: what it cannot see
    # What the next incremental verify resumes from: a whole store's verify that
    # found everything holding.
    state: VerifyState | None = None


def verify(
    store: Store,
    round_id: str | None,
    progress: Callable[[int], None],
    anchors: Mapping[int, str] | None = None,
    public_key: Ed25519PublicKey | None = None,
    witness: Witness | Path | None = None,
    witness_key: Ed25519PublicKey | None = None,
    since: VerifyState | None = None,
) -> AuditReport:
    """Check the whole store (and every round, or only `round_id`); `anchors` are
    chain links noted earlier, by position, that must still be what they were;
    `public_key` checks every seal's signature; `witness` holds checkpoints
    (infra/checkpoints/), each of which the store must still hold, signed with
    `witness_key` (default `public_key`). With `since`, only what was added after
    that state (infra/audit/resume.py), once its anchor still holds; StateRefused
    if the state is not one of this log."""
    if isinstance(witness, Path):
        witness = open_witness(witness)
    checked = _WitnessToCheck(witness, witness_key) if witness else None
    with fewer_collections():
        return _verify(store, round_id, progress, anchors or {}, public_key, checked, since)


@dataclass(frozen=True)
class _WitnessToCheck:
    witness: Witness
    key: Ed25519PublicKey | None


@dataclass
class _Checks:
    """What the pass carries along the log: fresh for a full verify, taken up from a
    state for an incremental one."""

    chain: ChainCheck
    sealing: SealCheck
    versions: VersionCheck
    books: BookCheck
    banks: BankCheck
    rounds: RoundCheck
    after: int = 0  # the position the pass reads after
    wallets: dict[Any, Any] | None = None  # the state's replayed wallets (incremental)
    open_positions: list[int] = field(default_factory=list)  # as the pass left them
    due: dict[str, int] = field(default_factory=dict)  # every aggregate's next version


def _fresh(
    store: Store,
    round_id: str | None,
    anchors: Mapping[int, str],
    public_key: Ed25519PublicKey | None,
    hidden_from: int | None,
    acks: Acknowledgments,
) -> _Checks:
    versions, books = VersionCheck(), BookCheck()
    return _Checks(
        ChainCheck(anchors, hidden_from, acks),
        SealCheck(stored_seals(store), public_key, acks),
        versions,
        books,
        BankCheck(),
        RoundCheck(round_id, versions, books.wallets),
    )


def _taken_up(
    store: Store,
    state: VerifyState,
    anchors: Mapping[int, str],
    public_key: Ed25519PublicKey | None,
    hidden_from: int | None,
    acks: Acknowledgments,
) -> tuple[_Checks | None, list[str]]:
    """The checks as the state left them, once its anchor still holds; else None and
    what no longer holds."""
    row, problems = resume.anchor(store, state)
    seal, unsealed = resume.last_seal(store, state)
    if row is None or unsealed:
        return None, problems + unsealed
    chain = ChainCheck(anchors, hidden_from, acks)
    chain.recomputed, chain.head_position, chain.last = state.link, state.position, row
    after = seal.last_position if seal is not None else 0
    sealing = SealCheck(stored_seals(store, after=after), public_key, acks)
    sealing.previous, sealing.keys = seal, resume.keys_of(state.keys, public_key)
    versions, books, banks = _totals(state)
    rounds, changed = _open_rounds(store, state, versions, books)
    if rounds is None:
        return None, changed
    checks = _Checks(chain, sealing, versions, books, banks, rounds, state.position)
    checks.wallets = resume.wallets_of(store, state)
    return checks, []


def _totals(state: VerifyState) -> tuple[VersionCheck, BookCheck, BankCheck]:
    """The versions, books and banks as the state left them."""
    versions, books, banks = VersionCheck(), BookCheck(), BankCheck()
    versions.due = dict(state.versions)
    books.wallets.update(
        {UUID(wallet): (mark.player_id, mark.mode) for wallet, mark in state.wallets.items()}
    )
    books.books = {mode: dict(accounts) for mode, accounts in state.books.items()}
    banks.owners = {UUID(wallet): player for wallet, player in state.bank_owners.items()}
    banks.banks = dict(state.banks)
    banks.held = {(table, player): cents for table, player, cents in state.held}
    return versions, books, banks


def _open_rounds(
    store: Store, state: VerifyState, versions: VersionCheck, books: BookCheck
) -> tuple[RoundCheck | None, list[str]]:
    """The rounds still open at the anchor, their events read again by position; None
    and why if they are no longer all there, or cannot be read."""
    rounds = RoundCheck(None, versions, books.wallets)
    decode = EventDecoder(store.app.mapper).decode
    found = events_at(store, state.open_positions)
    try:
        for event in found:
            rounds.add(event.id, decode(*event[:5]))
    except Exception as error:
        found = []
        why = f"an event of a round open at it cannot be read: {error!r}"
    else:
        why = "events of the rounds open at it were removed"
    if len(found) != len(state.open_positions):
        return None, [f"the anchor does not hold at position {state.position}: {why}"]
    return rounds, []


def _verify(
    store: Store,
    round_id: str | None,
    progress: Callable[[int], None],
    anchors: Mapping[int, str],
    public_key: Ed25519PublicKey | None,
    witness: _WitnessToCheck | None,
    since: VerifyState | None,
) -> AuditReport:
    report = AuditReport()
    try:
        store.projector.catch_up()  # The books are compared with the read models.
    except Exception as error:  # An event it cannot read: named below, with its position.
        report.problems.append(f"the read models cannot take in every event: {error}")
    # Events commit in position order, each with its link: up to here, both are final.
    # (The chain's own head counts too: an event removed from the end leaves its link.)
    with store.database.read() as cursor:
        chain_head = event_chain.head_position(cursor)
        hidden_from = report.hidden_from = event_chain.first_hidden_position(cursor)
    up_to = max(chain_head, store.projector.head(), seal_head(store))
    acks = acknowledgments(store, public_key)  # known before the log is read: see there
    report.acknowledged = acks.all
    if since is None:
        checks = _fresh(store, round_id, anchors, public_key, hidden_from, acks)
    else:
        report.since, report.unseen = since.position, list(resume.UNSEEN)
        taken_up, broken = _taken_up(store, since, anchors, public_key, hidden_from, acks)
        if taken_up is None:
            report.problems += broken
            return report
        checks = taken_up
    with _aside(store, progress, round_id, since) as aside:
        _pass(store, report, checks, aside, up_to, progress)
        _finish(store, report, checks, aside, round_id, up_to, public_key, witness)
    if not report.problems and round_id is None and up_to >= checks.after:
        report.state = _state(store, checks, up_to, since)
    return report


def _pass(
    store: Store,
    report: AuditReport,
    checks: _Checks,
    aside: Aside | None,
    up_to: int,
    progress: Callable[[int], None],
) -> None:
    """The log after `checks.after`, read once, each event to every check."""
    chain, sealing, versions = checks.chain, checks.sealing, checks.versions
    hidden_from, unreadable = report.hidden_from, Problems("unreadable events")
    decode = EventDecoder(store.app.mapper).decode
    events = events_of(log_pages(store, up_to, checks.after), progress)
    for position, notification, row in side_by_side(events, chain_rows(store, up_to, checks.after)):
        chain.check(position, notification, row)
        if notification is not None:
            sealing.add(position, notification)
        if hidden_from is None or position < hidden_from:
            report.head_position, report.head_link = chain.head_position, chain.recomputed
        if notification is None:
            continue
        report.events += 1
        versions.check(position, notification)
        try:
            event = decode(position, *notification[1:5])
        except Exception as error:
            unreadable.add(
                f"event at position {position} ({name_of(notification)}) cannot be read: {error!r}"
            )
            if aside is not None:
                aside.stop()
            continue
        if aside is not None:
            aside.add(position, event)
        checks.books.add(position, event)
        checks.banks.add(event)
        checks.rounds.add(position, event)
        if notification.topic in ONE_EVENT_AGGREGATES:
            versions.forget(notification.aggregate)
            report.receipts += 1
    report.problems += unreadable.all()


def _finish(
    store: Store,
    report: AuditReport,
    checks: _Checks,
    aside: Aside | None,
    round_id: str | None,
    up_to: int,
    public_key: Ed25519PublicKey | None,
    witness: _WitnessToCheck | None,
) -> None:
    """What the pass found, and the checks made once it is over."""
    # Carried across to the next verify as the pass left them, before the rounds
    # still open are checked as they stand (and forgotten).
    checks.open_positions = checks.rounds.open_positions()
    checks.due = dict(checks.versions.due)
    found = checks.rounds.finish()
    report.rounds = found.checked
    report.problems += (
        _outside_the_log(store)
        + checks.chain.finish()
        # (A state's last seal counts: an incremental verify may read no new seal.)
        + checks.sealing.finish(
            sealed_store_expected=public_key is not None and checks.sealing.previous is None
        )
        + checks.versions.problems.all()
        + checks.books.finish(store, up_to)
        + checks.banks.finish()
        + found.problems()
    )
    report.seals, report.notes = checks.sealing.count, checks.sealing.notes
    if round_id is not None:
        if found.checked == 0:
            report.problems.append(f"no round {round_id} in the store")
        return
    # Signed by a key of the chain the seals followed from the pinned key.
    keys = checks.sealing.keys.all if checks.sealing.keys is not None else None
    if checks.after == 0:
        report.problems += _snapshot_problems(store, report, keys)
    report.problems += _witness_problems(store, report, keys, witness)
    wallets, replayed = checks.books.wallet_problems(store, up_to, checks.versions, checks.wallets)
    checks.wallets = {**(checks.wallets or {}), **replayed}
    receipts = check_receipts(store.database, up_to, _retention(store), checks.after)
    report.problems += wallets + receipts.problems.all()
    if aside is not None:
        report.problems += _read_model_problems(aside)
    report.receipts += receipts.receipts


def _state(store: Store, checks: _Checks, up_to: int, since: VerifyState | None) -> VerifyState:
    """What the next incremental verify takes up from: where this one stopped."""
    if up_to == checks.after and since is not None:
        return since  # nothing was added
    assert checks.wallets is not None
    wallets = checks.books.wallets
    return VerifyState(
        format=resume.FORMAT,
        version=resume.VERSION,
        first_link=resume.first_link(store),
        position=checks.chain.head_position,
        link=checks.chain.recomputed,
        seal=resume.seal_mark(checks.sealing.previous),
        keys=resume.keys_mark(checks.sealing.keys),
        versions=checks.due,
        wallets={
            str(wallet): resume.wallet_mark(store, wallets[wallet], replayed)
            for wallet, replayed in checks.wallets.items()
        },
        books=checks.books.books,
        bank_owners={str(wallet): player for wallet, player in checks.banks.owners.items()},
        banks=checks.banks.banks,
        held=resume.tuples(checks.banks.held),
        open_positions=checks.open_positions,
    )


def _outside_the_log(store: Store) -> list[str]:
    """Events or links at positions the log never gives (below 1). Every check reads
    the log from position 1 on, but an aggregate loads its events by id whatever
    their position: such an event would be acted on and seen by nothing else."""
    events, position = log_table(store.database.dialect)
    problems = Problems("positions below 1")
    with store.database.read() as cursor:
        cursor.execute(
            f"SELECT {position}, originator_id, originator_version FROM {events}"
            f" WHERE {position} < 1 ORDER BY {position} LIMIT ?",
            (OUTSIDE_LISTED_MAX,),
        )
        for row in cursor.fetchall():
            problems.add(
                f"event at position {row[0]} ({_uuid_text(row[1])} version {row[2]}) is "
                "below the log's first position: it was inserted behind the store's back"
            )
        cursor.execute(f"SELECT COUNT(*) FROM {event_chain.TABLE} WHERE position < 1")
        found = cursor.fetchone()
    links = int(found[0]) if found else 0
    if links:
        problems.add(f"{links} links of the event chain stand below position 1: forged")
    return problems.all()


def _uuid_text(stored_id: Any) -> str:
    try:
        return str(UUID(str(stored_id)))
    except ValueError:
        return repr(stored_id)


def _snapshot_problems(store: Store, report: AuditReport, keys: seals.Keys | None) -> list[str]:
    """What else could move money or lie about it: the snapshots."""
    report.snapshots, problems = snapshot_problems(store, keys)
    return problems


def _witness_problems(
    store: Store,
    report: AuditReport,
    keys: seals.Keys | None,
    witness: _WitnessToCheck | None,
) -> list[str]:
    """The witness's view: its checkpoints signed with the witness key given, else by
    a key of the chain."""
    if witness is None:
        return []
    found = check_witness(store, witness.witness, witness.key or keys)
    report.witness_checkpoints = found.checkpoints + found.legacy
    report.notes += found.notes
    return found.problems


def _retention(store: Store) -> Retention:
    """The service's retention of answers, and now by its clock."""
    now_ms = int(store.app.clock().timestamp() * 1000)
    return Retention(store.commands.receipt_retention_days, now_ms)


@contextmanager
def _aside(
    store: Store,
    progress: Callable[[int], None],
    round_id: str | None,
    since: VerifyState | None,
) -> Iterator[Aside | None]:
    """The rebuild aside the read models are compared with, fed by the pass: none when
    only one round is checked, nor in an incremental verify (a rebuild reads the
    whole log)."""
    if round_id is not None or since is not None:
        yield None
        return
    with Aside(store, progress) as aside:
        yield aside


def _read_model_problems(aside: Aside) -> list[str]:
    """The live read models against a rebuild from the events, made aside."""
    try:
        found = aside.compare().differences
    except Exception as error:  # Events it cannot read are named above already.
        return [f"the read models could not be rebuilt to compare: {error!r}"]
    return [f"the read model {difference} (live against a rebuild)" for difference in found]
