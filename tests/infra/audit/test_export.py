"""`casino audit export`: every event of a range, in order, as JSON lines or CSV, with the
secrets of rounds not over withheld, on both stores."""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from infra.audit.export import Export, ExportArgumentError, parse_time, selection, write
from infra.cli import app as cli
from infra.store.store import Store, open_store
from projections.round_trail import event_data
from tests.conftest import StoreFactory

UTC = datetime.UTC
# Box 1: 10H 2H (12); dealer 6S up, QD in the hole (16); the dealer then draws 3H.
BLACKJACK_SHOE = ["10H", "6S", "2H", "QD", "3H", "KC"]
PLAYER_WINS = ["9", "K", "K", "K"]


def house_round(store: Store, player: str = "alice") -> str:
    round_ = store.app.open_house_round(player, "real", PLAYER_WINS).result
    assert round_ is not None
    store.app.place_bet(round_.round_id, "player", 1000)
    store.app.deal(round_.round_id)
    return round_.round_id


def small_store(store: Store) -> None:
    app = store.app
    app.register_player("alice", "Alice")
    app.deposit("alice", "real", 50_000)
    house_round(store)
    app.withdraw("alice", "real", 1_234)


def blackjack_in_play(store: Store) -> str:
    round_ = store.app.open_blackjack_round("alice", "real", "2", BLACKJACK_SHOE).result
    assert round_ is not None
    store.app.place_bet(round_.round_id, "1", 1000)
    store.app.deal(round_.round_id)
    return round_.round_id


def notifications(store: Store) -> list[Any]:
    return list(store.app.recorder.select_notifications(start=1, limit=1_000_000))


def exported(store: Store, format_: str = "jsonl", **options: Any) -> list[dict[str, Any]]:
    return parse(export_text(store, format_, **options), format_)


def export_text(store: Store, format_: str = "jsonl", **options: Any) -> str:
    out = io.StringIO()
    write(Export(store, selection(**options)).records(), format_, out)
    return out.getvalue()


def parse(text: str, format_: str) -> list[dict[str, Any]]:
    if format_ == "jsonl":
        return [json.loads(line) for line in text.splitlines()]
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames or ()) == (
        "position",
        "aggregate_id",
        "version",
        "topic",
        "type",
        "timestamp",
        "data",
        "redacted",
        "sha256",
        "link",
    )
    return [
        {
            **row,
            "position": int(row["position"]),
            "version": int(row["version"]),
            "data": json.loads(row["data"]),
            "redacted": row["redacted"].split(),
            "sha256": row["sha256"] or None,
            "link": row["link"] or None,
        }
        for row in reader
    ]


def expected_record(store: Store, notification: Any) -> dict[str, Any]:
    event = store.app.mapper.to_domain_event(notification)
    data = event_data(event)
    return {
        "position": notification.id,
        "aggregate_id": str(event.originator_id),
        "version": event.originator_version,
        "topic": notification.topic,
        "type": notification.topic.rsplit(".", 1)[-1],
        "timestamp": event.timestamp.astimezone(UTC).isoformat(),
        "data": json.loads(json.dumps(data)),
        "redacted": [],
        "sha256": hashlib.sha256(bytes(notification.state)).hexdigest(),
    }


def without_links(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in record.items() if k != "link"} for record in records]


def chain(store: Store) -> dict[int, str]:
    """The event chain's stored links, position by position (written with each event)."""
    with store.database.read() as cursor:
        cursor.execute("SELECT position, link FROM event_chain")
        links = {int(row[0]): str(row[1]) for row in cursor.fetchall()}
    assert sorted(links) == [n.id for n in notifications(store)]
    return links


# What a record holds.


@pytest.mark.parametrize("format_", ["jsonl", "csv"])
def test_every_event_is_exported_in_order_with_its_fields(store: Store, format_: str) -> None:
    small_store(store)
    records = exported(store, format_)
    assert without_links(records) == [expected_record(store, n) for n in notifications(store)]
    assert [r["position"] for r in records] == list(range(1, len(records) + 1))
    deposit = next(r for r in records if r["type"] == "Deposited")
    assert deposit["data"]["amount_cents"] == 50_000  # Integer cents, as stored.
    assert deposit["data"]["postings"] == [["player:alice", 50_000], ["cashier", -50_000]]
    settled = next(r for r in records if r["topic"] == "casino:Coup.Settled")
    assert len(settled["data"]["seed"]) == 64  # The round is over: its seed is shown.


def test_jsonl_and_csv_hold_the_same_records(store: Store) -> None:
    small_store(store)
    chain(store)
    assert exported(store, "jsonl") == exported(store, "csv")


