"""The group committer (infra/store/group_commit.py) on a stand-in store: what it gathers,
what it refuses, and who hears about a failure."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import IntegrityError, OperationalError, StoredEvent

from domain.ids import receipt_uuid
from infra.commands.receipt import ReceiptRecord
from infra.store.group_commit import CommitterClosed, GroupCommit, GroupCommitSettings

SECONDS = 5  # how long a test waits for an answer before calling it lost


def event(aggregate: UUID, version: int = 1) -> StoredEvent:
    return StoredEvent(aggregate, version, "test:Event", b"{}")


class Store:
    """Numbers events as a log does; holds the first transaction until released, so
    the saves queued meanwhile are gathered together."""

    def __init__(self, refuse: set[UUID] | None = None, fail: bool = False) -> None:
        self.transactions: list[list[StoredEvent]] = []
        self.receipts: list[list[ReceiptRecord]] = []
        self.refuse = refuse or set()  # aggregates another process changed first
        self.fail = fail
        self.first_started = threading.Event()
        self.release = threading.Event()
        self._position = 0

    def insert(self, stored: list[StoredEvent], receipts: list[ReceiptRecord]) -> Sequence[int]:
        if not self.transactions and not self.first_started.is_set():
            self.first_started.set()
            self.release.wait(SECONDS)
        if self.fail:
            raise OperationalError("server closed the connection unexpectedly")
        if any(stored_event.originator_id in self.refuse for stored_event in stored):
            raise IntegrityError("duplicate key value violates unique constraint")
        self.transactions.append(stored)
        self.receipts.append(receipts)
        ids = list(range(self._position + 1, self._position + len(stored) + 1))
        self._position += len(stored)
        return ids


def committer(store: Store, batch_max: int = 64) -> GroupCommit:
    return GroupCommit(store.insert, GroupCommitSettings(wait_seconds=0.001, batch_max=batch_max))


def receipt(key: str) -> ReceiptRecord:
    return ReceiptRecord(receipt_uuid(key), key, "fingerprint", {"id": key}, 0)


def queued_behind_a_first_save(
    store: Store,
    commit: GroupCommit,
    saves: list[list[StoredEvent]],
    receipts: list[list[ReceiptRecord]] | None = None,
) -> list[Future[list[int]]]:
    """A first save holds the store; the given saves (with their `receipts`, if
    given) queue meanwhile; then it goes on."""
    first = commit.save([event(uuid4())], [], lambda: None)
    assert store.first_started.wait(SECONDS)
    receipts = receipts or [[] for _ in saves]
    answers = [
        commit.save(stored, taken, lambda: None)
        for stored, taken in zip(saves, receipts, strict=True)
    ]
    store.release.set()
    first.result(SECONDS)
    return answers


def test_saves_waiting_together_share_one_transaction_each_with_its_own_positions() -> None:
    store = Store()
    commit = committer(store)
    saves = [[event(uuid4()), event(uuid4())] for _ in range(10)]
    answers = queued_behind_a_first_save(store, commit, saves)
    ids = [answer.result(SECONDS) for answer in answers]
    assert len(store.transactions) == 2  # the first alone, then the ten that waited
    assert len(store.transactions[1]) == 20
    assert ids == [[2 + 2 * n, 3 + 2 * n] for n in range(10)]
    assert (commit.counts.transactions, commit.counts.saves) == (2, 11)
    commit.close()


def test_a_batch_takes_at_most_batch_max_saves() -> None:
    store = Store()
    commit = committer(store, batch_max=4)
    answers = queued_behind_a_first_save(store, commit, [[event(uuid4())] for _ in range(10)])
    for answer in answers:
        answer.result(SECONDS)
    assert [len(stored) for stored in store.transactions] == [1, 4, 4, 2]
    commit.close()


def test_the_later_of_two_saves_of_one_aggregate_in_a_batch_is_refused_after_the_commit() -> None:
    store = Store()
    commit = committer(store)
    shared = uuid4()
    earlier, later, other = queued_behind_a_first_save(
        store, commit, [[event(shared, 2)], [event(shared, 2)], [event(uuid4())]]
    )
    assert earlier.result(SECONDS) and other.result(SECONDS)
    with pytest.raises(IntegrityError):
        later.result(SECONDS)
    assert len(store.transactions[1]) == 2  # the earlier and the other, together
    assert commit.counts.conflicts_in_batch == 1
    commit.close()


def test_a_receipt_key_taken_twice_in_a_batch_refuses_the_later_save() -> None:
    # One request sent twice at once: two commands, one key. Only one may land.
    store = Store()
    commit = committer(store)
    earlier, later, other = queued_behind_a_first_save(
        store,
        commit,
        [[event(uuid4())], [event(uuid4())], [event(uuid4())]],
        [[receipt("k1")], [receipt("k1")], [receipt("k2")]],
    )
    assert earlier.result(SECONDS) and other.result(SECONDS)
    with pytest.raises(IntegrityError):
        later.result(SECONDS)
    assert [r.scoped_key for r in store.receipts[1]] == ["k1", "k2"]  # saved with their events
    commit.close()


def test_a_conflict_with_another_process_is_charged_to_its_own_save_alone() -> None:
    changed_elsewhere = uuid4()
    store = Store(refuse={changed_elsewhere})
    commit = committer(store)
    fine, conflicting, also_fine = queued_behind_a_first_save(
        store, commit, [[event(uuid4())], [event(changed_elsewhere)], [event(uuid4())]]
    )
    assert fine.result(SECONDS) == [2]
    assert also_fine.result(SECONDS) == [3]
    with pytest.raises(IntegrityError):
        conflicting.result(SECONDS)
    assert commit.counts.fallbacks == 1
    commit.close()


def test_a_lost_connection_fails_every_save_of_its_batch() -> None:
    store = Store(fail=True)
    commit = committer(store)
    store.release.set()
    answers = [commit.save([event(uuid4())], [], lambda: None) for _ in range(3)]
    for answer in answers:
        with pytest.raises(OperationalError):
            answer.result(SECONDS)
    assert store.transactions == []
    commit.close()


def test_a_saved_command_is_cached_before_its_answer_and_before_the_next_batch() -> None:
    store = Store()
    commit = committer(store)
    store.release.set()
    seen: list[str] = []
    first = commit.save([event(uuid4())], [], lambda: seen.append("cached"))
    first.add_done_callback(lambda _: seen.append("answered"))
    first.result(SECONDS)
    commit.save([event(uuid4())], [], lambda: seen.append("next cached")).result(SECONDS)
    assert seen == ["cached", "answered", "next cached"]
    commit.close()


def test_a_save_its_waiter_gave_up_on_is_written_whole_or_not_at_all_and_the_rest_go_on() -> None:
    """A waiter may cancel its future (an asyncio task awaiting it through
    wrap_future is cancelled with it). Queued still, the save is dropped; taken into a
    batch, it can no longer be cancelled and is answered as any other: either way the
    committer answers every other save, then and after."""
    store = Store()
    commit = committer(store)
    first = commit.save([event(uuid4())], [], lambda: None)
    assert store.first_started.wait(SECONDS)  # taken: the store holds it
    queued_id = uuid4()
    queued = commit.save([event(queued_id)], [], lambda: None)
    beside = commit.save([event(uuid4())], [], lambda: None)
    assert not first.cancel()
    assert queued.cancel()
    store.release.set()
    assert first.result(SECONDS) == [1]
    assert beside.result(SECONDS) == [2]
    assert commit.save([event(uuid4())], [], lambda: None).result(SECONDS) == [3]
    assert queued_id not in {e.originator_id for saved in store.transactions for e in saved}
    commit.close()


@pytest.mark.parametrize(("wait", "batch"), [(-0.001, 1), (0.051, 1), (0.0, 0), (0.0, 1001)])
def test_the_knobs_are_bounded(wait: float, batch: int) -> None:
    with pytest.raises(ValueError):
        GroupCommitSettings(wait_seconds=wait, batch_max=batch)


def test_a_batch_that_fails_after_its_commit_does_not_stop_the_committer() -> None:
    store = Store()
    store.release.set()  # nothing held back
    commit = committer(store)

    def broken() -> None:
        raise RuntimeError("the cache refused it")

    landed = commit.save([event(uuid4())], [], broken)
    assert landed.result(SECONDS) == [1]  # it is stored: its command hears so
    assert commit.save([event(uuid4())], [], lambda: None).result(SECONDS) == [2]
    commit.close()


def test_saves_queued_before_a_close_are_written_and_a_later_one_is_refused_at_once() -> None:
    store = Store()
    commit = committer(store)
    first = commit.save([event(uuid4())], [], lambda: None)
    assert store.first_started.wait(SECONDS)
    queued = commit.save([event(uuid4())], [], lambda: None)
    closing = threading.Thread(target=commit.close)
    closing.start()
    store.release.set()
    closing.join(SECONDS)
    assert (first.result(SECONDS), queued.result(SECONDS)) == ([1], [2])
    late = commit.save([event(uuid4())], [], lambda: None)
    with pytest.raises(CommitterClosed):
        late.result(SECONDS)
    assert len(store.transactions) == 2  # the late save was never written
    commit.close()  # a second close is harmless
