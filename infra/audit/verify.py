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
(infra/audit/decoding.py); every check takes it from that pass.

On a long log the rebuild aside runs in a process of its own, fed the pages this
pass reads (infra/audit/aside_process.py): the two halves of the work on two cores.

It holds per player (wallets, books) and per round not over, never the whole log:
a finished round is checked, then forgotten, as are command receipts (one event
each). A later event of a forgotten aggregate then shows as one that does not
start at version 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from infra.audit.acknowledged import Acknowledgment, acknowledgments
from infra.audit.aside_process import PROCESS_EVENTS_MIN, AsideProcess, RebuildFailed, cores
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
from infra.audit.pages import events_of, log_pages
from infra.audit.rebuild import Aside, fewer_collections
from infra.audit.receipt_check import Retention, check_receipts
from infra.audit.round_check import EVERY_ROUND, RoundCheck, RoundResults
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


def verify(
    store: Store,
    round_id: str | None,
    progress: Callable[[int], None],
    anchors: Mapping[int, str] | None = None,
    public_key: Ed25519PublicKey | None = None,
    witness: Witness | Path | None = None,
    processes: bool = True,
    witness_key: Ed25519PublicKey | None = None,
) -> AuditReport:
    """Check the whole store (and every round, or only `round_id`); `anchors` are
    chain links noted earlier, by position, that must still be what they were;
    `public_key` checks every seal's signature; `witness` holds checkpoints
    (infra/checkpoints/), each of which the store must still hold, signed with
    `witness_key` (default `public_key`). With `processes`, a long log's rebuild
    aside runs in a process of its own (infra/audit/aside_process.py)."""
    if isinstance(witness, Path):
        witness = open_witness(witness)
    checked = _WitnessToCheck(witness, witness_key) if witness else None
    with fewer_collections():
        return _verify(store, round_id, progress, anchors or {}, public_key, checked, processes)


@dataclass(frozen=True)
class _WitnessToCheck:
    witness: Witness
    key: Ed25519PublicKey | None


def _verify(
    store: Store,
    round_id: str | None,
    progress: Callable[[int], None],
    anchors: Mapping[int, str],
    public_key: Ed25519PublicKey | None,
    witness: _WitnessToCheck | None,
    processes: bool,
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
    sealing = SealCheck(stored_seals(store), public_key, acks)
    chain = ChainCheck(anchors, hidden_from, acks)
    versions = VersionCheck()
    books = BookCheck()
    banks = BankCheck()
    unreadable = Problems("unreadable events")
    decode = EventDecoder(store.app.mapper).decode
    # The read models' rebuild aside is fed from this same pass: the log is read once.
    with _aside(store, progress, round_id, up_to, processes) as rebuilt:
        # An aside in a process of its own checks a share of the rounds too.
        share = rebuilt.rounds_here() if isinstance(rebuilt, AsideProcess) else EVERY_ROUND
        rounds = RoundCheck(round_id, versions, books.wallets, share)
        pages = log_pages(store, up_to)
        if isinstance(rebuilt, AsideProcess):  # It decodes and applies each page itself.
            pages = rebuilt.sending(pages)
        aside = rebuilt if isinstance(rebuilt, Aside) else None  # fed event by event here
        for position, notification, row in side_by_side(
            events_of(pages, progress), chain_rows(store, up_to)
        ):
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
                    f"event at position {position} ({name_of(notification)}) cannot be read: "
                    f"{error!r}"
                )
                if aside is not None:
                    aside.stop()
                continue
            if aside is not None:
                aside.add(position, event)
            books.add(position, event)
            banks.add(event)
            rounds.add(position, event)
            if notification.topic in ONE_EVENT_AGGREGATES:
                versions.forget(notification.aggregate)
                report.receipts += 1
        found_here = rounds.finish()
        report.problems += (
            _outside_the_log(store)
            + chain.finish()
            + sealing.finish(sealed_store_expected=public_key is not None)
            + versions.problems.all()
            + unreadable.all()
            + books.finish(store, up_to)
            + banks.finish()
        )
        report.seals, report.notes = sealing.count, sealing.notes
        if round_id is not None:
            report.rounds = found_here.checked
            report.problems += found_here.problems()
            if found_here.checked == 0:
                report.problems.append(f"no round {round_id} in the store")
            return report
        # These first: meanwhile a rebuild in another process compares (its answer
        # is listed first all the same).
        # Signed by a key of the chain the seals followed from the pinned key.
        keys = sealing.keys.all if sealing.keys is not None else None
        outside = _outside_problems(store, report, keys, witness)
        wallets = books.wallet_problems(store, up_to)
        receipts = check_receipts(store.database, up_to, _retention(store))
        read_models = _read_model_problems(rebuilt)  # the other process's rounds come with it
        found, unchecked = _all_rounds(found_here, rounds.left, rebuilt)
        report.rounds = found.checked
        report.problems += found.problems() + unchecked + read_models + outside + wallets
        report.receipts += receipts.receipts
        report.problems += receipts.problems.all()
    return report