def test_each_link_is_the_chains_stored_link(store: Store) -> None:
    small_store(store)
    links = chain(store)
    records = exported(store)
    assert [r["link"] for r in records] == [links[r["position"]] for r in records]


def test_an_auditor_can_recompute_each_link_from_the_records(store: Store) -> None:
    small_store(store)
    previous = "0" * 64
    for record in exported(store, "csv"):
        fields = [str(record[k]) for k in ("aggregate_id", "version", "topic", "sha256")]
        previous = hashlib.sha256("|".join([previous, *fields]).encode()).hexdigest()
        assert record["link"] == previous


def test_an_empty_store_exports_nothing(store: Store) -> None:
    assert export_text(store, "jsonl") == ""
    assert parse(export_text(store, "csv"), "csv") == []


# Ranges.


def test_a_position_range_selects_exactly_those_positions(store: Store) -> None:
    small_store(store)
    head = len(notifications(store))
    assert [r["position"] for r in exported(store, from_position=3, to_position=7)] == [
        3,
        4,
        5,
        6,
        7,
    ]
    assert [r["position"] for r in exported(store, from_position=head)] == [head]
    assert exported(store, from_position=head + 1) == []
    assert [r["position"] for r in exported(store, to_position=2)] == [1, 2]


def test_exports_by_position_are_contiguous_and_stop_at_the_head_they_started_at(
    store: Store,
) -> None:
    small_store(store)
    first = Export(store, selection(to_position=5))
    rest = Export(store, selection(from_position=first.stop + 1))
    store.app.deposit("alice", "real", 700)  # Saved after the export began: left for the next.
    records = list(first.records()) + list(rest.records())
    everything = notifications(store)
    assert [r["position"] for r in records] == [n.id for n in everything[:-1]]
    later = Export(store, selection(from_position=rest.stop + 1))
    assert [r["position"] for r in later.records()] == [everything[-1].id]


def three_spells(store: Store) -> tuple[list[int], list[int], list[int]]:
    """Events in three spells 50 ms apart: positions of each spell."""
    spells = []
    for amount in (10_000, 20_000, 30_000):
        before = len(notifications(store))
        store.app.deposit("alice", "real", amount)
        house_round(store)
        spells.append([n.id for n in notifications(store)[before:]])
        time.sleep(0.05)
    return spells[0], spells[1], spells[2]


def timestamps(store: Store) -> dict[int, datetime.datetime]:
    to_event = store.app.mapper.to_domain_event
    return {n.id: to_event(n).timestamp for n in notifications(store)}


@pytest.mark.parametrize("format_", ["jsonl", "csv"])
def test_a_time_range_selects_exactly_the_events_of_those_times(store: Store, format_: str) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 50_000)
    _, middle, _ = three_spells(store)
    at = timestamps(store)
    since, until = min(at[p] for p in middle), max(at[p] for p in middle)
    records = exported(store, format_, since=since.isoformat(), until=until.isoformat())
    assert [r["position"] for r in records] == middle
    # Both ends are instants, included; a microsecond off leaves that event out.
    just_after = (since + datetime.timedelta(microseconds=1)).isoformat()
    just_before = (until - datetime.timedelta(microseconds=1)).isoformat()
    assert [r["position"] for r in exported(store, since=just_after, until=just_before)] == [
        p for p in middle if since < at[p] < until
    ]


