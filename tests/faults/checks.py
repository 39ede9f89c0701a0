"""What must hold once a fault is over (issue 36): every acknowledged command is in the
log exactly once, and once in the read models; the balances are what the answers
said; the trial balance totals zero; `casino audit verify` passes; readiness is back.
"""

from __future__ import annotations

import collections
import contextlib
import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.faults.load import Client, Command, Tally, cents
from tests.infra.store.test_crash_recovery import CASINO

OPERATOR = {"Authorization": "Bearer dev-operator"}
MOVEMENTS = {"casino:Wallet.Deposited", "casino:Wallet.Withdrawn"}
READ_SECONDS_MAX = 15.0  # a read model that is behind may answer 503 for a while
READY_SECONDS_MAX = 15.0  # RULES.md 8: ready again "within seconds" of the fault's end
READY_ANSWER_SECONDS_MAX = 1.5  # RULES.md 8: within a second, with slack for the machine
PROBE_SECONDS = 0.2
VERIFY_SECONDS_MAX = 180
LOG_LINE_SHOWN = 300


class Reader:
    """An operator reading over HTTP, waiting out a 503 as a polite client would."""

    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=base, headers=OPERATOR, timeout=30)

    def close(self) -> None:
        self.http.close()

    def get(self, path: str) -> Any:
        deadline = time.monotonic() + READ_SECONDS_MAX
        while True:
            with contextlib.suppress(httpx.TransportError):
                response = self.http.get(path)
                if response.status_code == 200:
                    return response.json()
                if response.status_code != 503:
                    raise AssertionError(f"GET {path}: {response.status_code} {response.text}")
            if time.monotonic() > deadline:
                raise AssertionError(f"GET {path}: no answer but 503 in {READ_SECONDS_MAX} s")
            time.sleep(PROBE_SECONDS)

    def log_movements(self) -> collections.Counter[str]:
        """How often each transaction id is in the log (the feed reads the log itself,
        not a read model)."""
        seen: collections.Counter[str] = collections.Counter()
        after = 0
        while True:
            page = self.get(f"/v1/events?after={after}&limit=1000")
            for event in page["events"]:
                if event["topic"] in MOVEMENTS:
                    seen[event["data"]["transaction_id"]] += 1
            if page["next_after"] == after:
                return seen
            after = page["next_after"]

    def ledger(self, player: str) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        after = 0
        while True:
            page = self.get(f"/v1/players/{player}/ledger?mode=real&limit=500&after={after}")
            entries += page["entries"]
            if page["next_after"] is None:
                return entries
            after = page["next_after"]


@dataclass
class Books:
    """The log and the read models against what the answers said."""

    lost: list[str] = field(default_factory=list)
    doubled: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def check_books(reader: Reader, tally: Tally, players: list[str]) -> Books:
    books = Books()
    acknowledged = tally.acknowledged()
    movements = {c.answer["transaction_id"]: c for c in acknowledged if _moves(c)}
    in_log = reader.log_movements()
    books.lost += [f"{movements[t].describe()} not in the log" for t in movements if not in_log[t]]
    books.doubled += [f"{t} in the log {n} times" for t, n in in_log.items() if n > 1]
    # Every command got its answer before this check: a movement no answer names is a
    # command applied twice (a retry that did not find its first landing).
    books.doubled += [f"{t} in the log, in no answer" for t in in_log if t not in movements]
    for player in players:
        mine = [c for c in acknowledged if c.player == player]
        books.problems += _ledger_problems(reader.ledger(player), mine, player)
        books.problems += _balance_problems(reader, player, mine)
    trial = reader.get("/v1/reports/trial-balance?mode=real")
    if trial["total"] != "0.00":
        books.problems.append(f"the trial balance totals {trial['total']}: {trial}")
    return books


def _moves(command: Command) -> bool:
    return command.kind in ("deposit", "withdrawal")


def _ledger_problems(entries: list[dict[str, Any]], mine: list[Command], player: str) -> list[str]:
    """The ledger holds each acknowledged movement and each dealt round once, and runs
    entry by entry to its balance."""
    seen: collections.Counter[str] = collections.Counter()
    running, problems = 0, []
    for entry in entries:
        running += cents(entry["amount"])
        if cents(entry["balance_after"]) != running:
            problems.append(f"{player}'s ledger does not run: {entry}")
        seen[entry.get("transaction_id") or entry["round_id"]] += 1
    ids = [_ledger_id(command) for command in mine]
    wanted = collections.Counter(id_ for id_ in ids if id_ is not None)
    if seen != wanted:
        problems.append(f"{player}'s ledger: {sorted((seen - wanted) + (wanted - seen))} differ")
    return problems