def _all_rounds(
    here: RoundResults, left: int, rebuilt: Aside | AsideProcess | None
) -> tuple[RoundResults, list[str]]:
    """The round checks of this process and of the aside's (when it has one),
    merged. The aside's rounds are named unchecked when it sent no round checks,
    and its count must be the rounds this process left to it. (An aside that never
    started left none: `AsideProcess.rounds_here` kept every round here.)"""
    if not isinstance(rebuilt, AsideProcess):
        return here, []
    there = rebuilt.rounds
    if there is None:
        if not left:
            return here, []
        rounds = "1 round" if left == 1 else f"{left} rounds"
        return here, [
            f"{rounds} left to the rebuild's process not checked: it sent back no round checks"
        ]
    unlike = [] if there.checked == left else [
        f"the rebuild's process checked {there.checked} rounds, {left} were left to it"
    ]  # fmt: skip
    return here.merged(there), unlike


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


def _outside_problems(
    store: Store,
    report: AuditReport,
    keys: seals.Keys | None,
    witness: _WitnessToCheck | None,
) -> list[str]:
    """What else could move money or lie about it: snapshots, and the witness's view
    (its checkpoints signed with the witness key given, else by a key of the chain)."""
    report.snapshots, problems = snapshot_problems(store, keys)
    if witness is not None:
        found = check_witness(store, witness.witness, witness.key or keys)
        report.witness_checkpoints = found.checkpoints + found.legacy
        report.notes += found.notes
        problems += found.problems
    return problems


def _retention(store: Store) -> Retention:
    """The service's retention of answers, and now by its clock."""
    now_ms = int(store.app.clock().timestamp() * 1000)
    return Retention(store.commands.receipt_retention_days, now_ms)


def _aside(
    store: Store,
    progress: Callable[[int], None],
    round_id: str | None,
    up_to: int,
    processes: bool,
) -> AbstractContextManager[Aside | AsideProcess | None]:
    """The rebuild aside the read models are compared with: none when only one round
    is checked; in a process of its own when the log is long enough to gain by it,
    and there is a second core to run it."""
    if round_id is not None:
        return nullcontext()
    if processes and up_to >= PROCESS_EVENTS_MIN and cores() > 1:
        return AsideProcess(store)
    return Aside(store, progress)


def _read_model_problems(aside: Aside | AsideProcess | None) -> list[str]:
    """The live read models against a rebuild from the events, made aside."""
    assert aside is not None
    try:
        found = aside.compare().differences
    except RebuildFailed as failed:  # The other process's error, named as here.
        return [f"the read models could not be rebuilt to compare: {failed}"]
    except Exception as error:  # Events it cannot read are named above already.
        return [f"the read models could not be rebuilt to compare: {error!r}"]
    return [f"the read model {difference} (live against a rebuild)" for difference in found]