def test_times_are_utc_and_an_offset_is_honoured(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    _, middle, _ = three_spells(store)
    at = timestamps(store)
    since, until = min(at[p] for p in middle), max(at[p] for p in middle)
    naive = since.astimezone(UTC).replace(tzinfo=None).isoformat()  # No offset: UTC.
    in_paris = until.astimezone(datetime.timezone(datetime.timedelta(hours=2))).isoformat()
    zulu = until.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"
    for end in (in_paris, zulu):
        assert [r["position"] for r in exported(store, since=naive, until=end)] == middle


def test_a_date_stands_for_the_whole_utc_day(store: Store) -> None:
    small_store(store)
    at = timestamps(store)
    first_day, last_day = min(at.values()).date(), max(at.values()).date()
    everything = [n.id for n in notifications(store)]
    positions = [
        r["position"]
        for r in exported(store, since=first_day.isoformat(), until=last_day.isoformat())
    ]
    assert positions == everything
    day_before = (first_day - datetime.timedelta(days=1)).isoformat()
    day_after = (last_day + datetime.timedelta(days=1)).isoformat()
    assert exported(store, until=day_before) == []
    assert exported(store, since=day_after) == []


def test_time_and_position_bounds_combine(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    _, middle, _ = three_spells(store)
    at = timestamps(store)
    since = min(at[p] for p in middle).isoformat()
    records = exported(store, since=since, to_position=middle[2])
    assert [r["position"] for r in records] == middle[:3]


def test_parse_time_reads_dates_and_instants_in_utc() -> None:
    assert parse_time("2024-05-01", "--from", end=False) == datetime.datetime(
        2024, 5, 1, tzinfo=UTC
    )
    assert parse_time("2024-05-01", "--to", end=True) == datetime.datetime(2024, 5, 2, tzinfo=UTC)
    assert parse_time("2024-05-01T12:00:00+02:00", "--from", end=False) == datetime.datetime(
        2024, 5, 1, 10, tzinfo=UTC
    )
    assert parse_time("2024-05-01T10:00Z", "--to", end=True) == datetime.datetime(
        2024, 5, 1, 10, 0, 0, 1, tzinfo=UTC
    )
    for bad in ("2024-13-01", "01/05/2024", "yesterday", "2024-05-01T25:00", "20240501"):
        with pytest.raises(ExportArgumentError, match="--from"):
            parse_time(bad, "--from", end=False)


# Secrets.


def unsealed_seed(store: Store, round_id: str) -> str:
    """The seed of a round still open, opened with the service's key as a deal would."""
    round_: Any = store.app.round(round_id)
    round_.unseal(store.commands.box)
    assert round_.seed is not None
    return str(round_.seed)


def test_an_open_rounds_secrets_stay_hidden_until_it_is_over(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.deposit("alice", "real", 50_000)
    baccarat = store.app.open_house_round("alice", "real").result
    assert baccarat is not None
    blackjack = blackjack_in_play(store)
    seeds = [unsealed_seed(store, r) for r in (baccarat.round_id, blackjack)]
    for format_ in ("jsonl", "csv"):
        text = export_text(store, format_)
        assert "QD" not in text  # The hole card, in its event and in the certification shoe.
        assert not any(seed in text for seed in seeds)
    records = {(r["aggregate_id"], r["type"]): r for r in exported(store)}
    for round_id in (baccarat.round_id, blackjack):
        opened = records[(round_id, "Opened")]
        assert opened["data"]["seed"] is None
        assert opened["data"]["shoe_prefix"] is None
        assert opened["redacted"] == ["seed", "shoe_prefix", "sealed_secrets"]
        assert opened["sha256"] is None and opened["link"] is None
    hole = records[(blackjack, "HoleCardDealt")]
    assert (hole["data"], hole["redacted"], hole["sha256"]) == (
        {"hole_card": None, "position": 3},
        ["hole_card"],
        None,
    )

    store.app.act(blackjack, 1, 0, "stand")
    store.app.place_bet(baccarat.round_id, "banker", 1000)
    store.app.deal(baccarat.round_id)
    records = {(r["aggregate_id"], r["type"]): r for r in exported(store)}
    hole = records[(blackjack, "HoleCardDealt")]  # stored face down: only its place
    assert (hole["data"], hole["redacted"]) == ({"hole_card": None, "position": 3}, [])
    turned = records[(blackjack, "HoleCardRevealed")]  # in the save that ended the round
    assert (turned["data"], turned["redacted"]) == ({"hole_card": "QD", "position": 3}, [])
    for round_id, seed in zip((baccarat.round_id, blackjack), seeds, strict=True):
        opened = records[(round_id, "Opened")]
        assert (opened["data"]["seed"], opened["redacted"]) == (None, [])  # stored sealed
        assert opened["sha256"] is not None
        settled = records[(round_id, "Settled")]  # the end reveals the seed, in clear
        assert (settled["data"]["seed"], settled["redacted"]) == (seed, [])
    assert records[(blackjack, "Settled")]["data"]["shoe_prefix"] == BLACKJACK_SHOE
    notified = {(str(n.originator_id), n.originator_version): n for n in notifications(store)}
    for record in records.values():
        stored = notified[(record["aggregate_id"], record["version"])]
        assert record == {**expected_record(store, stored), "link": record["link"]}


def test_chain_links_stop_at_the_first_event_of_a_round_not_over(store: Store) -> None:
    small_store(store)
    blackjack = blackjack_in_play(store)
    store.app.deposit("alice", "real", 999)
    links = chain(store)
    records = exported(store)
    opened_at = next(r["position"] for r in records if r["aggregate_id"] == blackjack)
    assert [r["link"] for r in records if r["position"] < opened_at] == [
        links[p] for p in range(1, opened_at)
    ]
    assert [r["link"] for r in records if r["position"] >= opened_at] == [None] * (
        len(records) - opened_at + 1
    )
    later = records[-1]  # Not the round's: its bytes are shown, only its link is not.
    assert later["type"] == "Deposited" and later["sha256"] is not None

    store.app.act(blackjack, 1, 0, "stand")
    links = chain(store)
    assert [r["link"] for r in exported(store)] == [links[p] for p in sorted(links)]


# The command line.


def cli_env(stores: StoreFactory) -> dict[str, str]:
    return {
        "CASINO_DATABASE_URL": stores.url,
        "CASINO_POSTGRES_SCHEMA": stores.schema,
        "PATH": "/usr/bin",
    }


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--from", "2024-02-30"], "--from '2024-02-30' is not a date"),
        (["--to", "soon"], "--to 'soon' is not a date"),
        (["--from", "2024-05-02", "--to", "2024-05-01"], "--from 2024-05-02 is after --to"),
        (["--from", "2024-05-01T12:00:01", "--to", "2024-05-01T12:00"], "is after --to"),
        (["--from-position", "9", "--to-position", "3"], "--from-position 9 is after"),
        (["--from-position", "0"], "--from-position must be a position of 1 or more"),
        (["--format", "xml"], "unknown format 'xml': use jsonl or csv"),
        (["--to-position", "many"], "Invalid value for '--to-position'"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    url = f"sqlite:///{tmp_path / 'casino.sqlite'}"
    result = CliRunner().invoke(
        cli, ["audit", "export", *arguments], env={"CASINO_DATABASE_URL": url}
    )
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "casino.sqlite").exists()  # Refused before the store is opened.


def test_an_unwritable_output_exits_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'casino.sqlite'}"
    open_store(url).close()  # a store there: export only reads, it would make none
    result = CliRunner().invoke(
        cli,
        ["audit", "export", "--output", str(tmp_path / "no" / "such" / "dir.jsonl")],
        env={"CASINO_DATABASE_URL": url},
    )
    assert result.exit_code == 2
    assert "cannot write" in result.output


def test_the_command_writes_csv_to_a_file(stores: StoreFactory, tmp_path: Path) -> None:
    store = stores.open()
    small_store(store)
    expected = [expected_record(store, n) for n in notifications(store)]
    stores.close(store)
    target = tmp_path / "export.csv"
    result = subprocess.run(
        [sys.executable, "-m", "infra.cli", "audit", "export", "--format", "csv", "-o", target],
        env=cli_env(stores),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert without_links(parse(target.read_text(), "csv")) == expected
    assert f"exported {len(expected)} events to {target}" in result.stderr
    assert f"next export: --from-position {len(expected) + 1}" in result.stderr
    assert not target.with_name("export.csv.partial").exists()


def test_the_command_writes_json_lines_to_stdout(stores: StoreFactory, tmp_path: Path) -> None:
    store = stores.open()
    small_store(store)
    blackjack_in_play(store)
    stores.close(store)
    result = subprocess.run(
        [sys.executable, "-m", "infra.cli", "audit", "export", "--from-position", "2"],
        env=cli_env(stores),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    records = parse(result.stdout, "jsonl")
    assert records[0]["position"] == 2
    assert '"QD"' not in result.stdout  # the hole card (a sealed seed's text may hold QD)
    assert "2 events of rounds not over have their secrets withheld" in result.stderr


def test_the_command_refuses_a_bad_date_in_its_own_process(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "infra.cli", "audit", "export", "--to", "2024-5-1"],
        env={"CASINO_DATABASE_URL": f"sqlite:///{tmp_path / 'casino.sqlite'}", "PATH": "/usr/bin"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "--to '2024-5-1' is not a date YYYY-MM-DD or an ISO timestamp" in result.stderr
    assert result.stdout == ""


def test_the_batch_size_changes_nothing(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    small_store(store)
    blackjack_in_play(store)  # Not over: asked of the store, its end in no batch.
    house_round(store)  # Over, its end read in a later batch than its start.
    chain(store)
    whole = exported(store)
    monkeypatch.setattr("infra.audit.export.BATCH", 3)
    assert exported(store) == whole
    assert exported(store, "csv", from_position=4, to_position=20) == whole[3:20]


def test_significant_events_are_exported_with_the_rest_of_the_log(store: Store) -> None:
    store.app.register_player("alice", "Alice")
    store.app.set_limits("alice", {"loss:week": 5_000})
    store.app.record_significant("seal_failed", {"detail": "witness unreachable"})
    records = [r for r in exported(store, "jsonl") if r["type"] == "Recorded"]
    assert [(r["topic"], r["data"]["kind"]) for r in records] == [
        ("casino:SignificantEvent.Recorded", "limit_changed"),
        ("casino:SignificantEvent.Recorded", "seal_failed"),
    ]
    assert records[0]["data"]["details"]["limits"]["loss:week"]["cents"] == 5_000
    assert all(r["sha256"] and r["link"] for r in records)  # chained like every event