def _ledger_id(command: Command) -> str | None:
    if _moves(command):
        return str(command.answer["transaction_id"])
    if command.kind == "deal" and command.answer["status"] == "settled":
        return str(command.answer["round_id"])
    return None


def _balance_problems(reader: Reader, player: str, mine: list[Command]) -> list[str]:
    """The balance is what the answers add up to."""
    expected = 0
    for command in mine:
        if _moves(command):
            sign = 1 if command.kind == "deposit" else -1
            expected += sign * cents(command.body["amount"] if command.body else "0")
        elif command.kind == "deal" and command.answer["status"] == "settled":
            expected += cents(command.answer["net"]["player"])
    wallet = reader.get(f"/v1/players/{player}/wallets/real")
    if cents(wallet["balance"]) != expected:
        return [f"{player}'s balance is {wallet['balance']}, the answers say {expected} cents"]
    return []


def settle(client: Client, tally: Tally, seconds: float) -> list[str]:
    """Send again every command left without an answer, or answered 500, with its key:
    either it landed (the retry is a replay) or it did not (the retry applies it).
    Named: each that still gets no answer."""
    client.give_up_at = time.monotonic() + seconds
    left = [c for c in tally.commands if c.status is None or c.status >= 500]
    return [c.describe() for c in left if not client.send(c)]


@dataclass
class Verdict:
    exit_code: int
    output: str


def audit_verify(env: dict[str, str], workdir: Path) -> Verdict:
    result = subprocess.run(
        [*CASINO, "audit", "verify", "--json"],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=VERIFY_SECONDS_MAX,
        check=False,
    )
    output = result.stdout
    with contextlib.suppress(ValueError):
        output = json.dumps(json.loads(result.stdout)["discrepancies"])
    return Verdict(result.returncode, f"{output}{result.stderr}"[-2000:])


def summarise_log(path: Path, kinds_max: int = 12) -> tuple[int, list[str]]:
    """How many lines the server logged (warnings and errors: its log level), and the
    commonest kinds, each with its count and its first line."""
    counts: collections.Counter[str] = collections.Counter()
    first: dict[str, str] = {}
    lines = path.read_text(errors="replace").splitlines() if path.exists() else []
    for line in lines:
        if line.startswith("--- start"):  # written by the test's Server, not the server
            continue
        counts[kind := _kind(line)] += 1
        first.setdefault(kind, line[:LOG_LINE_SHOWN])
    kinds = [f"{n} x {kind}: {first[kind]}" for kind, n in counts.most_common(kinds_max)]
    return counts.total(), kinds


def _kind(line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return re.sub(r"\d+", "N", line[:60])
    # Addresses and numbers vary from one line to the next of the same kind.
    event = re.sub(r"0x[0-9a-f]+|\d+", "N", str(record.get("event")))[:80]
    return f"{record.get('level')} {record.get('logger')} {event}"


def seconds_until_ready(base: str, seconds_max: float = READY_SECONDS_MAX) -> float | None:
    """Seconds until readiness answers 200; None if it does not within `seconds_max`."""
    started = time.monotonic()
    with httpx.Client(base_url=base, timeout=2) as http:
        while time.monotonic() - started < seconds_max:
            with contextlib.suppress(httpx.TransportError):
                if http.get("/v1/health/ready").status_code == 200:
                    return time.monotonic() - started
            time.sleep(PROBE_SECONDS / 2)
    return None


class ReadinessProbe:
    """Asks readiness over and over while a fault lasts: what it said, and how fast."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.answers: list[tuple[str, float]] = []  # status (or error), seconds
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ReadinessProbe:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=30)

    def _run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=5) as http:
            while not self.stopping.is_set():
                started = time.monotonic()
                try:
                    said = str(http.get("/v1/health/ready").status_code)
                except httpx.TransportError as error:
                    said = type(error).__name__
                self.answers.append((said, time.monotonic() - started))
                self.stopping.wait(PROBE_SECONDS)

    def slowest(self) -> float:
        return max((seconds for _, seconds in self.answers), default=0.0)

    def said(self) -> collections.Counter[str]:
        return collections.Counter(status for status, _ in self.answers)
